//! `schedsim._core`: the Python module over the simulator. It forwards to `schedsim-core`: run a scenario, build the
//! report, and the sweep grid (`schedsim_core::grid`) the CLI's sweeps and shards use too, so a grid means the same
//! runs in Python and in the CLI. Data crosses as JSON strings; the Python side (`python/schedsim/`) parses them. Every
//! simulation runs with the GIL released, so threads and Dask workers run in parallel.

use pyo3::exceptions::{PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use schedsim_core::claims;
use schedsim_core::cost::{self, DEFAULT_MAX_EVENTS};
use schedsim_core::grid::{self, Axis, Grid, GridError, GridSpec, LimitNames, Limits};
use schedsim_core::patch::PatchBudget;
use schedsim_core::report::{self, RunOptions};
use schedsim_core::scenario::{Scenario, ScenarioError, MAX_SEED};
use schedsim_core::sim::{SimOptions, Simulation};
use serde_json::{json, Map, Value};
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::mpsc::{channel, Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// `schedsim._errors.ScenarioError(message, problems, context)`: a Python class, so it pickles across processes.
fn scenario_error(py: Python<'_>, context: &str, e: &ScenarioError) -> PyErr {
    let message = if context.is_empty() {
        e.to_string()
    } else {
        format!("{context}: {e}")
    };
    let made = py
        .import("schedsim._errors")
        .and_then(|m| m.getattr("ScenarioError"))
        .and_then(|cls| cls.call1((message.clone(), e.problems.clone(), context.to_string())));
    match made {
        Ok(err) => PyErr::from_value(err),
        Err(import_failed) => import_failed,
    }
}

fn grid_error(py: Python<'_>, e: GridError) -> PyErr {
    match e {
        GridError::Scenario { context, error } => scenario_error(py, &context, &error),
        GridError::Other(msg) => PyValueError::new_err(msg),
    }
}

fn parse(py: Python<'_>, scenario: &str) -> PyResult<Scenario> {
    Scenario::from_json(scenario).map_err(|e| scenario_error(py, "", &e))
}

/// The event limit of a run (`max_events`, as the CLI's `--max-events`): the default when None, at least 1.
fn limit(max_events: Option<u64>) -> PyResult<u64> {
    match max_events {
        Some(0) => Err(PyValueError::new_err("max_events: must be at least 1")),
        Some(n) => Ok(n),
        None => Ok(DEFAULT_MAX_EVENTS),
    }
}

/// A seed the CLI would take (`--seed`: 0..=2^53-1, what JSON numbers hold exactly).
fn check_seed(seed: Option<u64>) -> PyResult<()> {
    match seed {
        Some(s) if s > MAX_SEED => Err(PyValueError::new_err(format!(
            "seed: {s} is above the largest seed, {MAX_SEED} (2^53-1)"
        ))),
        _ => Ok(()),
    }
}

fn parse_value(text: &str, what: &str) -> PyResult<Value> {
    schedsim_core::scenario::parse_strict(text)
        .map_err(|e| PyValueError::new_err(format!("{what}: not valid JSON: {e}")))
}

/// The scenario (JSON text) with each `(id, source)` pair's policy running that script (`"scheduler": "script"`):
/// replaced in place, or added when the scenario has no policy `id` (`schedsim run --script ID=PATH`).
#[pyfunction]
fn attach_scripts(scenario: &str, scripts: Vec<(String, String)>) -> PyResult<String> {
    let mut v = schedsim_core::scenario::parse_strict(scenario)
        .map_err(|e| PyValueError::new_err(format!("scenario: not valid JSON: {e}")))?;
    schedsim_core::attach_scripts(&mut v, &scripts).map_err(PyValueError::new_err)?;
    Ok(v.to_string())
}

/// Which of `paths` (a run's metric paths) any of `patterns` matches, in order (`schedsim_core::metric_path`).
#[pyfunction]
fn metric_matches(patterns: Vec<String>, paths: Vec<String>) -> Vec<bool> {
    paths
        .iter()
        .map(|path| {
            patterns
                .iter()
                .any(|p| schedsim_core::metric_path::matches(p, path))
        })
        .collect()
}

/// The report (JSON text) of the recorded run in the trace file at `path` (`schedsim trace report`): perf script
/// or ftrace text, perf.data or xentrace, gzip-compressed or not, as the CLI reads them. `mapping` is a mapping's JSON text (the proposed one when None); `simulate` lists
/// schedulers to run the fitted scenario under, their runs following the recording's.
#[pyfunction]
#[pyo3(signature = (path, mapping=None, tsc_hz=None, simulate=None))]
fn trace_report(
    py: Python<'_>,
    path: &str,
    mapping: Option<&str>,
    tsc_hz: Option<u64>,
    simulate: Option<Vec<String>>,
) -> PyResult<String> {
    use schedsim_core::recorded::{fit, open_path, ReadOptions};
    let opts = ReadOptions { tsc_hz };
    let err = |e: String| PyValueError::new_err(e);
    // Read without the GIL; every MiB read (at most every SIGNAL_CHECK) the poll takes it back to run a signal
    // handler, so Ctrl-C stops a long read with KeyboardInterrupt. A FIFO or a device is refused before it blocks.
    let mut raised: Option<PyErr> = None;
    let opened = py.detach(|| {
        let mut last = Instant::now();
        open_path(std::path::Path::new(path), mapping, &opts, &mut || {
            if last.elapsed() < SIGNAL_CHECK {
                return Ok(());
            }
            last = Instant::now();
            Python::attach(|py| py.check_signals()).map_err(|e| {
                raised = Some(e);
                "interrupted".to_string()
            })
        })
    });
    if let Some(e) = raised {
        return Err(e);
    }
    let run = opened.map_err(err)?;
    let err = |e: String| PyValueError::new_err(format!("{path}: {e}"));
    let title = std::path::Path::new(path)
        .file_name()
        .map_or_else(|| "trace".to_string(), |n| n.to_string_lossy().into_owned());
    let report = match simulate {
        Some(s) => {
            let s: Vec<&str> = s.iter().map(String::as_str).collect();
            fit::compare(&run, &title, &s).map_err(err)?
        }
        None => run.full_report(&title).map_err(err)?,
    };
    Ok(schedsim_core::report::to_json_string(&report))
}

/// The simulator's version: the crate's, and a hash of the sources that decide a run's result.
#[pyfunction]
fn version() -> String {
    schedsim_core::VERSION.to_string()
}

/// A scenario (JSON text), one of its variants if named, with the named policies checked (all when empty).
fn scenario_for(
    py: Python<'_>,
    scenario: &str,
    policies: &[String],
    variant: Option<String>,
) -> PyResult<Scenario> {
    let mut sc = parse(py, scenario)?;
    if let Some(label) = variant {
        sc = sc.pick_variant(&label).map_err(PyValueError::new_err)?;
    }
    for p in policies {
        if sc.policy(p).is_none() {
            let known: Vec<&str> = sc.policies.iter().map(|p| p.id.as_str()).collect();
            return Err(PyValueError::new_err(format!(
                "policy {p}: no such policy in {} (has: {})",
                sc.id,
                known.join(", ")
            )));
        }
    }
    Ok(sc)
}

/// Runs a scenario (JSON text) under the named policies (all when empty) and returns the report as JSON text. A run
/// estimated above `max_events` events is refused before it starts, and any run stops at that many (the CLI's
/// `--max-events`; default [`DEFAULT_MAX_EVENTS`]).
#[pyfunction]
#[pyo3(signature = (scenario, policies, seed=None, duration_ms=None, variant=None, deterministic=false, max_events=None))]
#[allow(clippy::too_many_arguments)]
fn run(
    py: Python<'_>,
    scenario: &str,
    policies: Vec<String>,
    seed: Option<u64>,
    duration_ms: Option<u64>,
    variant: Option<String>,
    deterministic: bool,
    max_events: Option<u64>,
) -> PyResult<String> {
    check_seed(seed)?;
    let sc = scenario_for(py, scenario, &policies, variant)?;
    let max_events = limit(max_events)?;
    let opts = RunOptions {
        deterministic,
        seed,
        duration_ms,
        max_events: Some(max_events),
    };
    let with = report::with_overrides(&sc, &opts).map_err(PyValueError::new_err)?;
    cost::within_naming(&with, &policies, max_events, "max_events=")
        .map_err(PyValueError::new_err)?;
    let rep = py
        .detach(|| report::run_scenario(&sc, &policies, &opts))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))?;
    Ok(report::to_json_string(&rep))
}

/// Every claim of a scenario (JSON text) and of each of its variants over `seeds` consecutive seeds, judged with
/// its ablation: the verdicts `schedsim check --seeds N` renders (`schedsim_core::claims::check`), as JSON text,
/// one object per claim and setting (`FileCheck::results`, what `schedsim check --json` prints). An ablation whose runs fail is that claim's ablation broken; the scenario's own runs failing
/// raise `RuntimeError`.
#[pyfunction]
#[pyo3(signature = (scenario, seeds, max_events=None))]
fn check(py: Python<'_>, scenario: &str, seeds: u64, max_events: Option<u64>) -> PyResult<String> {
    let sc = parse(py, scenario)?;
    let opts = RunOptions {
        deterministic: true,
        max_events: Some(limit(max_events)?),
        ..RunOptions::default()
    };
    let file = py
        .detach(|| {
            claims::check::run(
                &sc.id,
                &sc,
                seeds,
                &opts,
                schedsim_core::patch::MAX_PATCH_WORK,
            )
        })
        .map_err(PyRuntimeError::new_err)?;
    Ok(Value::Array(file.results()).to_string())
}

/// The estimated cost of running a scenario (JSON text) under the named policies (all when empty), as JSON text:
/// `{"events_per_run", "runs", "events", "bytes_per_run", "seconds"}` (`schedsim_core::cost::Cost`).
#[pyfunction]
#[pyo3(signature = (scenario, policies, duration_ms=None, variant=None))]
fn estimate(
    py: Python<'_>,
    scenario: &str,
    policies: Vec<String>,
    duration_ms: Option<u64>,
    variant: Option<String>,
) -> PyResult<String> {
    let sc = scenario_for(py, scenario, &policies, variant)?;
    let opts = RunOptions {
        duration_ms,
        ..RunOptions::default()
    };
    let sc = report::with_overrides(&sc, &opts).map_err(PyValueError::new_err)?;
    serde_json::to_string(&cost::estimate(&sc, &policies))
        .map_err(|e| PyRuntimeError::new_err(e.to_string()))
}

/// What the Python side needs to know of a scenario: `{"id", "seed", "policies": [ids], "variants": [{"label",
/// "seed"}]}`.
#[pyfunction]
fn describe(py: Python<'_>, scenario: &str) -> PyResult<String> {
    let sc = parse(py, scenario)?;
    // Each variant built in turn and dropped (its seed is what a patch made it), so an error in one is raised here.
    let mut budget = PatchBudget::default();
    let mut variants = Vec::new();
    for (i, v) in sc.variants.iter().enumerate() {
        let built = sc
            .variant(i, &mut budget)
            .map_err(|e| scenario_error(py, "", &e))?;
        variants.push(json!({"label": v.label, "seed": built.seed}));
    }
    let policies: Vec<&str> = sc.policies.iter().map(|p| p.id.as_str()).collect();
    Ok(
        json!({"id": sc.id, "seed": sc.seed, "policies": policies, "variants": variants})
            .to_string(),
    )
}

/// Builds and validates a sweep grid, refusing it if it has more than `max_runs` runs, if a combination's run is
/// estimated above `max_events` events or all its runs above `max_total_events`, or if its combinations x the
/// scenario's size pass `max_grid_work` bytes (the CLI's `--max-runs`, `--max-events`, `--max-total-events`,
/// `--max-grid-work`). `axes` is JSON `[[path, [values...]], ...]`. Returns JSON `{"scenario", "paths", "combos":
/// [[values...]], "work": [[combination, seed, policy], ...]}` in grid order. The check runs with the GIL released
/// and looks for Ctrl-C every [`SIGNAL_CHECK`], so a long one stops with `KeyboardInterrupt`.
#[pyfunction]
#[pyo3(signature = (scenario, axes, seeds, policies, seed=None, duration_ms=None, max_events=None, max_runs=None, max_total_events=None, max_grid_work=None))]
#[allow(clippy::too_many_arguments)]
fn plan(
    py: Python<'_>,
    scenario: &str,
    axes: &str,
    seeds: u64,
    policies: Vec<String>,
    seed: Option<u64>,
    duration_ms: Option<u64>,
    max_events: Option<u64>,
    max_runs: Option<u64>,
    max_total_events: Option<u64>,
    max_grid_work: Option<u64>,
) -> PyResult<String> {
    let at_least_one = |n: Option<u64>, what: &str| match n {
        Some(0) => Err(PyValueError::new_err(format!("{what}: must be at least 1"))),
        _ => Ok(n),
    };
    let limits = Limits {
        max_events: limit(max_events)?,
        max_runs: at_least_one(max_runs, "max_runs")?.unwrap_or(grid::DEFAULT_MAX_RUNS),
        max_total_events: at_least_one(max_total_events, "max_total_events")?
            .unwrap_or(grid::DEFAULT_MAX_TOTAL_EVENTS),
        max_grid_work: at_least_one(max_grid_work, "max_grid_work")?
            .unwrap_or(grid::DEFAULT_MAX_GRID_WORK),
    };
    check_seed(seed)?;
    parse(py, scenario)?;
    let base = parse_value(scenario, "scenario")?;
    let axes: Vec<(String, Vec<Value>)> = serde_json::from_value(parse_value(axes, "grid")?)
        .map_err(|e| PyValueError::new_err(format!("grid: expected [[path, [values]]]: {e}")))?;
    let axes: Vec<Axis> = axes
        .into_iter()
        .map(|(path, values)| Axis::new(&path, values))
        .collect::<Result<_, _>>()
        .map_err(|e| PyValueError::new_err(format!("grid: {e}")))?;
    let spec = GridSpec {
        axes,
        seeds,
        seed,
        duration_ms,
        policies,
    };
    let names = LimitNames {
        max_events: "max_events=",
        max_runs: "max_runs=",
        max_total_events: "max_total_events=",
        max_grid_work: "max_grid_work=",
    };
    // A signal handler runs only when this thread holds the GIL: between combinations, at most every
    // SIGNAL_CHECK, the check takes it back to run any (Ctrl-C raises KeyboardInterrupt there) and stops.
    let mut raised: Option<PyErr> = None;
    let built = py.detach(|| {
        let mut last = Instant::now();
        Grid::new_polled(&base, &spec, limits, names, &mut || {
            if last.elapsed() < SIGNAL_CHECK {
                return Ok(());
            }
            last = Instant::now();
            Python::attach(|py| py.check_signals()).map_err(|e| {
                raised = Some(e);
                GridError::Other("interrupted".into())
            })
        })
    });
    if let Some(e) = raised {
        return Err(e);
    }
    let grid = built.map_err(|e| grid_error(py, e))?;
    let combos: Vec<Value> = (0..grid.combinations())
        .map(|c| Value::from(grid.combo(c)))
        .collect();
    let work: Vec<Value> = (0..grid.len())
        .map(|r| {
            let w = grid.item(r);
            json!([w.combination, w.seed, w.policy])
        })
        .collect();
    Ok(
        json!({"scenario": grid.scenario_id, "paths": grid.paths, "combos": combos, "work": work})
            .to_string(),
    )
}

/// How often a long check with the GIL released looks for Ctrl-C: well within the second a sweep promises to stop
/// in, rare enough that taking the GIL back costs nothing measurable.
const SIGNAL_CHECK: Duration = Duration::from_millis(50);

/// Every number in a run object by its dotted path (`domains.web.cpu_share`), claims and wall-clock time left out.
fn leaves(v: &Value, prefix: &str, out: &mut Map<String, Value>) {
    match v {
        Value::Number(_) => {
            out.insert(prefix.to_string(), v.clone());
        }
        Value::Object(obj) => {
            for (k, child) in obj {
                if prefix.is_empty() && matches!(k.as_str(), "claims" | "wall_ms") {
                    continue;
                }
                let path = if prefix.is_empty() {
                    k.clone()
                } else {
                    format!("{prefix}.{k}")
                };
                leaves(child, &path, out);
            }
        }
        _ => {}
    }
}

/// Runs sweep points: `items` is JSON `[[values, seed, policy], ...]` for the grid `paths` over `scenario`. Returns
/// JSON `[{metric path: number}, ...]`, one object per item, in order. A combination's scenario is built once per
/// call, however many of its seeds and policies the call runs.
#[pyfunction]
#[pyo3(signature = (scenario, paths, items, duration_ms=None, max_events=None))]
fn run_points(
    py: Python<'_>,
    scenario: &str,
    paths: Vec<String>,
    items: &str,
    duration_ms: Option<u64>,
    max_events: Option<u64>,
) -> PyResult<String> {
    let max_events = limit(max_events)?;
    let base = parse_value(scenario, "scenario")?;
    let items: Vec<(Vec<Value>, u64, String)> =
        serde_json::from_value(parse_value(items, "items")?).map_err(|e| {
            PyValueError::new_err(format!("items: expected [[values, seed, policy]]: {e}"))
        })?;
    let out = py.detach(|| {
        let mut built = Combination::default();
        let mut out = Vec::with_capacity(items.len());
        for (values, seed, policy) in &items {
            let sc = built.get(&base, &paths, values, duration_ms, policy)?;
            let what = || {
                format!(
                    "({}), seed {seed}, policy {policy}",
                    grid::describe(&paths, values)
                )
            };
            let run = grid::run_point(sc, *seed, policy, true, Some(max_events))
                .map_err(|e| format!("{}: {e}", what()))?;
            let mut m = Map::new();
            leaves(&run, "", &mut m);
            out.push(Value::Object(m));
        }
        Ok::<Vec<Value>, GridError>(out)
    });
    let out = out.map_err(|e| grid_error(py, e))?;
    Ok(Value::Array(out).to_string())
}

/// The scenario of one combination of a grid, built when the combination changes and kept for the sweep points
/// that follow it (points come in combination order): what `run_points` and each `LocalSweep` thread hold, one
/// combination at a time.
#[derive(Default)]
struct Combination {
    key: String,
    scenario: Option<Scenario>,
}

impl Combination {
    /// The scenario of `values` (on `paths` over `base`) checked for `policy`, built unless it is the one held.
    fn get(
        &mut self,
        base: &Value,
        paths: &[String],
        values: &[Value],
        duration_ms: Option<u64>,
        policy: &String,
    ) -> Result<&Scenario, GridError> {
        let key = Value::from(values.to_vec()).to_string();
        if self.scenario.is_none() || self.key != key {
            self.scenario = None;
            let (sc, _) = grid::combination_scenario(
                base,
                paths,
                values,
                duration_ms,
                std::slice::from_ref(policy),
            )?;
            self.key = key;
            self.scenario = Some(sc);
        }
        Ok(self.scenario.as_ref().expect("built above"))
    }
}

/// One sweep point run to the end on a worker thread, stopping within a few milliseconds of `cancel` being set:
/// the run steps [`STEP_EVENTS`] events at a time and looks at the flag between steps.
fn run_cancellable(
    sc: &Scenario,
    seed: u64,
    policy: &str,
    max_events: u64,
    cancel: &AtomicBool,
) -> Result<Option<Value>, String> {
    let opts = RunOptions {
        seed: Some(seed),
        deterministic: true,
        max_events: Some(max_events),
        ..RunOptions::default()
    };
    let sc = report::with_overrides(sc, &opts)?;
    // Nothing reads a sweep run's trace: it is not recorded.
    let sim_opts = SimOptions {
        trace: false,
        max_events: Some(max_events),
        ..SimOptions::default()
    };
    let mut sim = Simulation::with_options(&sc, policy, sim_opts).map_err(|e| e.to_string())?;
    while !sim.step(STEP_EVENTS).map_err(|e| e.to_string())? {
        if cancel.load(Ordering::Relaxed) {
            return Ok(None);
        }
    }
    Ok(Some(sim.run_report(&opts).to_value()))
}

/// Events a cancellable run steps between looks at its cancel flag: about a millisecond of simulation.
const STEP_EVENTS: u64 = 20_000;

/// What a worker thread sends back: the item's index and its metrics (JSON text), or the failure.
type Finished = (usize, Result<String, GridError>);

/// A local sweep running on the core's own threads, the GIL released (`schedsim.sweep` without a Dask client):
/// `poll` hands back the runs finished so far, `cancel` stops every thread within a few milliseconds (Ctrl-C), and
/// what finished before is kept. No process pool: nothing to import in a child, so a script without a main guard,
/// a notebook and `python -` all work.
#[pyclass]
struct LocalSweep {
    finished: Mutex<Receiver<Finished>>,
    cancel: Arc<AtomicBool>,
    threads: Mutex<Vec<JoinHandle<()>>>,
}

#[pymethods]
impl LocalSweep {
    /// Starts `workers` threads over `items` (JSON `[[values, seed, policy], ...]`) of the grid `paths` over
    /// `scenario`. Items are taken in order; after a failure no new item starts.
    #[new]
    #[pyo3(signature = (scenario, paths, items, workers, duration_ms=None, max_events=None))]
    fn new(
        scenario: &str,
        paths: Vec<String>,
        items: &str,
        workers: usize,
        duration_ms: Option<u64>,
        max_events: Option<u64>,
    ) -> PyResult<LocalSweep> {
        let max_events = limit(max_events)?;
        let base = Arc::new(parse_value(scenario, "scenario")?);
        let items: Vec<(Vec<Value>, u64, String)> =
            serde_json::from_value(parse_value(items, "items")?).map_err(|e| {
                PyValueError::new_err(format!("items: expected [[values, seed, policy]]: {e}"))
            })?;
        let items = Arc::new(items);
        let paths = Arc::new(paths);
        let next = Arc::new(AtomicUsize::new(0));
        let cancel = Arc::new(AtomicBool::new(false));
        let (tx, rx) = channel::<Finished>();
        let mut threads = Vec::new();
        for _ in 0..workers.clamp(1, items.len().max(1)) {
            let (base, items, paths, next, cancel, tx) = (
                base.clone(),
                items.clone(),
                paths.clone(),
                next.clone(),
                cancel.clone(),
                tx.clone(),
            );
            threads.push(std::thread::spawn(move || {
                let mut built = Combination::default();
                while !cancel.load(Ordering::Relaxed) {
                    let i = next.fetch_add(1, Ordering::Relaxed);
                    let Some((values, seed, policy)) = items.get(i) else {
                        break;
                    };
                    let result = (|| {
                        let sc = built.get(&base, &paths, values, duration_ms, policy)?;
                        let what = || {
                            format!(
                                "({}), seed {seed}, policy {policy}",
                                grid::describe(&paths, values)
                            )
                        };
                        let run = run_cancellable(sc, *seed, policy, max_events, &cancel)
                            .map_err(|e| format!("{}: {e}", what()))?;
                        Ok::<Option<String>, GridError>(run.map(|run| {
                            let mut m = Map::new();
                            leaves(&run, "", &mut m);
                            Value::Object(m).to_string()
                        }))
                    })();
                    let send = match result {
                        Ok(Some(metrics)) => (i, Ok(metrics)),
                        Ok(None) => break,
                        Err(e) => {
                            cancel.store(true, Ordering::Relaxed);
                            (i, Err(e))
                        }
                    };
                    if tx.send(send).is_err() {
                        break;
                    }
                }
            }));
        }
        Ok(LocalSweep {
            finished: Mutex::new(rx),
            cancel,
            threads: Mutex::new(threads),
        })
    }

    /// Waits up to `timeout` seconds (the GIL released) for runs to finish and returns `(done, [(index, metrics
    /// JSON)])`: every run finished so far, and whether all threads have stopped. A failed run raises its error
    /// (after the threads stop taking new runs).
    fn poll(&self, py: Python<'_>, timeout: f64) -> PyResult<(bool, Vec<(usize, String)>)> {
        let got = py.detach(|| {
            let rx = self.finished.lock().expect("poll is not re-entered");
            let mut out = Vec::new();
            let first = rx.recv_timeout(Duration::from_secs_f64(timeout.clamp(0.0, 10.0)));
            let disconnected = match first {
                Ok(x) => {
                    out.push(x);
                    loop {
                        match rx.try_recv() {
                            Ok(x) => out.push(x),
                            Err(TryRecvError::Empty) => break false,
                            Err(TryRecvError::Disconnected) => break true,
                        }
                    }
                }
                Err(RecvTimeoutError::Timeout) => false,
                Err(RecvTimeoutError::Disconnected) => true,
            };
            (disconnected, out)
        });
        let (done, finished) = got;
        let mut ok = Vec::with_capacity(finished.len());
        let mut failure = None;
        for (i, r) in finished {
            match r {
                Ok(m) => ok.push((i, m)),
                Err(e) => {
                    if failure.as_ref().is_none_or(|(j, _)| i < *j) {
                        failure = Some((i, e));
                    }
                }
            }
        }
        if let Some((_, e)) = failure {
            self.stop(py);
            return Err(grid_error(py, e));
        }
        Ok((done, ok))
    }

    /// Stops every thread (a running simulation within a few milliseconds) and waits for them, the GIL released.
    fn stop(&self, py: Python<'_>) {
        self.cancel.store(true, Ordering::Relaxed);
        let threads: Vec<JoinHandle<()>> =
            std::mem::take(&mut *self.threads.lock().expect("not poisoned"));
        py.detach(|| {
            for t in threads {
                let _ = t.join();
            }
        });
    }
}

impl Drop for LocalSweep {
    fn drop(&mut self) {
        // A sweep dropped mid-way (an exception in the caller) leaves no thread running.
        self.cancel.store(true, Ordering::Relaxed);
    }
}

// Counts what each thread allocates, so that a script policy's copying of large values counts as its work.
#[global_allocator]
static ALLOCATOR: schedsim_core::allocated::Counting = schedsim_core::allocated::Counting;

#[pymodule]
fn _core(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(version, m)?)?;
    m.add_function(wrap_pyfunction!(attach_scripts, m)?)?;
    m.add_function(wrap_pyfunction!(metric_matches, m)?)?;
    m.add_function(wrap_pyfunction!(run, m)?)?;
    m.add_function(wrap_pyfunction!(trace_report, m)?)?;
    m.add_function(wrap_pyfunction!(check, m)?)?;
    m.add_function(wrap_pyfunction!(describe, m)?)?;
    m.add_function(wrap_pyfunction!(estimate, m)?)?;
    m.add_function(wrap_pyfunction!(plan, m)?)?;
    m.add_function(wrap_pyfunction!(run_points, m)?)?;
    m.add_class::<LocalSweep>()?;
    m.add(
        "MAX_SCENARIO_BYTES",
        schedsim_core::scenario::MAX_SCENARIO_BYTES,
    )?;
    Ok(())
}
