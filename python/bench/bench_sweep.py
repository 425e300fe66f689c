"""Benchmark (not a test): runs per second of a 1,000-run sweep of a short scenario, in one process (the cost of
the runs alone), on local processes, on a Dask LocalCluster and on the CLI's threads; and the overhead per task of
each executor (empty chunks, so only scheduling and transport are timed).

    python bench/bench_sweep.py [--workers 2] [--cli PATH]

The sweep: credit-weights (3 domains, 1 pCPU) cut to 500 ms simulated (100 ms warm-up), 10 weights x 50 seeds x
2 policies.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from distributed import Client, LocalCluster

import schedsim
from schedsim import _sweep
from schedsim._worker import run_chunk

ROOT = Path(__file__).resolve().parents[2]
WEIGHTS = [64, 128, 192, 256, 384, 512, 640, 768, 896, 1024]
SEEDS = 50
DURATION_MS = 500
EMPTY_TASKS = 400


def timed(f: Callable[[], Any]) -> tuple[float, Any]:
    start = time.perf_counter()
    out = f()
    return time.perf_counter() - start, out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    target = Path(os.environ.get("CARGO_TARGET_DIR") or ROOT / "sim-wasm" / "target")
    ap.add_argument("--cli", type=Path, default=target / "release" / "schedsim")
    args = ap.parse_args()

    sc = json.loads((ROOT / "scenarios" / "credit-weights.json").read_text())
    sc["duration_ms"], sc["warmup_ms"] = DURATION_MS, 100
    text = json.dumps(sc)
    grid = {"domains.heavy.weight": WEIGHTS}
    n = len(WEIGHTS) * SEEDS * len(sc["policies"])
    print(f"sweep: {n} runs of credit-weights at {DURATION_MS} ms simulated, {args.workers} workers")

    # The runs alone: one process, one call, no scheduler.
    plan = json.loads(schedsim._core.plan(text, json.dumps([[k, v] for k, v in grid.items()]), SEEDS, []))
    items = [[plan["combos"][c], s, p] for c, s, p in plan["work"]]
    serial, _ = timed(lambda: run_chunk(text, plan["paths"], items, None))
    print(f"  one process, no scheduler   {n / serial:9.0f} runs/s  ({serial / n * 1e3:.2f} ms per run)")

    common: dict[str, Any] = {"seeds": SEEDS, "cache": False, "progress": False}
    local, df = timed(lambda: schedsim.sweep(sc, grid, workers=args.workers, **common))
    assert len(df) == n
    print(f"  local processes, first sweep{n / local:9.0f} runs/s  ({local:.2f} s, starting the pool included)")
    local, df = timed(lambda: schedsim.sweep(sc, grid, workers=args.workers, **common))
    print(f"  local processes, next sweeps{n / local:9.0f} runs/s  ({local:.2f} s)")

    with (
        LocalCluster(
            n_workers=args.workers, threads_per_worker=1, dashboard_address=None, silence_logs=logging.ERROR
        ) as cluster,
        Client(cluster) as client,
    ):
        client.run(lambda: __import__("schedsim"))  # workers import the package once, as a warm cluster has
        dask, df2 = timed(lambda: schedsim.sweep(sc, grid, client=client, **common))
        assert df2.equals(df)
        print(f"  Dask LocalCluster           {n / dask:9.0f} runs/s  ({dask:.2f} s)")
        empty: list[tuple[list[int], list[list[Any]]]] = [([], []) for _ in range(EMPTY_TASKS)]
        t, _ = timed(lambda: list(_sweep._run_on_dask(client, empty, (text, [], None))))
        dask_overhead = t / EMPTY_TASKS
    t, _ = timed(lambda: list(_sweep._run_locally(args.workers, empty, (text, [], None))))
    local_overhead = t / EMPTY_TASKS

    if args.cli.is_file():
        with tempfile.NamedTemporaryFile("w", suffix=".json") as f:
            f.write(text)
            f.flush()
            cmd = [str(args.cli), "sweep", f.name, "--set", "domains.heavy.weight=" + ",".join(map(str, WEIGHTS))]
            cmd += ["--seeds", str(SEEDS), "--jobs", str(args.workers)]
            cli, _ = timed(lambda: subprocess.run(cmd, check=True, capture_output=True))
        print(f"  CLI threads (schedsim sweep){n / cli:9.0f} runs/s  ({cli:.2f} s)")
    else:
        print(f"  CLI threads: {args.cli} not built (npm run build:cli)")

    print("overhead per task (empty chunks):")
    print(f"  local processes  {local_overhead * 1e3:7.2f} ms")
    print(f"  Dask LocalCluster {dask_overhead * 1e3:6.2f} ms")
    chunks = len(_sweep.chunks(range(n), args.workers))
    print(f"a {n}-run sweep goes out as {chunks} chunks of ~{n // chunks} runs ({_sweep.CHUNKS_PER_WORKER} per worker)")


if __name__ == "__main__":
    main()
