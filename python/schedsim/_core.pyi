"""Type stubs of the Rust module (python/src/lib.rs). Data crosses as JSON text."""

MAX_SCENARIO_BYTES: int

def version() -> str: ...
def metric_matches(patterns: list[str], paths: list[str]) -> list[bool]: ...
def attach_scripts(scenario: str, scripts: list[tuple[str, str]]) -> str: ...
def run(
    scenario: str,
    policies: list[str],
    seed: int | None = None,
    duration_ms: int | None = None,
    variant: str | None = None,
    deterministic: bool = False,
    max_events: int | None = None,
) -> str: ...
def describe(scenario: str) -> str: ...
def check(scenario: str, seeds: int, max_events: int | None = None) -> str: ...
def estimate(scenario: str, policies: list[str], duration_ms: int | None = None, variant: str | None = None) -> str: ...
def plan(
    scenario: str,
    axes: str,
    seeds: int,
    policies: list[str],
    seed: int | None = None,
    duration_ms: int | None = None,
    max_events: int | None = None,
    max_runs: int | None = None,
    max_total_events: int | None = None,
    max_grid_work: int | None = None,
) -> str: ...
def trace_report(
    path: str, mapping: str | None = None, tsc_hz: int | None = None, simulate: list[str] | None = None
) -> str: ...
def run_points(
    scenario: str, paths: list[str], items: str, duration_ms: int | None = None, max_events: int | None = None
) -> str: ...

class LocalSweep:
    def __init__(
        self,
        scenario: str,
        paths: list[str],
        items: str,
        workers: int,
        duration_ms: int | None = None,
        max_events: int | None = None,
    ) -> None: ...
    def poll(self, timeout: float) -> tuple[bool, list[tuple[int, str]]]: ...
    def stop(self) -> None: ...
