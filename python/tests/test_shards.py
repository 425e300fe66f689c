"""The CLI's shards merged equal the whole sweep, and the CLI's sweep gives the Python package's figures."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pandas as pd
from conftest import SCENARIOS

import schedsim

SETS = ["--set", "domains.heavy.weight=256,512,1024", "--set", "host.pcpus=1,2"]
FILE = str(SCENARIOS / "credit-weights.json")


def sweep_cli(cli: Path, *args: str) -> str:
    out = subprocess.run([str(cli), "sweep", *args], check=True, capture_output=True, text=True)
    return out.stdout


def test_shards_merged_equal_the_whole(cli: Path, tmp_path: Path) -> None:
    common = [FILE, *SETS, "--seeds", "2", "--duration-ms", "1500", "--metric", "domains.*.cpu_share"]
    whole = sweep_cli(cli, *common)
    for i in range(4):
        sweep_cli(cli, *common, "--shard", f"{i}/4", "--out", str(tmp_path))
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted(
        f"shard-{i:05}-of-00004.{ext}" for i in range(4) for ext in ("csv", "json")
    )
    assert sweep_cli(cli, "--merge", str(tmp_path)) == whole
    assert len(whole.splitlines()) == 1 + 6 * 2 * 2
    whole_json = sweep_cli(cli, *common, "--format", "json")
    assert sweep_cli(cli, "--merge", str(tmp_path), "--format", "json") == whole_json


def test_the_cli_sweep_gives_the_python_figures(cli: Path) -> None:
    text = sweep_cli(cli, FILE, *SETS, "--seeds", "2", "--duration-ms", "1500", "--metric", "domains.*.cpu_share")
    native = pd.read_csv(io.StringIO(text)).drop(columns="combination")
    grid = {"domains.heavy.weight": [256, 512, 1024], "host.pcpus": [1, 2]}
    mine = schedsim.sweep(
        FILE, grid, seeds=2, duration_ms=1500, metrics=["domains.*.cpu_share"], cache=False, progress=False
    )
    pd.testing.assert_frame_equal(native, mine, check_dtype=False)
