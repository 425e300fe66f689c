"""Shared fixtures: the repository's scenarios, the CLI binary when it is built, a two-worker Dask cluster."""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parents[2]
SCENARIOS = ROOT / "scenarios"


@pytest.fixture(scope="session")
def short_scenario() -> dict[str, Any]:
    """credit-weights, cut to 1.5 s simulated so a run takes milliseconds."""
    sc: dict[str, Any] = json.loads((SCENARIOS / "credit-weights.json").read_text())
    sc["duration_ms"] = 1500
    return sc


@pytest.fixture(scope="session")
def cli() -> Path:
    """The release `schedsim` binary (`npm run build:cli`, or $SCHEDSIM_CLI); tests that need it skip without it,
    unless SCHEDSIM_REQUIRE_CLI is set (as `npm test` does), where a missing binary fails them."""
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "sim-wasm" / "target")
    if not target.is_absolute():
        target = ROOT / "sim-wasm" / target
    binary = Path(os.environ.get("SCHEDSIM_CLI") or target / "release" / "schedsim")
    if not binary.is_file():
        if os.environ.get("SCHEDSIM_REQUIRE_CLI"):
            pytest.fail(f"{binary} is missing: run `npm run build:cli` first")
        pytest.skip(f"{binary} is not built (npm run build:cli)")
    return binary


@pytest.fixture(scope="session")
def dask_client() -> Iterator[Any]:
    """A LocalCluster of two single-threaded worker processes."""
    distributed = pytest.importorskip("distributed")
    cluster = distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        dashboard_address=None,
        silence_logs=logging.ERROR,
    )
    client = distributed.Client(cluster)
    yield client
    client.close()
    cluster.close()
