"""schedsim: the hypervisor CPU scheduling simulator from Python.

``run`` simulates a scenario and returns its report (``estimate`` says beforehand what it will cost), ``check``
evaluates its claims, ``trace_report`` reports a recorded run (a perf, ftrace or xentrace trace), and ``sweep``
runs a grid of scenario parameters (the paths of ``schedsim sweep --set``) over seeds and policies into a pandas
DataFrame, on the simulator core's threads or across a Dask cluster, caching every result on disk. A scenario is a
file path, a JSON string or a dict. Reports are bit-for-bit those of the ``schedsim`` CLI and of the page (same
core, integer time).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from . import _core
from ._api import check, estimate, run, trace_report
from ._errors import ScenarioError

if TYPE_CHECKING:
    from ._sweep import sweep

__version__: str = _core.version()
"""The simulator's version: the crate version and a hash of the sources that decide a run's result."""

__all__ = ["ScenarioError", "__version__", "check", "estimate", "run", "sweep", "trace_report"]


def __getattr__(name: str) -> Any:
    # pandas loads on the first sweep, so Dask workers, which import this package to reach the simulator, start
    # fast.
    if name == "sweep":
        from ._sweep import sweep

        return sweep
    raise AttributeError(f"module 'schedsim' has no attribute {name!r}")
