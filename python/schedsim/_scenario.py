"""A scenario as the simulator reads it: a path, a JSON string or a dict, turned into JSON text, plus its content
hash (what the sweep cache keys results by)."""

from __future__ import annotations

import hashlib
import json
import os
from typing import Any, Union

Scenario = Union[str, "os.PathLike[str]", dict[str, Any]]


def scenario_json(scenario: Scenario) -> str:
    """JSON text of a scenario given as a dict, a JSON string (starting with ``{``) or a file path."""
    if isinstance(scenario, dict):
        return json.dumps(scenario)
    if isinstance(scenario, str) and scenario.lstrip().startswith("{"):
        return scenario
    if isinstance(scenario, (str, os.PathLike)):
        with open(scenario, encoding="utf-8") as f:
            return f.read()
    raise TypeError(f"scenario: expected a path, a JSON string or a dict, not {type(scenario).__name__}")


def content_hash(text: str) -> str:
    """SHA-256 of the scenario's content: the same for the same JSON whatever its spacing or key order."""
    canonical = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
