"""Single runs, claim checks and recorded runs: ``run``, ``check`` and ``trace_report``."""

from __future__ import annotations

import json
import os
from collections.abc import Mapping, Sequence
from typing import Any

from . import _core
from ._args import list_of_str, optional_str, whole
from ._scenario import Scenario, scenario_json


def run(
    scenario: Scenario,
    policies: Sequence[str] | None = None,
    seed: int | None = None,
    *,
    duration_ms: int | None = None,
    variant: str | None = None,
    deterministic: bool = False,
    max_events: int | None = None,
    scripts: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """Simulates ``scenario`` under ``policies`` (all of its policies when None) and returns the report.

    The report is the dict ``schedsim run`` prints (DESIGN.md section 5): ``{"scenario", "runs": [...]}`` with one
    run per policy and each claim's result inside its run. ``seed`` and ``duration_ms`` [ms] override the
    scenario's; ``variant`` runs one of its variants; ``deterministic`` leaves out wall-clock fields, so the report
    equals ``schedsim run --deterministic`` byte for byte. Raises ``ScenarioError`` for an invalid scenario.

    ``max_events`` is ``schedsim run --max-events``: a run estimated (``estimate``) above that many events raises
    ``ValueError`` before anything runs, and a run that reaches it stops with ``RuntimeError``; the default is the
    CLI's, 10^9 events (a minute or two per run).

    ``scripts`` maps policy ids to Rhai sources (``"scheduler": "script"``, DESIGN.md section 10): each replaces
    that policy's source or scheduler, or adds a policy, as ``schedsim run --script ID=PATH`` does. A script's
    syntax error raises ``ScenarioError`` (with its line and column); an error while it runs, ``RuntimeError``
    naming the hook, the simulated time and the line.
    """
    text = _core.run(
        scenario_json(scenario, scripts),
        list_of_str(policies, "policies") or [],
        whole("seed", seed),
        whole("duration_ms", duration_ms),
        optional_str(variant, "variant"),
        deterministic,
        whole("max_events", max_events),
    )
    report: dict[str, Any] = json.loads(text)
    return report


def estimate(
    scenario: Scenario,
    policies: Sequence[str] | None = None,
    *,
    duration_ms: int | None = None,
    variant: str | None = None,
    scripts: Mapping[str, str] | None = None,
) -> dict[str, Any]:
    """The simulator's estimate of what running ``scenario`` under ``policies`` (all when None) costs.

    Returns ``{"events_per_run", "runs", "events", "bytes_per_run" [bytes], "script_operations", "seconds" [s]}``:
    the events of one policy's run (the largest), how many runs, their events in all, one run's memory while it
    runs, the script policies' interpreter operations (sampled from the run's start; 0 without a script), and the
    wall time at the browser's pace (5M events/s and 5M script operations/s; the native build is faster). An upper
    estimate meant to be right within a small factor: its events are what ``max_events`` is compared with.
    """
    cost: dict[str, Any] = json.loads(
        _core.estimate(
            scenario_json(scenario, scripts),
            list_of_str(policies, "policies") or [],
            whole("duration_ms", duration_ms),
            optional_str(variant, "variant"),
        )
    )
    return cost


def check(
    scenario: Scenario,
    seeds: int = 1,
    *,
    scripts: Mapping[str, str] | None = None,
    max_events: int | None = None,
) -> list[dict[str, Any]]:
    """Judges every claim of ``scenario`` and of each of its variants over ``seeds`` consecutive seeds, each on
    the scenario and, for an effect claim, on its ablation (``without``), as ``schedsim check --seeds N`` does.

    Returns one dict per claim and setting, in the CLI's order: ``variant`` (None for the scenario as written),
    ``policy``, ``text``, ``holds`` (on every seed of the scenario), ``held`` (how many seeds it held for),
    ``failed_seeds``, ``values`` (of the first failing seed, else of the first seed) and ``verdict``: the core's
    verdict the CLI prints, a dict with ``kind`` (``holds``, ``fails``, ``not_credited`` (it holds without its
    mechanism too), ``ablation_broken`` (with ``ablation_error``), ``not_reproduced`` (with ``reason``),
    ``stale`` (with ``why``), ``goal`` (with ``met``)), ``seeds``, ``failed_seeds``, ``seed``, ``values``
    (``{"runs": {policy: {path: value}}, "target", "bound"}``), ``error`` and ``without`` (the ablation's
    ``label``, ``judged``, ``still_holds``, ``broken``, ``values``, ``error``). A claim fails the CLI's check when
    its kind is ``fails``, ``not_credited``, ``ablation_broken`` or ``stale``.

    ``scripts`` gives policies Rhai sources, as in ``run``: how a homework's claims grade a student's scheduler.
    ``max_events`` is ``run``'s: a run estimated above it is refused before anything runs.
    """
    n = whole("seeds", seeds, low=1) or 1
    results: list[dict[str, Any]] = json.loads(
        _core.check(scenario_json(scenario, scripts), n, whole("max_events", max_events))
    )
    return results


def trace_report(
    path: str | os.PathLike[str],
    *,
    mapping: Mapping[str, Any] | None = None,
    tsc_hz: int | None = None,
    simulate: Sequence[str] | None = None,
) -> dict[str, Any]:
    """The report of the recorded run in a trace file, as ``schedsim trace report`` prints it.

    The file is ``perf script`` / ftrace / ``trace-cmd report`` text or a xentrace binary (``tsc_hz``: its TSC
    frequency [Hz], 2.4 GHz when None). ``mapping`` says which threads are which domain's vCPUs (the dict
    ``schedsim trace mapping`` prints; the proposed one when None). ``simulate`` names schedulers to run the
    scenario fitted to the trace under; their runs follow the recording's in ``runs``. Each domain has
    ``wake_to_run_ms`` besides the usual metrics; the recording's run has a ``recorded`` object (format, events,
    skipped events, damage). A gzip-compressed file is read as the CLI reads it. Raises ``ValueError`` for a file
    that is not a trace, or not a regular file (a FIFO, a device); Ctrl-C stops a long read (``KeyboardInterrupt``).
    """
    if not isinstance(path, (str, os.PathLike)):
        raise TypeError(f"path: expected a path (str or os.PathLike), not {type(path).__name__} {path!r}")
    if mapping is not None and not isinstance(mapping, Mapping):
        raise TypeError(f"mapping: expected a dict (as schedsim trace mapping prints), not {type(mapping).__name__}")
    text = _core.trace_report(
        os.fspath(path),
        json.dumps(mapping) if mapping is not None else None,
        whole("tsc_hz", tsc_hz),
        list_of_str(simulate, "simulate"),
    )
    report: dict[str, Any] = json.loads(text)
    return report
