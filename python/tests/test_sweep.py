"""sweep: the same rows on a Dask cluster as in local processes, a cache that makes a re-run free, grid errors that
name their combination and field."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

import schedsim
from schedsim import _sweep

GRID = {"domains.heavy.weight": [256, 1024], "host.pcpus": [1, 2]}


def test_rows_come_in_grid_order_with_values_seed_policy_and_metrics(short_scenario: dict[str, Any]) -> None:
    df = schedsim.sweep(short_scenario, GRID, seeds=2, cache=False, workers=2, progress=False)
    assert len(df) == 4 * 2 * 2
    assert list(df.columns[:4]) == ["domains.heavy.weight", "host.pcpus", "seed", "policy"]
    assert df["domains.heavy.weight"].tolist()[:4] == [256] * 4
    assert df["host.pcpus"].tolist()[:8] == [1, 1, 1, 1, 2, 2, 2, 2]
    assert df["seed"].tolist()[:4] == [1, 1, 2, 2]
    assert df["policy"].tolist()[:2] == ["credit", "credit-1ms"]
    assert df.attrs["simulated"] == 16 and df.attrs["cached"] == 0
    # The heavier domain gets more CPU, and two CPUs give it more than one.
    share = df.groupby(["host.pcpus", "domains.heavy.weight"])["domains.heavy.cpu_share"].mean()
    assert share[(1, 1024)] > share[(1, 256)]
    assert "wall_ms" not in df.columns and "fairness.jain" in df.columns


def test_a_dask_cluster_gives_the_local_rows(short_scenario: dict[str, Any], dask_client: Any) -> None:
    local = schedsim.sweep(short_scenario, GRID, seeds=3, cache=False, workers=2, progress=False)
    distributed = schedsim.sweep(short_scenario, GRID, seeds=3, client=dask_client, cache=False, progress=False)
    pd.testing.assert_frame_equal(local, distributed)
    # Small chunks (more tasks than workers) change nothing either.
    small = schedsim.sweep(short_scenario, GRID, seeds=3, client=dask_client, cache=False, chunksize=5, progress=False)
    pd.testing.assert_frame_equal(local, small)


def test_a_second_run_hits_the_cache_and_simulates_nothing(
    short_scenario: dict[str, Any], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = schedsim.sweep(short_scenario, GRID, seeds=2, cache=tmp_path, workers=2, progress=False)
    assert first.attrs["simulated"] == 16
    assert list(tmp_path.rglob("part-*.parquet"))

    def no_runs(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError("the cache should have answered every run")

    monkeypatch.setattr(_sweep, "_run_locally", no_runs)
    second = schedsim.sweep(short_scenario, GRID, seeds=2, cache=tmp_path, workers=2, progress=False)
    assert second.attrs["simulated"] == 0 and second.attrs["cached"] == 16
    pd.testing.assert_frame_equal(first, second)
    monkeypatch.undo()

    # A grid that grows computes only what is new; another scenario content computes everything.
    wider = schedsim.sweep(short_scenario, {**GRID, "host.pcpus": [1, 2, 4]}, seeds=2, cache=tmp_path, progress=False)
    assert (wider.attrs["simulated"], wider.attrs["cached"]) == (8, 16)
    changed = copy.deepcopy(short_scenario)
    changed["duration_ms"] = 1400
    other = schedsim.sweep(changed, GRID, seeds=2, cache=tmp_path, workers=2, progress=False)
    assert other.attrs["simulated"] == 16


def test_a_bad_grid_value_raises_with_its_combination_and_path(short_scenario: dict[str, Any]) -> None:
    with pytest.raises(schedsim.ScenarioError) as err:
        schedsim.sweep(short_scenario, {"domains.heavy.weight": [256, -3]}, cache=False, progress=False)
    assert err.value.path == "domains[1].weight"
    assert "combination 1 (domains.heavy.weight=-3)" in str(err.value)
    with pytest.raises(ValueError, match="no element named 'db'"):
        schedsim.sweep(short_scenario, {"domains.db.weight": [1]}, cache=False, progress=False)
    with pytest.raises(ValueError, match="no such policy"):
        schedsim.sweep(short_scenario, {}, policies=["nope"], cache=False, progress=False)


def test_metric_patterns_select_columns(short_scenario: dict[str, Any]) -> None:
    df = schedsim.sweep(
        short_scenario, {}, metrics=["domains.*.cpu_share", "fairness.jain"], cache=False, progress=False
    )
    assert list(df.columns) == [
        "seed",
        "policy",
        "domains.light1.cpu_share",
        "domains.heavy.cpu_share",
        "domains.light2.cpu_share",
        "fairness.jain",
    ]
    assert len(df) == 2


def test_chunks_cover_every_run_once_and_stay_contiguous() -> None:
    runs = list(range(103))
    for workers, size in [(1, None), (2, None), (8, None), (2, 10), (2, 1000)]:
        parts = _sweep.chunks(runs, workers, size)
        assert [r for p in parts for r in p] == runs
        assert all(p == list(range(p[0], p[-1] + 1)) for p in parts)
        if size is None:
            assert len(parts) == min(len(runs), workers * _sweep.CHUNKS_PER_WORKER)
            assert max(map(len, parts)) - min(map(len, parts)) <= 1
        else:
            assert max(map(len, parts)) <= size
    assert _sweep.chunks([], 4) == []
    with pytest.raises(ValueError):
        _sweep.chunks(runs, 2, 0)


def test_patterns_match_one_key_per_star() -> None:
    assert _sweep.matches("domains.*.cpu_share", "domains.web.cpu_share")
    assert not _sweep.matches("domains.*.cpu_share", "domains.web.response_ms.mean")
    assert not _sweep.matches("domains.*", "domains.web.cpu_share")
    assert _sweep.matches("fairness.jain", "fairness.jain")


def test_a_client_that_is_not_one_is_named(short_scenario: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match=r"client: a dask\.distributed\.Client"):
        schedsim.sweep(short_scenario, {"domains.heavy.weight": [256]}, client=1, cache=False, progress=False)
