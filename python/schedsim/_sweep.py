"""``sweep``: a grid of scenario parameters x seeds x policies, run in chunks on local processes or on a Dask
cluster, every result cached on disk, returned as a pandas DataFrame in grid order."""

from __future__ import annotations

import atexit
import json
import math
import multiprocessing
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor
from concurrent.futures import as_completed as futures_completed
from concurrent.futures.process import BrokenProcessPool
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from . import _core
from ._cache import Cache, CacheSpec, run_key
from ._scenario import Scenario, content_hash, scenario_json
from ._worker import run_chunk

CHUNKS_PER_WORKER = 4
"""Chunks per worker thread: enough that a slow chunk does not leave the others idle at the end, few enough that
the scheduler's cost per task (about a millisecond on Dask) stays far below a chunk's run time."""

FLUSH_SECONDS = 5.0
"""Completed runs reach the cache at least this often [s], so an interrupted sweep keeps most of its work."""

Chunk = list[int]


def chunks(runs: Sequence[int], workers: int, chunksize: int | None = None) -> list[Chunk]:
    """Splits ``runs`` into contiguous chunks: ``chunksize`` runs each, or ``CHUNKS_PER_WORKER`` per worker.

    Contiguous, so a chunk holds few combinations and builds each one's scenario once.
    """
    if not runs:
        return []
    if chunksize is not None and chunksize < 1:
        raise ValueError("chunksize: must be at least 1")
    count = math.ceil(len(runs) / chunksize) if chunksize else min(len(runs), max(1, workers) * CHUNKS_PER_WORKER)
    size, extra = divmod(len(runs), count)
    out: list[Chunk] = []
    start = 0
    for k in range(count):
        end = start + size + (1 if k < extra else 0)
        out.append(list(runs[start:end]))
        start = end
    return out


def matches(pattern: str, path: str) -> bool:
    """A metric pattern as ``schedsim sweep --metric`` reads it: dotted, ``*`` standing for any one key (the core's
    reading of metric paths, the same for claims and the CLI's columns)."""
    return _core.metric_matches([pattern], [path])[0]


def _dask_workers(client: Any) -> int:
    threads: int = sum(client.nthreads().values())
    return max(1, threads)


def _run_on_dask(client: Any, jobs: list[tuple[Chunk, list[list[Any]]]], args: tuple[Any, ...]) -> Iterator[Any]:
    from distributed import as_completed

    [scenario] = client.scatter([args[0]], broadcast=True, hash=False)
    futures = {
        client.submit(run_chunk, scenario, args[1], items, args[2], args[3], pure=False): chunk for chunk, items in jobs
    }
    try:
        for fut in as_completed(futures):  # type: ignore[no-untyped-call]
            yield futures[fut], fut.result()
    finally:
        client.cancel(list(futures))


_POOLS: dict[int, ProcessPoolExecutor] = {}


def local_pool(workers: int) -> ProcessPoolExecutor:
    """A pool of ``workers`` processes, started on first use and kept for the next sweeps of the session (a
    process starts in about a second: it imports the caller's main module, as the spawn method does)."""
    pool = _POOLS.get(workers)
    if pool is None:
        # spawn: safe whatever threads the caller runs (a Dask client, a notebook's); fork is not.
        pool = ProcessPoolExecutor(max_workers=workers, mp_context=multiprocessing.get_context("spawn"))
        _POOLS[workers] = pool
    return pool


@atexit.register
def _close_pools() -> None:
    for pool in _POOLS.values():
        pool.shutdown(wait=True, cancel_futures=True)
    _POOLS.clear()


def _run_locally(workers: int, jobs: list[tuple[Chunk, list[list[Any]]]], args: tuple[Any, ...]) -> Iterator[Any]:
    pool = local_pool(workers)
    futures = {pool.submit(run_chunk, args[0], args[1], items, args[2], args[3]): chunk for chunk, items in jobs}
    try:
        for fut in futures_completed(futures):
            yield futures[fut], fut.result()
    except BrokenProcessPool:
        _POOLS.pop(workers, None)
        raise
    finally:
        for fut in futures:
            fut.cancel()


def sweep(
    scenario: Scenario,
    grid: Mapping[str, Sequence[Any]],
    seeds: int = 1,
    policies: Sequence[str] | None = None,
    client: Any = None,
    *,
    seed: int | None = None,
    duration_ms: int | None = None,
    metrics: Sequence[str] | None = None,
    cache: CacheSpec = True,
    chunksize: int | None = None,
    workers: int | None = None,
    progress: bool = True,
    max_events: int | None = None,
    scripts: Mapping[str, str] | None = None,
) -> pd.DataFrame:
    """Runs every combination of ``grid`` x ``seeds`` seeds x ``policies`` and returns one row per run.

    ``grid`` maps ``schedsim sweep --set`` paths to value lists (``{"domains.2.weight": [256, 512]}``; array
    elements by index or by name/id). Every combination is validated before anything runs; a bad one raises
    ``ScenarioError`` naming the combination and the field path. Seeds are consecutive from ``seed`` or each
    combination's own; ``policies`` default to all of the scenario's; ``duration_ms`` [ms] overrides the duration.

    Rows come in grid order (combination, seed, policy) with a column per grid path, ``seed``, ``policy`` and one
    per metric: every number of the run object by its dotted path (``domains.io.throughput.blocks_per_s``), or
    those matching ``metrics`` (patterns, ``*`` for any one key). Missing runs are computed in chunks across
    ``client`` (a ``dask.distributed.Client``) or, without one, ``workers`` local processes (default: every core).
    Results are cached under ``cache`` (True: ``$SCHEDSIM_CACHE`` or ``~/.cache/schedsim``; a path; False: none).
    ``df.attrs`` says how many runs were ``simulated`` and how many came from the cache (``cached``).

    ``max_events`` is ``schedsim sweep --max-events``: a combination whose run is estimated above that many events
    raises ``ValueError`` before anything runs, and a run that reaches it stops the sweep with a ``ValueError``
    naming its point (default 10^9). It does not enter the cache key: a run that completes under a limit is the
    same run. ``scripts`` gives policies Rhai sources, as in ``run``; sweep a script's ``vars`` by their path
    (``{"policies.mine.params.vars.slice_ms": [10, 30]}``).
    """
    if seeds < 1:
        raise ValueError("seeds: must be at least 1")
    text = scenario_json(scenario, scripts)
    axes = [[path, list(values)] for path, values in grid.items()]
    plan = json.loads(_core.plan(text, json.dumps(axes), seeds, list(policies or []), seed, duration_ms, max_events))
    paths: list[str] = plan["paths"]
    combos: list[list[Any]] = plan["combos"]
    work: list[list[Any]] = plan["work"]
    params = [json.dumps(dict(zip(paths, c)), sort_keys=True, separators=(",", ":")) for c in combos]
    keys = [run_key(params[c], s, p, duration_ms) for c, s, p in work]

    version = _core.version()
    store = Cache.open(cache, version, content_hash(text))
    found = store.load() if store else {}
    results: dict[int, dict[str, Any]] = {i: found[k] for i, k in enumerate(keys) if k in found}
    missing = [i for i in range(len(work)) if i not in results]

    if missing:
        nworkers = _dask_workers(client) if client is not None else (workers or os.cpu_count() or 1)
        jobs = [
            (ch, [[combos[work[i][0]], work[i][1], work[i][2]] for i in ch])
            for ch in chunks(missing, nworkers, chunksize)
        ]
        args = (text, paths, duration_ms, max_events)
        done = _run_on_dask(client, jobs, args) if client is not None else _run_locally(nworkers, jobs, args)
        pending: list[tuple[str, str, int, dict[str, Any]]] = []
        last_flush = time.monotonic()
        with tqdm(total=len(missing), unit="run", desc="sweep", disable=not progress) as bar:
            try:
                for chunk, rows in done:
                    for i, row in zip(chunk, rows):
                        results[i] = row
                        pending.append((keys[i], work[i][2], work[i][1], row))
                    bar.update(len(chunk))
                    if store and time.monotonic() - last_flush >= FLUSH_SECONDS:
                        store.save(pending)
                        pending, last_flush = [], time.monotonic()
            finally:
                if store:
                    store.save(pending)

    records = []
    for i, (c, s, p) in enumerate(work):
        m = results[i]
        if metrics is not None:
            keys = list(m)
            m = {k: m[k] for k, keep in zip(keys, _core.metric_matches(list(metrics), keys)) if keep}
        records.append({**dict(zip(paths, combos[c])), "seed": s, "policy": p, **m})
    df = pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=[*paths, "seed", "policy"])
    df.attrs.update(scenario=plan["scenario"], version=version, simulated=len(missing), cached=len(work) - len(missing))
    return df
