"""A scenario as the simulator reads it: a path, a JSON string or a dict, turned into JSON text, plus its content
hash (what the sweep cache keys results by)."""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Mapping
from typing import Any, Union

from . import _core

Scenario = Union[str, "os.PathLike[str]", dict[str, Any]]


def scenario_json(scenario: Scenario, scripts: Mapping[str, str] | None = None) -> str:
    """JSON text of a scenario given as a dict, a JSON string (starting with ``{``) or a file path.

    ``scripts`` maps policy ids to Rhai sources (DESIGN.md section 10): each such policy runs that script
    (``"scheduler": "script"``), replacing its source, or is added when the scenario has no policy of that id, as
    ``schedsim run --script ID=PATH`` does.
    """
    text = _scenario_text(scenario)
    if scripts:
        if not isinstance(scripts, Mapping) or not all(isinstance(v, str) for v in scripts.values()):
            raise TypeError("scripts: expected a mapping of policy ids to script sources (str)")
        text = _core.attach_scripts(text, [(str(k), v) for k, v in scripts.items()])
    return text


def _scenario_text(scenario: Scenario) -> str:
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
