"""Recorded runs from Python: the same report as ``schedsim trace report``."""

from __future__ import annotations

import gzip
import json
import os
from pathlib import Path

import pytest

import schedsim

FIXTURES = Path(__file__).resolve().parents[2] / "sim-wasm" / "core" / "tests" / "fixtures" / "perf"


def test_trace_report_of_the_perf_fixture(tmp_path: Path) -> None:
    trace = tmp_path / "sched.txt"
    trace.write_bytes(gzip.decompress((FIXTURES / "sched.perf-script.txt.gz").read_bytes()))
    mapping = json.loads((FIXTURES / "sched.mapping.json").read_text())
    report = schedsim.trace_report(trace, mapping=mapping)
    (run,) = report["runs"]
    assert run["policy"] == "recorded"
    assert run["recorded"]["format"] == "text"
    # Weights 512 : 128 on one pCPU: the busy loops' shares are near 0.8 and 0.2.
    assert abs(run["domains"]["lo"]["cpu_share"] - 0.2) < 0.01
    assert run["domains"]["hi"]["wake_to_run_ms"]["count"] > 0


def test_a_gzip_trace_is_read_as_the_cli_reads_it(tmp_path: Path) -> None:
    mapping = json.loads((FIXTURES / "sched.mapping.json").read_text())
    plain = tmp_path / "sched.perf-script.txt"
    plain.write_bytes(gzip.decompress((FIXTURES / "sched.perf-script.txt.gz").read_bytes()))
    packed = schedsim.trace_report(FIXTURES / "sched.perf-script.txt.gz", mapping=mapping)
    (run,) = packed["runs"]
    assert run["domains"] == schedsim.trace_report(plain, mapping=mapping)["runs"][0]["domains"]


def test_not_a_trace_is_refused(tmp_path: Path) -> None:
    bad = tmp_path / "notes.txt"
    bad.write_text("hello\nworld\n")
    with pytest.raises(ValueError, match="not a scheduling trace"):
        schedsim.trace_report(bad)


def test_gzip_is_read_as_the_cli_reads_it() -> None:
    # The fixture as it is stored, compressed: the same report as its text.
    mapping = json.loads((FIXTURES / "sched.mapping.json").read_text())
    report = schedsim.trace_report(FIXTURES / "sched.perf-script.txt.gz", mapping=mapping)
    assert report["runs"][0]["recorded"]["format"] == "text"


def test_a_gzip_bomb_is_refused_by_its_bound(tmp_path: Path) -> None:
    bomb = tmp_path / "zeros.gz"
    bomb.write_bytes(gzip.compress(bytes(40 << 20), compresslevel=9))
    with pytest.raises(ValueError, match="expands at most 200 times"):
        schedsim.trace_report(bomb)


def test_a_fifo_is_refused_before_it_blocks(tmp_path: Path) -> None:
    fifo = tmp_path / "trace.fifo"
    os.mkfifo(fifo)
    with pytest.raises(ValueError, match="not a regular file"):
        schedsim.trace_report(fifo)
    with pytest.raises(ValueError, match="a directory"):
        schedsim.trace_report(tmp_path)
