"""``sweep``: a grid of scenario parameters x seeds x policies, run on the simulator core's own threads in this
process or in chunks on a Dask cluster, every result cached on disk, returned as a pandas DataFrame in grid
order."""

from __future__ import annotations

import json
import math
import os
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import pandas as pd
from tqdm.auto import tqdm

from . import _core
from ._args import list_of_str as _list_of_str
from ._args import whole
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


POLL_SECONDS = 0.2
"""How often a local sweep hands finished runs to Python [s]: Ctrl-C is seen within this, the threads stop a few
milliseconds later."""


def _run_locally(workers: int, jobs: list[tuple[Chunk, list[list[Any]]]], args: tuple[Any, ...]) -> Iterator[Any]:
    """Runs the jobs' items on ``workers`` threads of the simulator's core (the GIL released: no process pool, so a
    script without a main guard, a notebook and ``python -`` all work), yielding ``([index], [metrics])`` as each
    run finishes. On Ctrl-C (or any exception) the threads stop within a few milliseconds; the runs that finished
    are yielded before the exception goes on, so the caller caches them."""
    order = [i for chunk, _ in jobs for i in chunk]
    items = [item for _, chunk_items in jobs for item in chunk_items]
    job = _core.LocalSweep(args[0], args[1], json.dumps(items), workers, args[2], args[3])
    try:
        done = False
        while not done:
            done, finished = job.poll(POLL_SECONDS)
            for k, metrics in finished:
                yield [order[k]], [json.loads(metrics)]
    except GeneratorExit:
        raise
    except BaseException:
        job.stop()
        # Runs that finished while the exception was on its way are kept too.
        try:
            _, finished = job.poll(0.0)
        except Exception:
            finished = []
        for k, metrics in finished:
            yield [order[k]], [json.loads(metrics)]
        raise
    finally:
        job.stop()


def _grid_axes(grid: Mapping[str, Sequence[Any]]) -> list[list[Any]]:
    if not isinstance(grid, Mapping):
        raise TypeError(f"grid: expected a mapping of paths to lists of values, not {type(grid).__name__}")
    axes = []
    for path, values in grid.items():
        if not isinstance(path, str):
            raise TypeError(f"grid: a path must be a string, not {type(path).__name__} {path!r}")
        if isinstance(values, (str, bytes, Mapping)) or not isinstance(values, (Sequence, range)):
            raise TypeError(
                f"grid[{path!r}]: expected a list of values, not {type(values).__name__} (write [{values!r}])"
            )
        axes.append([path, list(values)])
    return axes


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
    max_runs: int | None = None,
    max_total_events: int | None = None,
    scripts: Mapping[str, str] | None = None,
    max_grid_work: int | None = None,
) -> pd.DataFrame:
    """Runs every combination of ``grid`` x ``seeds`` seeds x ``policies`` and returns one row per run.

    ``grid`` maps ``schedsim sweep --set`` paths to value lists (``{"domains.2.weight": [256, 512]}``; array
    elements by index or by name/id). Every combination is validated before anything runs; a bad one raises
    ``ScenarioError`` naming the combination and the field path. Seeds are consecutive from ``seed`` or each
    combination's own; ``policies`` default to all of the scenario's; ``duration_ms`` [ms] overrides the duration.

    Rows come in grid order (combination, seed, policy) with a column per grid path, ``seed``, ``policy`` and one
    per metric: every number of the run object by its dotted path (``domains.io.throughput.blocks_per_s``), or
    those matching ``metrics`` (patterns, ``*`` for any one key). Missing runs are computed in chunks across
    ``client`` (a ``dask.distributed.Client``) or, without one, ``workers`` threads of the simulator's core in this
    process (default: every core; no process pool, so no ``if __name__ == "__main__"`` guard is needed).
    Results are cached under ``cache`` (True: ``$SCHEDSIM_CACHE`` or ``~/.cache/schedsim``; a path; False: none).
    ``df.attrs`` says how many runs were ``simulated`` and how many came from the cache (``cached``).

    ``max_events`` is ``schedsim sweep --max-events``: a combination whose run is estimated above that many events
    raises ``ValueError`` before anything runs, and a run that reaches it stops the sweep with a ``ValueError``
    naming its point (default 10^9). It does not enter the cache key: a run that completes under a limit is the
    same run. ``max_runs`` (default 100,000) and ``max_total_events`` (default 10^11) are ``--max-runs`` and
    ``--max-total-events``: a grid past either raises ``ValueError`` with its figure before anything is built, as
    does one whose combinations x the scenario's size [bytes] pass ``max_grid_work`` (``--max-grid-work``, default
    2^28: each combination is built and validated a few times). A
    metric pattern that matches nothing raises ``ValueError``; Ctrl-C stops a local sweep within a second, keeping
    (and caching) every run that finished. ``scripts`` gives policies Rhai sources, as in ``run``; sweep a script's
    ``vars`` by their path (``{"policies.mine.params.vars.slice_ms": [10, 30]}``).
    """
    seeds = whole("seeds", seeds, low=1) or 1
    seed = whole("seed", seed)
    duration_ms = whole("duration_ms", duration_ms)
    max_events = whole("max_events", max_events)
    max_runs = whole("max_runs", max_runs)
    max_total_events = whole("max_total_events", max_total_events)
    max_grid_work = whole("max_grid_work", max_grid_work)
    chunksize = whole("chunksize", chunksize, low=1)
    workers = whole("workers", workers, low=1)
    policy_list = _list_of_str(policies, "policies") or []
    metric_list = _list_of_str(metrics, "metrics")
    for pattern in metric_list or []:
        if not pattern or any(not part for part in pattern.split(".")):
            raise ValueError(f"metrics: {pattern!r} is not a dotted path (e.g. domains.web.cpu_share)")
    text = scenario_json(scenario, scripts)
    axes = _grid_axes(grid)
    if client is not None and not callable(getattr(client, "submit", None)):
        raise TypeError(f"client: a dask.distributed.Client (or None), not {type(client).__name__}")
    plan = json.loads(
        _core.plan(
            text,
            json.dumps(axes),
            seeds,
            policy_list,
            seed,
            duration_ms,
            max_events,
            max_runs,
            max_total_events,
            max_grid_work,
        )
    )
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
                close = getattr(done, "close", None)
                if close is not None:
                    close()
                if store:
                    store.save(pending)

    records = []
    matched: set[str] = set()
    for i, (c, s, p) in enumerate(work):
        m = results[i]
        if metric_list is not None:
            names = list(m)
            m = {k: m[k] for k, keep in zip(names, _core.metric_matches(metric_list, names)) if keep}
            matched.update(m)
        records.append({**dict(zip(paths, combos[c])), "seed": s, "policy": p, **m})
    for pattern in metric_list or []:
        if work and not any(matches(pattern, k) for k in matched):
            raise ValueError(f"metrics: {pattern!r} matches nothing in any run (a metric path, * for any one key)")
    df = pd.DataFrame.from_records(records) if records else pd.DataFrame(columns=[*paths, "seed", "policy"])
    df.attrs.update(scenario=plan["scenario"], version=version, simulated=len(missing), cached=len(work) - len(missing))
    return df
