"""Inputs a hostile or careless caller gives: a sweep with no main guard or on stdin, Ctrl-C mid-sweep, a damaged
cache part, metric patterns that match nothing, a string where a list belongs, files that are not files or too
large, seeds past 2^53-1, grids past the run limit. Each is a clear exception (or just works), never a hang or an
aborted interpreter."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

import pytest

import schedsim
from schedsim import _core

GRID = {"domains.heavy.weight": [256, 1024]}


def test_a_script_without_a_main_guard_sweeps_from_stdin(short_scenario: dict[str, Any], tmp_path: Path) -> None:
    path = tmp_path / "sc.json"
    path.write_text(json.dumps(short_scenario))
    script = (
        f"import schedsim\nprint(len(schedsim.sweep({str(path)!r}, {GRID!r}, seeds=2, cache=False, progress=False)))\n"
    )
    out = subprocess.run([sys.executable, "-"], input=script, capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == "8"


def interrupt(child: subprocess.Popen[str], timeout: float) -> float:
    """Sends a running child SIGINT and returns the seconds it took to exit, having printed "interrupted" and
    exited with 3 (what the child scripts here do on KeyboardInterrupt)."""
    assert child.poll() is None, child.communicate()
    sent = time.monotonic()
    child.send_signal(signal.SIGINT)
    out, err = child.communicate(timeout=timeout)
    assert child.returncode == 3 and "interrupted" in out, err
    return time.monotonic() - sent


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process")
def test_ctrl_c_stops_a_sweep_within_a_second_and_keeps_what_finished(tmp_path: Path) -> None:
    sc: dict[str, Any] = json.loads(
        (Path(__file__).resolve().parents[2] / "scenarios" / "credit-weights.json").read_text()
    )
    sc["duration_ms"] = 600_000
    path = tmp_path / "sc.json"
    path.write_text(json.dumps(sc))
    cache = tmp_path / "cache"
    grid = {"domains.heavy.weight": list(range(256, 256 + 2000))}
    script = textwrap.dedent(
        f"""
        import schedsim, sys
        try:
            schedsim.sweep({str(path)!r}, {grid!r}, cache={str(cache)!r}, workers=2, progress=False)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    # Wait until some runs have reached the cache (it is flushed every few seconds): on a loaded machine that can
    # take a minute or more, and a signal sent before would find no finished run to keep.
    deadline = time.monotonic() + 300
    while not list(cache.rglob("part-*.parquet")) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert interrupt(child, timeout=30) < 1.5
    # What finished is kept: a second sweep of the first few combinations simulates none of them.
    done = schedsim.sweep(path, {"domains.heavy.weight": [256]}, cache=cache, progress=False, workers=1)
    assert done.attrs["cached"] == len(done) > 0


@pytest.mark.skipif(os.name != "posix", reason="SIGINT to a child process")
def test_ctrl_c_stops_a_long_grid_check(tmp_path: Path) -> None:
    # A 0.9 MB scenario's 250 combinations take two minutes or more to check (each built and validated twice, with
    # the GIL released, so Python's handler for Ctrl-C runs only when the check looks for it).
    sc: dict[str, Any] = json.loads(
        (Path(__file__).resolve().parents[2] / "scenarios" / "credit-weights.json").read_text()
    )
    sc.pop("claims", None)
    tasks = [{"name": f"t{i:06}", "workload": {"type": "cpu"}} for i in range(18_000)]
    sc["domains"] += [{"name": f"pad{k}", "tasks": tasks[k * 4000 : (k + 1) * 4000]} for k in range(5)]
    path = tmp_path / "big.json"
    path.write_text(json.dumps(sc))
    script = textwrap.dedent(
        f"""
        import schedsim, sys
        print("checking", flush=True)
        try:
            schedsim.sweep({str(path)!r}, {{"host.pcpus": list(range(1, 251))}}, cache=False, progress=False)
        except KeyboardInterrupt:
            print("interrupted", flush=True)
            sys.exit(3)
        """
    )
    child = subprocess.Popen([sys.executable, "-c", script], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert child.stdout is not None
    assert child.stdout.readline().strip() == "checking"
    time.sleep(3)
    assert interrupt(child, timeout=60) < 5


def test_a_damaged_cache_part_is_reported_set_aside_and_recomputed(
    short_scenario: dict[str, Any], tmp_path: Path
) -> None:
    first = schedsim.sweep(short_scenario, GRID, cache=tmp_path, progress=False, workers=1)
    [part] = list(tmp_path.rglob("part-*.parquet"))
    for damage in (b"garbage", part.read_bytes()[:40], b""):
        part.write_bytes(damage)
        with pytest.warns(RuntimeWarning, match="is damaged"):
            again = schedsim.sweep(short_scenario, GRID, cache=tmp_path, progress=False, workers=1)
        assert again.attrs["simulated"] == len(first)
        assert (part.parent / "damaged" / part.name).exists()
        assert again.equals(first)
        [part] = list(part.parent.glob("part-*.parquet"))
    # The recomputed part serves the next sweep.
    third = schedsim.sweep(short_scenario, GRID, cache=tmp_path, progress=False, workers=1)
    assert third.attrs["cached"] == len(first)


def test_metric_patterns_that_match_nothing_raise(short_scenario: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"'domains\.nope\.cpu_share' matches nothing"):
        schedsim.sweep(short_scenario, GRID, metrics=["domains.*.cpu_share", "domains.nope.cpu_share"], cache=False)
    with pytest.raises(ValueError, match="not a dotted path"):
        schedsim.sweep(short_scenario, GRID, metrics=["domains..cpu_share"], cache=False)


def test_a_string_where_a_list_belongs_is_refused(short_scenario: dict[str, Any]) -> None:
    with pytest.raises(TypeError, match=r"policies: expected a list of strings, not a string \(write \['credit'\]\)"):
        schedsim.sweep(short_scenario, GRID, policies="credit", cache=False)
    with pytest.raises(TypeError, match="metrics: expected a list"):
        schedsim.sweep(short_scenario, GRID, metrics="fairness.jain", cache=False)
    with pytest.raises(TypeError, match=r"grid\['host.pcpus'\]: expected a list of values, not str"):
        schedsim.sweep(short_scenario, {"host.pcpus": "12"}, cache=False)
    with pytest.raises(TypeError, match=r"grid\['host.pcpus'\]: expected a list of values, not int"):
        schedsim.sweep(short_scenario, {"host.pcpus": 2}, cache=False)  # type: ignore[dict-item]


@pytest.mark.skipif(os.name != "posix", reason="devices and FIFOs")
def test_files_are_read_as_the_cli_reads_them(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="not a regular file"):
        schedsim.run("/dev/zero")
    fifo = tmp_path / "fifo.json"
    os.mkfifo(fifo)
    t = time.monotonic()
    with pytest.raises(ValueError, match="not a regular file"):
        schedsim.run(fifo)
    assert time.monotonic() - t < 5
    big = tmp_path / "big.json"
    big.write_bytes(b" " * (_core.MAX_SCENARIO_BYTES + 1))
    with pytest.raises(ValueError, match="larger than the limit"):
        schedsim.run(big)


def test_seeds_stop_where_the_clis_do(short_scenario: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match="largest seed"):
        schedsim.run(short_scenario, seed=2**53)
    with pytest.raises(ValueError, match="largest seed"):
        schedsim.sweep(short_scenario, GRID, seed=2**53, cache=False)
    with pytest.raises(ValueError, match="--seeds"):
        schedsim.sweep(short_scenario, GRID, seed=2**53 - 1, seeds=2, cache=False)
    assert schedsim.run(short_scenario, ["credit"], seed=2**53 - 1)["runs"]


def test_grids_past_the_limits_raise_with_their_size(short_scenario: dict[str, Any]) -> None:
    grid = {"domains.heavy.weight": list(range(1, 1001))}
    t = time.monotonic()
    with pytest.raises(
        ValueError, match=r"200000000 runs \(1000 combinations x 100000 seeds x 2 policies\).*max_runs="
    ):
        schedsim.sweep(short_scenario, grid, seeds=100_000, cache=False)
    with pytest.raises(ValueError, match="max_total_events="):
        schedsim.sweep(short_scenario, GRID, cache=False, max_total_events=10)
    assert time.monotonic() - t < 5
    df = schedsim.sweep(short_scenario, GRID, seeds=2, cache=False, max_runs=8, progress=False)
    assert len(df) == 8
    with pytest.raises(ValueError, match="the grid has 8 runs"):
        schedsim.sweep(short_scenario, GRID, seeds=2, cache=False, max_runs=7)
    # Combinations x the scenario's size, with the figure that would allow it.
    size = len(json.dumps(short_scenario, separators=(",", ":"), ensure_ascii=False))
    with pytest.raises(ValueError, match=rf"2 combinations .* max_grid_work={2 * size}\b"):
        schedsim.sweep(short_scenario, GRID, cache=False, max_grid_work=size)
    assert len(schedsim.sweep(short_scenario, GRID, cache=False, max_grid_work=2 * size, progress=False)) == 4


def test_a_field_named_twice_is_refused(short_scenario: dict[str, Any]) -> None:
    with pytest.raises(ValueError, match=r"same field as --set domains\.heavy\.weight"):
        schedsim.sweep(short_scenario, {"domains.heavy.weight": [256], "domains.1.weight": [512]}, cache=False)


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda sc: schedsim.run(sc, seed=-1), "seed"),
        (lambda sc: schedsim.run(sc, duration_ms=-5), "duration_ms"),
        (lambda sc: schedsim.run(sc, max_events=2**64), "max_events"),
        (lambda sc: schedsim.estimate(sc, duration_ms=-1), "duration_ms"),
        (lambda sc: schedsim.check(sc, seeds=0), "seeds"),
        (lambda sc: schedsim.check(sc, max_events=-1), "max_events"),
        (lambda sc: schedsim.sweep(sc, GRID, seed=-1, cache=False), "seed"),
        (lambda sc: schedsim.sweep(sc, GRID, max_runs=-1, cache=False), "max_runs"),
        (lambda sc: schedsim.sweep(sc, GRID, workers=0, cache=False), "workers"),
        (lambda sc: schedsim.trace_report("x.txt", tsc_hz=-1), "tsc_hz"),
    ],
)
def test_a_negative_or_too_large_integer_names_its_argument(
    short_scenario: dict[str, Any], call: Any, name: str
) -> None:
    with pytest.raises(ValueError, match=rf"^{name}: -?\d+ is out of range \(a whole number from \d+ to \d+\)"):
        call(short_scenario)


# Called through an untyped name: these arguments are wrong on purpose.
untyped: Any = schedsim


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda sc: untyped.run(sc, seed=1.5), "seed"),
        (lambda sc: untyped.run(sc, seed=True), "seed"),
        (lambda sc: untyped.run(sc, duration_ms="100"), "duration_ms"),
        (lambda sc: untyped.run(sc, policies="credit"), "policies"),
        (lambda sc: untyped.run(sc, variant=3), "variant"),
        (lambda sc: untyped.estimate(sc, policies=[1]), "policies"),
        (lambda sc: untyped.check(sc, seeds="2"), "seeds"),
        (lambda sc: untyped.sweep(sc, GRID, seeds=2.0, cache=False), "seeds"),
        (lambda sc: untyped.trace_report(3), "path"),
        (lambda sc: untyped.trace_report("x.txt", mapping=[1]), "mapping"),
        (lambda sc: untyped.trace_report("x.txt", simulate="credit"), "simulate"),
    ],
)
def test_a_wrong_type_names_its_argument(short_scenario: dict[str, Any], call: Any, name: str) -> None:
    with pytest.raises(TypeError, match=rf"^{name}: expected"):
        call(short_scenario)
