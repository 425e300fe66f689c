"""What a worker process or Dask worker runs: one chunk of sweep points. It imports only the simulator, so workers
start fast."""

from __future__ import annotations

import json
from typing import Any

from . import _core


def run_chunk(
    scenario: str, paths: list[str], items: list[list[Any]], duration_ms: int | None, max_events: int | None = None
) -> list[dict[str, Any]]:
    """Runs ``items`` (``[values, seed, policy]`` each) and returns each run's metrics as ``{dotted path: number}``;
    a run that reaches ``max_events`` events raises ``ValueError``."""
    metrics: list[dict[str, Any]] = json.loads(
        _core.run_points(scenario, paths, json.dumps(items), duration_ms, max_events)
    )
    return metrics
