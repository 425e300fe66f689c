"""A scenario as the simulator reads it: a path, a JSON string or a dict, turned into JSON text, plus its content
hash (what the sweep cache keys results by)."""

from __future__ import annotations

import hashlib
import json
import os
import stat
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
        return _read_limited(scenario)
    raise TypeError(f"scenario: expected a path, a JSON string or a dict, not {type(scenario).__name__}")


def _read_limited(path: str | os.PathLike[str]) -> str:
    """A scenario file read as the CLI reads it: a regular file only (a FIFO or device would block or never end)
    and no larger than the scenario limit, checked before reading and while reading."""
    limit: int = _core.MAX_SCENARIO_BYTES
    # Looked at before opening: opening a FIFO blocks until someone writes to it.
    st = os.stat(path)
    if not stat.S_ISREG(st.st_mode):
        raise ValueError(f"{os.fspath(path)}: not a regular file (a scenario is read from a file)")
    if st.st_size > limit:
        raise ValueError(f"{os.fspath(path)}: larger than the limit of {limit} bytes for a scenario file")
    with open(path, "rb") as f:
        data = f.read(limit + 1)
    if len(data) > limit:
        raise ValueError(f"{os.fspath(path)}: larger than the limit of {limit} bytes for a scenario file")
    try:
        # utf-8-sig: a byte order mark (as some Windows editors save) is skipped, as the CLI skips it.
        return data.decode("utf-8-sig")
    except UnicodeDecodeError as e:
        raise ValueError(f"{os.fspath(path)}: not UTF-8 text: {e}") from None


def content_hash(text: str) -> str:
    """SHA-256 of the scenario's content: the same for the same JSON whatever its spacing or key order."""
    canonical = json.dumps(json.loads(text), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()
