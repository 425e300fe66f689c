//! schedsim-wasm: the thin wasm-bindgen adapter over `schedsim-core`.
//!
//! The page holds an opaque [`Simulation`] handle. Small structured data (scenario, report, metadata, decision log)
//! crosses as JSON strings that the TypeScript side parses into `readonly` types; bulk series (schedule segments,
//! share samples) cross as `Float64Array`s. Nothing here decides anything: every function forwards to the core.

use schedsim_core::metrics::Distribution;
use schedsim_core::scenario::{Scenario, ScenarioError};
use schedsim_core::trace::Trace;
use schedsim_core::{report, sim};
use sim::{Detail, SimOptions};
use std::cell::RefCell;
use std::rc::Rc;
use wasm_bindgen::prelude::*;

fn js_err(e: impl std::fmt::Display) -> JsError {
    JsError::new(&e.to_string())
}

// Counts what each thread allocates, so that a script policy's copying of large values counts as its work.
#[global_allocator]
static ALLOCATOR: schedsim_core::allocated::Counting = schedsim_core::allocated::Counting;

thread_local! {
    /// The message of the last Rust panic: a panic reaches JavaScript only as "unreachable", so the page asks.
    static LAST_PANIC: std::cell::RefCell<Option<String>> = const { std::cell::RefCell::new(None) };
}

/// Installs the panic hook when the module starts.
#[wasm_bindgen(start)]
pub fn start() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info.to_string();
        LAST_PANIC.with(|p| *p.borrow_mut() = Some(msg));
    }));
}

/// The message of the last panic inside the simulator (a schedsim bug), if one happened. After a panic the module
/// instance must be discarded; this call only reads the stored message.
#[wasm_bindgen]
pub fn last_panic() -> Option<String> {
    LAST_PANIC.with(|p| p.borrow().clone())
}

thread_local! {
    /// The last scenario parsed, with its text. A worker's run parses one file for its cost estimate and again for
    /// the run (and the helper validates, then estimates): each parse validates every variant and every claim's
    /// ablation too (49 validations in Fig. 13's file), so the second one is served from here.
    static PARSED: RefCell<Option<(String, Rc<Scenario>)>> = const { RefCell::new(None) };
}

/// `Scenario::from_json`, answered from [`PARSED`] when the text is the last one parsed (parsing is a pure
/// function of the text, so the answer is the same); a file that fails is not kept.
fn parsed(scenario_json: &str) -> Result<Rc<Scenario>, ScenarioError> {
    let hit = PARSED.with(|p| p.borrow().as_ref().filter(|(text, _)| text == scenario_json).map(|(_, s)| s.clone()));
    if let Some(sc) = hit {
        return Ok(sc);
    }
    let sc = Rc::new(Scenario::from_json(scenario_json)?);
    PARSED.with(|p| *p.borrow_mut() = Some((scenario_json.to_owned(), sc.clone())));
    Ok(sc)
}

/// The file [`warm_up`] runs: a paper scenario of the Credit family (the library's most common) with I/O, the
/// inference, variants and claims with ablations, so parsing and the engine's common paths are all exercised.
const WARM_UP_SCENARIO: &str = include_str!("../../../scenarios/p000-fig12-inspection-window.json");

/// Does now what a cold worker's first run would otherwise do first: builds the schema validator and, with
/// `engine_ms` > 0, parses a library file and runs its first policy for that much simulated time in replay mode
/// (detail recorded, checkpoints taken), then packs its results. A fresh WebAssembly module runs its code in the
/// engine's baseline tier until each function has run enough to be optimised (a cold run took twice a warm
/// one's time); this gets that done while the page and its scenario are still loading. Changes no state a later
/// call sees (the validator aside) and nothing any run computes.
#[wasm_bindgen]
pub fn warm_up(engine_ms: f64) {
    schedsim_core::scenario::prepare_validator();
    if engine_ms < 1.0 {
        return;
    }
    let Ok(mut sc) = Scenario::from_json(WARM_UP_SCENARIO) else { return };
    sc.duration_ms = engine_ms as u64;
    // Its measured window (after the scenario's warm-up) must still lie inside the shortened run.
    sc.warmup_ms = sc.warmup_ms.min(sc.duration_ms / 2);
    let Some(policy) = sc.policies.first().map(|p| p.id.clone()) else { return };
    let ns = sc.duration_ms * 1_000_000;
    let opts = SimOptions {
        detail: Detail::Replay { checkpoint_every_ns: (ns / 4).max(1) },
        opening_ns: ns / 2,
        ..SimOptions::default()
    };
    if let Ok(mut sim) = sim::Simulation::with_options(&sc, &policy, opts) {
        if sim.run().is_ok() {
            std::hint::black_box(serde_json::to_string(&sim.run_report(&report::RunOptions::default())).ok());
            std::hint::black_box(sim.detail().segments_flat());
        }
    }
}

/// Validates a scenario file; throws an `Error` whose message names the offending field path.
#[wasm_bindgen]
pub fn validate_scenario(scenario_json: &str) -> Result<(), JsError> {
    parsed(scenario_json).map(|_| ()).map_err(js_err)
}

/// The estimated cost of running the named policies (a JSON array of ids; `[]` means all) as JSON text
/// `{"events_per_run", "runs", "events", "bytes_per_run", "seconds", "text", "duration_ms"}` (see
/// `schedsim_core::cost`; `duration_ms`: the scenario's simulated duration, for sizing a replay run's window), so the
/// page can ask before starting a shared link's run of minutes. Throws on an invalid scenario.
#[wasm_bindgen]
pub fn estimate_cost(scenario_json: &str, policies_json: &str) -> Result<String, JsError> {
    cost_json(scenario_json, policies_json).map_err(js_err)
}

/// [`estimate_cost`] without the JavaScript error type, so native tests can call it.
fn cost_json(scenario_json: &str, policies_json: &str) -> Result<String, String> {
    let scenario = parsed(scenario_json).map_err(|e| e.to_string())?;
    let policies: Vec<String> = serde_json::from_str(policies_json).map_err(|e| e.to_string())?;
    let policies: Vec<String> = policies.into_iter().filter(|p| scenario.policy(p).is_some()).collect();
    let cost = schedsim_core::cost::estimate(&scenario, &policies);
    let mut v = serde_json::to_value(&cost).map_err(|e| e.to_string())?;
    v["text"] = cost.describe().into();
    v["duration_ms"] = scenario.duration_ms.into();
    Ok(v.to_string())
}

/// Runs the named policies (a JSON array of ids; `[]` means all) and returns the report as
/// JSON text. With `deterministic`, wall-clock fields are omitted so the text is byte-identical to
/// `schedsim run --deterministic` on the same file.
#[wasm_bindgen]
pub fn run_report(scenario_json: &str, policies_json: &str, deterministic: bool) -> Result<String, JsError> {
    let scenario = parsed(scenario_json).map_err(js_err)?;
    let policies: Vec<String> = serde_json::from_str(policies_json).map_err(js_err)?;
    let opts = report::RunOptions { deterministic, ..Default::default() };
    let rep = report::run_scenario(&scenario, &policies, &opts).map_err(js_err)?;
    Ok(report::to_json_string(&rep))
}

/// The script policy's templates as JSON text `[{"id", "title", "description", "source", "vars"}]`,
/// for the page's "New scheduler from template".
#[wasm_bindgen(js_name = scriptTemplates)]
pub fn script_templates() -> String {
    templates_json().to_string()
}

/// [`script_templates`] as a JSON value, so native tests can call it.
fn templates_json() -> serde_json::Value {
    use schedsim_core::policy::script::TEMPLATES;
    serde_json::Value::Array(
        TEMPLATES
            .iter()
            .map(|t| {
                serde_json::json!({
                    "id": t.id,
                    "title": t.title,
                    "description": t.description,
                    "source": t.source,
                    "vars": serde_json::from_str::<serde_json::Value>(t.vars).unwrap_or_default(),
                })
            })
            .collect(),
    )
}

/// Compiles a script policy's Rhai source without running it: undefined when it compiles, else its first syntax
/// error as JSON text `{"line", "column", "message"}` (line and column 1-based), so the editor marks it as typed.
#[wasm_bindgen(js_name = checkScript)]
pub fn check_script(source: &str) -> Option<String> {
    script_problem(source).map(|v| v.to_string())
}

/// [`check_script`] as a JSON value, so native tests can call it.
fn script_problem(source: &str) -> Option<serde_json::Value> {
    schedsim_core::policy::script::check_source(source)
        .err()
        .map(|e| serde_json::json!({ "line": e.line, "column": e.column, "message": e.message }))
}

/// Evaluates the scenario's claims over run objects produced by [`Simulation::report_json`] (a JSON array), each
/// with its verdict (`verdict`). `ablations_json`, when given, is an object from claim index to that claim's
/// ablation as far as it ran: `{"K": {"runs": [run objects of the ablated scenario]}}` or `{"K": {"error": "why
/// its runs failed"}}`; a claim whose ablation is not there is judged as if it had not run yet.
#[wasm_bindgen]
pub fn evaluate_claims(
    scenario_json: &str,
    runs_json: &str,
    ablations_json: Option<String>,
) -> Result<String, JsError> {
    claims_json(scenario_json, runs_json, ablations_json.as_deref()).map_err(js_err)
}

/// [`evaluate_claims`] without the JavaScript error type, so native tests can call it.
fn claims_json(scenario_json: &str, runs_json: &str, ablations_json: Option<&str>) -> Result<String, String> {
    let scenario = parsed(scenario_json).map_err(|e| e.to_string())?;
    let runs: Vec<serde_json::Value> = serde_json::from_str(runs_json).map_err(|e| format!("runs: {e}"))?;
    let ablations: std::collections::BTreeMap<usize, schedsim_core::claims::AblationRuns> = match ablations_json {
        Some(text) => serde_json::from_str(text).map_err(|e| format!("ablations: {e}"))?,
        None => Default::default(),
    };
    let claims = schedsim_core::claims::evaluate_with(&scenario, &runs, &ablations);
    serde_json::to_string(&claims).map_err(|e| e.to_string())
}

/// Claim `k`'s ablation as JSON text `{"scenario", "label", "policy", "reads"}`: the ablated scenario file (built by
/// the core's `Scenario::ablated`: same seed and duration, claims kept), the ablation's label, the claim's subject
/// policy and every policy whose run the claim reads (all of them must run on the ablated scenario to judge it).
/// Throws when the claim does not exist, has no ablation, or its patch does not apply.
#[wasm_bindgen]
pub fn ablation_json(scenario_json: &str, k: u32) -> Result<String, JsError> {
    ablation(scenario_json, k as usize).map(|v| v.to_string()).map_err(js_err)
}

/// [`ablation_json`] without the JavaScript error type, so native tests can call it.
fn ablation(scenario_json: &str, k: usize) -> Result<serde_json::Value, String> {
    let scenario = parsed(scenario_json).map_err(|e| e.to_string())?;
    let claim = scenario.claims.get(k).ok_or_else(|| format!("the scenario has no claim {k}"))?;
    let label = claim.without.as_ref().map(|a| a.label.clone());
    let ablated = scenario.ablated(k).ok_or_else(|| format!("claim {k} names no ablation ('without')"))?;
    let ablated = ablated.map_err(|e| e.to_string())?;
    Ok(serde_json::json!({
        "scenario": ablated.doc.to_string(),
        "label": label,
        "policy": claim.subject(),
        "reads": claim.policies(),
    }))
}

/// One policy's run of one scenario, stepped from a Web Worker so it can report progress and be cancelled.
#[wasm_bindgen]
pub struct Simulation {
    inner: sim::Simulation,
    /// Each domain's wake-to-run latencies, measured once when first asked for (a replay run is replayed for it).
    wake: std::cell::OnceCell<Result<schedsim_core::recorded::wake::WakeToRun, String>>,
}

impl Simulation {
    /// The run's own detail and the stretch it may speak for [ns]: a replay run's focused window, else all of it.
    fn held(&self) -> Held<'_> {
        Held { trace: self.inner.detail(), span: self.inner.focused().unwrap_or((0, u64::MAX)) }
    }
}

/// The detail queries, over a trace and the stretch its detail covers: one implementation for a run's own detail
/// ([`Simulation`]) and for a window replayed apart ([`ReplayWindow`]).
struct Held<'a> {
    trace: &'a Trace,
    /// [ns]
    span: (u64, u64),
}

/// A time from JavaScript [ns] as the core's integer nanoseconds (negative: 0).
fn ns(t: f64) -> u64 {
    t.max(0.0) as u64
}

impl Held<'_> {
    fn segments(&self) -> js_sys::Float64Array {
        js_sys::Float64Array::from(self.trace.segments_flat().as_slice())
    }

    fn io_events_json(&self, from_ns: f64, to_ns: f64, limit: u32) -> String {
        serde_json::to_string(&self.trace.io_events(ns(from_ns), ns(to_ns), limit as usize)).unwrap_or_default()
    }

    fn task_states_json(&self, from_ns: f64, to_ns: f64, limit: u32) -> String {
        serde_json::to_string(&self.trace.task_states(ns(from_ns), ns(to_ns), limit as usize)).unwrap_or_default()
    }

    fn vcpu_states(&self, from_ns: f64, to_ns: f64, limit: u32) -> js_sys::Float64Array {
        let rows = self.trace.vcpu_states_flat(ns(from_ns), ns(to_ns), limit as usize, self.span);
        js_sys::Float64Array::from(rows.as_slice())
    }

    fn vcpu_state_shares(&self, from_ns: f64, to_ns: f64, buckets: u32) -> js_sys::Float64Array {
        let shares = self.trace.vcpu_state_shares(ns(from_ns), ns(to_ns), buckets as usize, self.span);
        js_sys::Float64Array::from(shares.as_slice())
    }

    fn io_delivery_counts(&self, from_ns: f64, to_ns: f64, buckets: u32) -> js_sys::Uint32Array {
        let counts = self.trace.io_delivery_counts(ns(from_ns), ns(to_ns), buckets as usize, self.span);
        js_sys::Uint32Array::from(counts.as_slice())
    }

    fn wake_latency_map(&self, from_ns: f64, to_ns: f64, buckets: u32) -> js_sys::Float64Array {
        let map = self.trace.wake_latency_map(ns(from_ns), ns(to_ns), buckets as usize, self.span);
        js_sys::Float64Array::from(map.as_slice())
    }

    fn runqueues_json(&self, t_ns: f64) -> String {
        serde_json::to_string(&self.trace.runqueues_at(ns(t_ns))).unwrap_or_default()
    }

    fn runqueue_changes_json(&self, from_ns: f64, to_ns: f64, limit: u32) -> String {
        let r = self.trace.runqueue_changes(ns(from_ns), ns(to_ns), limit as usize);
        serde_json::to_string(&r).unwrap_or_default()
    }

    fn decisions_json(&self, from_ns: f64, to_ns: f64, limit: u32) -> String {
        serde_json::to_string(&self.trace.decisions(ns(from_ns), ns(to_ns), limit as usize)).unwrap_or_default()
    }
}

/// The detail queries a run ([`Simulation`]), a window replayed apart ([`ReplayWindow`]) and a recorded trace
/// ([`RecordedTrace`]) answer alike, each over what its `held()` holds: one list, so the three cannot drift.
macro_rules! detail_queries {
    ($t:ty) => {
        #[wasm_bindgen]
        impl $t {
            /// Schedule segments, flattened rows of 5: `pcpu, start_ns, end_ns, vcpu, task` (vcpu and task are
            /// indices into `meta.vcpus` and `meta.tasks`; task is -1 for the guest idle loop).
            pub fn segments(&self) -> js_sys::Float64Array {
                self.held().segments()
            }

            /// Event-channel notifications (pending, delivered with their wait) between two times (ns), as JSON
            /// text.
            pub fn io_events_json(&self, from_ns: f64, to_ns: f64, limit: u32) -> String {
                self.held().io_events_json(from_ns, to_ns, limit)
            }

            /// Every vCPU's state between two times (ns), by vCPU then time, at most `limit` spans, as rows of 4
            /// numbers: vcpu, start_ns, end_ns, state (0 running, 1 spinning, 2 runnable, 3 blocked); for the
            /// state lanes. Only the detail held answers (a replay run: its focused window), so no state is drawn
            /// past it.
            pub fn vcpu_states(&self, from_ns: f64, to_ns: f64, limit: u32) -> js_sys::Float64Array {
                self.held().vcpu_states(from_ns, to_ns, limit)
            }

            /// The state lanes at a zoom too dense for spans: between two times (ns) cut into `buckets` equal
            /// columns, each vCPU's share of each column's time per state [0, 1], at
            /// `(vcpu * buckets + column) * 4 + state`.
            pub fn vcpu_state_shares(&self, from_ns: f64, to_ns: f64, buckets: u32) -> js_sys::Float64Array {
                self.held().vcpu_state_shares(from_ns, to_ns, buckets)
            }

            /// Delivered notifications between two times (ns) per column of `buckets` equal columns (the I/O
            /// strip at a zoom too dense for one bar each).
            pub fn io_delivery_counts(&self, from_ns: f64, to_ns: f64, buckets: u32) -> js_sys::Uint32Array {
                self.held().io_delivery_counts(from_ns, to_ns, buckets)
            }

            /// Every pCPU's run queue at a time (ns):
            /// `[{"t_ns", "running": {"vcpu","pri","class","credit"}|null, "queued": [...]}|null]`.
            pub fn runqueues_json(&self, t_ns: f64) -> String {
                self.held().runqueues_json(t_ns)
            }

            /// Every pCPU's run-queue snapshots with `from_ns < t <= to_ns` in time order (several per instant
            /// when a decision took several steps), as JSON text `[{"pcpu", "t_ns", "running", "queued"}]`;
            /// `null` when there are more than `limit` (the page then jumps rather than animating each step).
            pub fn runqueue_changes_json(&self, from_ns: f64, to_ns: f64, limit: u32) -> String {
                self.held().runqueue_changes_json(from_ns, to_ns, limit)
            }

            /// Scheduling decisions with their one-line reasons between two times (ns), at most `limit`, as JSON
            /// text (a recorded trace's: its switches with the states they left, and Xen's scheduler marks).
            pub fn decisions_json(&self, from_ns: f64, to_ns: f64, limit: u32) -> String {
                self.held().decisions_json(from_ns, to_ns, limit)
            }
        }
    };
}

detail_queries!(Simulation);
detail_queries!(ReplayWindow);
detail_queries!(RecordedTrace);

#[wasm_bindgen]
impl Simulation {
    /// Builds the host for `policy_id` (one of the scenario's policy ids). Throws on a bad scenario or id.
    #[wasm_bindgen(constructor)]
    pub fn new(scenario_json: &str, policy_id: &str) -> Result<Simulation, JsError> {
        let scenario = parsed(scenario_json).map_err(js_err)?;
        let inner = sim::Simulation::new(&scenario, policy_id).map_err(js_err)?;
        Ok(Simulation { inner, wake: Default::default() })
    }

    /// Builds the host in replay mode: the run records the overview only (report, shares, distributions, Lag,
    /// decision count, the inference's beliefs and partial boosts in time buckets) and checkpoints its state every
    /// `checkpoint_every_ms` of simulated time (further apart once their memory budget is reached); `focusWindow`
    /// replays a window's detail. The detail of its first `opening_ms` (0: none) is recorded as the run passes
    /// and held, so the opening view needs no replay. Throws like the constructor.
    #[wasm_bindgen(js_name = withReplay)]
    pub fn with_replay(
        scenario_json: &str,
        policy_id: &str,
        checkpoint_every_ms: f64,
        opening_ms: f64,
    ) -> Result<Simulation, JsError> {
        let scenario = parsed(scenario_json).map_err(js_err)?;
        let every_ns = (checkpoint_every_ms.max(0.001) * 1e6) as u64;
        let opts = SimOptions {
            detail: Detail::Replay { checkpoint_every_ns: every_ns },
            opening_ns: (opening_ms.max(0.0) * 1e6) as u64,
            ..SimOptions::default()
        };
        let inner = sim::Simulation::with_options(&scenario, policy_id, opts).map_err(js_err)?;
        Ok(Simulation { inner, wake: Default::default() })
    }

    /// Makes the detail of `[from_ns, to_ns)` the answer of the detail queries (segments, run queues, decisions,
    /// I/O events, task states, beliefs, boosts): a replay run replays it from the nearest checkpoint; true when
    /// the window's detail is now held (a full run: when its trace holds it).
    #[wasm_bindgen(js_name = focusWindow)]
    pub fn focus_window(&mut self, from_ns: f64, to_ns: f64) -> Result<bool, JsError> {
        self.inner.focus(from_ns.max(0.0) as u64, to_ns.max(0.0) as u64).map_err(js_err)
    }

    /// The detail of `[from_ns, to_ns)` replayed from the nearest checkpoint as a window of its own, which answers
    /// the detail queries for that stretch while the run stays as it was (so a caller may keep several windows
    /// and free each when done); undefined for a run that keeps its whole trace.
    #[wasm_bindgen(js_name = replayWindow)]
    pub fn replay_window(&self, from_ns: f64, to_ns: f64) -> Result<Option<ReplayWindow>, JsError> {
        let w = self.inner.replay_window(ns(from_ns), ns(to_ns)).map_err(js_err)?;
        Ok(w.map(|inner| ReplayWindow { inner }))
    }

    /// Hands over the window the run holds (the opening window recorded as it ran), leaving none held; undefined
    /// when none is.
    #[wasm_bindgen(js_name = takeWindow)]
    pub fn take_window(&mut self) -> Option<ReplayWindow> {
        self.inner.take_window().map(|inner| ReplayWindow { inner })
    }

    /// Processes at most `max_events` events; returns true once the run has reached its duration.
    pub fn step(&mut self, max_events: u32) -> Result<bool, JsError> {
        // std's clock panics on wasm32-unknown-unknown; time the step with JavaScript's.
        let t0 = js_sys::Date::now();
        let done = self.inner.step(u64::from(max_events)).map_err(js_err)?;
        self.inner.add_wall_ns(((js_sys::Date::now() - t0).max(0.0) * 1e6) as u64);
        Ok(done)
    }

    /// Simulated time reached, as a fraction of the scenario duration (0..1).
    pub fn progress(&self) -> f64 {
        self.inner.progress()
    }

    /// The run object of the report (one element of `runs`), as JSON text.
    pub fn report_json(&self) -> String {
        serde_json::to_string(&self.inner.run_report(&report::RunOptions::default())).unwrap_or_default()
    }

    /// Names and shapes the UI needs to label the trace: pCPUs, domains, vCPUs, tasks, duration.
    pub fn meta_json(&self) -> String {
        serde_json::to_string(&self.inner.meta()).unwrap_or_default()
    }

    /// CPU share per domain in consecutive buckets of `bucket_ms`: rows are buckets, columns are domains
    /// (fraction of the whole host, 0..1).
    pub fn share_series(&self, bucket_ms: f64) -> js_sys::Float64Array {
        let bucket_ns = (bucket_ms.max(0.001) * 1e6) as u64;
        js_sys::Float64Array::from(self.inner.trace().share_series(bucket_ns).as_slice())
    }

    /// Every vCPU's Lag (paper 001, equation 1) over the measured window, as JSON text
    /// `{"vcpus":[{"name":"web.v0","domain":"web","t_ns":[...],"lag_ns":[...]}]}` (positive: behind its share).
    pub fn lag_json(&self) -> String {
        serde_json::to_string(&self.inner.lag_report()).unwrap_or_default()
    }

    /// The policy's beliefs and partial boosts over the whole run in fixed time buckets (the belief chart's series;
    /// a replay run keeps them in its overview), as JSON text `{"bucket_ns", "beliefs":[{"t_ns","task","belief"}],
    /// "boosts":[{"t_ns","vcpu","kind","count"}]}`; empty lists when the policy does not infer.
    pub fn inference_json(&self) -> String {
        serde_json::to_string(&self.inner.inference_buckets().series()).unwrap_or_default()
    }

    /// The degree of belief above which the policy infers a task I/O-bound (BelThreshold); undefined when the
    /// policy does not infer task types.
    pub fn belief_threshold(&self) -> Option<f64> {
        self.inner.belief_threshold().map(|b| b as f64)
    }

    /// A domain's distribution as flattened (value_ms, count) pairs in increasing value, for CDFs. `metric` is
    /// "response", "event_latency", "io_latency" or "wake_to_run" (empty when the domain has none). Wake-to-run
    /// is measured from the run's state lanes by the accumulator recorded traces use, once, when first asked
    /// for (a finished replay run is replayed window by window for it); throws when that replay fails.
    pub fn distribution(&self, domain: u32, metric: &str) -> Result<js_sys::Float64Array, JsError> {
        let pts = if metric == "wake_to_run" {
            let w = self
                .wake
                .get_or_init(|| {
                    schedsim_core::recorded::wake::WakeToRun::of_run(&self.inner).map_err(|e| e.to_string())
                })
                .as_ref()
                .map_err(js_err)?;
            w.per_dom.get(domain as usize).map_or_else(Vec::new, |s| s.points())
        } else {
            Distribution::from_name(metric).map_or_else(Vec::new, |m| self.inner.distribution(domain as usize, m))
        };
        Ok(flat_ms(&pts))
    }

    /// Guest task state changes (runnable, blocked) between two times (ns), as JSON text.
    pub fn task_states_json(&self, from_ns: f64, to_ns: f64, limit: u32) -> String {
        self.held().task_states_json(from_ns, to_ns, limit)
    }
}

/// One window of a replay run's detail, replayed apart ([`Simulation::replay_window`]): the detail queries of a
/// run, for `from_ns <= t < to_ns` only. Free it when done (its detail is the memory it keeps).
#[wasm_bindgen]
pub struct ReplayWindow {
    inner: sim::Window,
}

impl ReplayWindow {
    fn held(&self) -> Held<'_> {
        Held { trace: self.inner.trace(), span: self.inner.held() }
    }
}

#[wasm_bindgen]
impl ReplayWindow {
    /// Where its detail starts [ns] (the checkpoint or the window's start).
    #[wasm_bindgen(getter, js_name = fromNs)]
    pub fn from_ns(&self) -> f64 {
        self.inner.held().0 as f64
    }

    /// Where its detail ends [ns].
    #[wasm_bindgen(getter, js_name = toNs)]
    pub fn to_ns(&self) -> f64 {
        self.inner.held().1 as f64
    }

    /// What it keeps in memory [bytes].
    #[wasm_bindgen(getter)]
    pub fn bytes(&self) -> f64 {
        self.inner.heap_bytes() as f64
    }

    /// Wake-to-run latency per domain between two times (ns) in `buckets` equal columns (the heat map): at
    /// `(domain * buckets + column) * 3` the wake-ups' count, summed latency [ns] and longest latency [ns]
    /// (`Trace::wake_latency_map`).
    pub fn wake_latency_map(&self, from_ns: f64, to_ns: f64, buckets: u32) -> js_sys::Float64Array {
        self.held().wake_latency_map(from_ns, to_ns, buckets)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIG7A: &str = include_str!("../../../scenarios/p000-fig7a-idd-starvation.json");

    #[test]
    fn script_templates_compile_and_a_syntax_error_names_its_line() {
        let templates = templates_json();
        let list = templates.as_array().unwrap();
        assert!(list.len() >= 3, "the three templates");
        for t in list {
            let source = t["source"].as_str().unwrap();
            assert_eq!(script_problem(source), None, "template {} compiles", t["id"]);
            assert!(t["vars"].is_object(), "template {} has its vars", t["id"]);
        }
        let e = script_problem("fn do_schedule(p, cur, runnable) {\n    let x = ;\n}\n").unwrap();
        assert_eq!(e["line"], 2);
        assert!(e["column"].as_u64().unwrap() >= 1);
        assert!(!e["message"].as_str().unwrap().is_empty());
    }

    #[test]
    fn cost_is_the_cores_estimate_with_its_words() {
        let text = include_str!("../../../scenarios/credit-cap.json");
        let v: serde_json::Value = serde_json::from_str(&cost_json(text, "[]").unwrap()).unwrap();
        assert!(v["events"].as_u64().unwrap() > 0);
        assert!(v["text"].as_str().unwrap().contains("events"));
        assert!(cost_json("{}", "[]").is_err());
    }

    #[test]
    fn ablation_is_the_cores_patched_scenario_with_the_claims_policies() {
        let v = ablation(FIG7A, 3).unwrap();
        assert_eq!(v["policy"], "pi");
        assert_eq!(v["reads"], serde_json::json!(["pi", "credit"]));
        assert_eq!(v["label"], "priority inheritance off");
        let text = v["scenario"].as_str().unwrap();
        let ablated = Scenario::from_json(text).unwrap();
        let pi = ablated.doc["policies"][2]["params"]["idd"]["priority_inheritance"].clone();
        assert_eq!(pi, serde_json::json!(false));
        let original = Scenario::from_json(FIG7A).unwrap();
        assert_eq!((ablated.seed, ablated.duration_ms), (original.seed, original.duration_ms));
    }

    #[test]
    fn the_last_file_parsed_is_kept_and_a_failing_one_is_not() {
        let first = parsed(FIG7A).unwrap();
        assert!(Rc::ptr_eq(&first, &parsed(FIG7A).unwrap()), "the same text is parsed once");
        let other = include_str!("../../../scenarios/credit-cap.json");
        let second = parsed(other).unwrap();
        assert_eq!(second.id, Scenario::from_json(other).unwrap().id);
        assert!(!Rc::ptr_eq(&first, &parsed(FIG7A).unwrap()), "a new text replaces the kept one");
        assert!(parsed("{}").is_err());
        // The failure left the last good parse in place, and fails again rather than being remembered as good.
        assert!(parsed("{}").is_err());
        assert!(PARSED.with(|p| p.borrow().as_ref().is_some_and(|(t, _)| t == FIG7A)));
    }

    #[test]
    fn the_warm_up_runs_its_scenario_and_leaves_no_parsed_file_behind() {
        // Its scenario must stay one the simulator accepts, or the warm-up silently does nothing.
        let sc = Scenario::from_json(WARM_UP_SCENARIO).unwrap();
        assert!(!sc.policies.is_empty());
        // Shorter than the scenario's own warm-up (4 s): the measured window is moved inside the run.
        warm_up(20.0);
        assert!(PARSED.with(|p| p.borrow().is_none()), "a page's first parse must not be answered by the warm-up");
    }

    /// Each claim comes with its verdict; an ablation the page ran (or whose runs failed) is judged into it.
    #[test]
    fn claims_carry_their_verdict_with_the_ablation_given() {
        let k = 3;
        let runs = r#"[{"policy":"credit"},{"policy":"pi"}]"#;
        let plain: serde_json::Value = serde_json::from_str(&claims_json(FIG7A, runs, None).unwrap()).unwrap();
        let v = &plain[k]["verdict"];
        assert!(v["kind"].is_string(), "{v}");
        assert_eq!(v["without"]["judged"], 0, "not run yet");
        let broke = claims_json(FIG7A, runs, Some(r#"{"3": {"error": "the run ran out of events"}}"#)).unwrap();
        let broke: serde_json::Value = serde_json::from_str(&broke).unwrap();
        assert_eq!(broke[k]["verdict"]["without"]["judged"], 1);
        assert_eq!(broke[k]["verdict"]["without"]["error"], "the run ran out of events");
        assert!(claims_json(FIG7A, runs, Some(r#"{"3": {"nope": 1}}"#)).unwrap_err().starts_with("ablations:"));
    }

    #[test]
    fn a_claim_without_an_ablation_or_out_of_range_is_an_error() {
        assert!(ablation(FIG7A, 4).unwrap_err().contains("no ablation"));
        assert!(ablation(FIG7A, 99).unwrap_err().contains("no claim 99"));
    }
}

/// (value [ns], count) points as flattened (value_ms, count) pairs.
fn flat_ms(pts: &[(u64, u64)]) -> js_sys::Float64Array {
    let flat: Vec<f64> = pts.iter().flat_map(|&(v, c)| [v as f64 / 1e6, c as f64]).collect();
    js_sys::Float64Array::from(flat.as_slice())
}

/// A recorded run opened from a trace's bytes (`perf script` / ftrace text, perf.data, xentrace; see
/// `schedsim_core::recorded`): its report (made by the report code), its metadata, and the same detail queries as
/// a run's, over the whole trace's detail; plus the mapping it used (to edit and open again with) and the scenario
/// fitted to it ("Simulate this load").
#[wasm_bindgen]
pub struct RecordedTrace {
    inner: schedsim_core::recorded::RecordedRun,
    title: String,
}

impl RecordedTrace {
    fn held(&self) -> Held<'_> {
        Held { trace: &self.inner.trace, span: (0, self.inner.trace.detail_until_ns.unwrap_or(u64::MAX)) }
    }
}

#[wasm_bindgen]
impl RecordedTrace {
    /// Reads `bytes` (twice: a survey, then the replay) under `mapping_json` (the proposed mapping when absent).
    /// `tsc_hz`: a xentrace file's TSC frequency [Hz] (2.4 GHz when absent). Throws a message naming what was
    /// expected for a file that is not a trace; a damaged one is read up to the damage (see the report's
    /// `recorded.read.damage`).
    #[wasm_bindgen(constructor)]
    pub fn new(
        bytes: &[u8],
        title: &str,
        mapping_json: Option<String>,
        tsc_hz: Option<f64>,
    ) -> Result<RecordedTrace, JsError> {
        let opts = schedsim_core::recorded::ReadOptions { tsc_hz: tsc_hz.filter(|&h| h >= 1.0).map(|h| h as u64) };
        let run = schedsim_core::recorded::open_run(std::io::Cursor::new(bytes), mapping_json.as_deref(), &opts)
            .map_err(js_err)?;
        Ok(RecordedTrace { inner: run, title: title.to_string() })
    }

    /// The run object of the report (policy `recorded`), with each domain's `wake_to_run_ms`, as JSON text.
    pub fn report_json(&self) -> Result<String, JsError> {
        let v = self.inner.report(&self.title).map_err(js_err)?;
        Ok(v.to_string())
    }

    /// Names and shapes the UI needs to label the trace, as a run's `meta_json`.
    pub fn meta_json(&self) -> Result<String, JsError> {
        let m = self.inner.meta(&self.title).map_err(js_err)?;
        serde_json::to_string(&m).map_err(js_err)
    }

    /// The mapping of threads to domains and vCPUs it was read with, as JSON text (edit it and open again).
    pub fn mapping_json(&self) -> String {
        serde_json::to_string(&self.inner.mapping).unwrap_or_default()
    }

    /// The scenario fitted to the trace, with one policy per scheduler id in `schedulers_json` (a JSON list).
    pub fn fitted_scenario_json(&self, schedulers_json: &str) -> Result<String, JsError> {
        let s: Vec<String> = serde_json::from_str(schedulers_json).map_err(js_err)?;
        let s: Vec<&str> = s.iter().map(String::as_str).collect();
        Ok(schedsim_core::recorded::fit::scenario(&self.inner, &self.title, &s).to_string())
    }

    /// The recorded run's report object followed by the fitted scenario's runs under each scheduler id in
    /// `schedulers_json` (a JSON list), every run with its domains' `wake_to_run_ms`, as a report's JSON text
    /// (`schedsim trace report --simulate`).
    pub fn compare_json(&self, schedulers_json: &str) -> Result<String, JsError> {
        let s: Vec<String> = serde_json::from_str(schedulers_json).map_err(js_err)?;
        let s: Vec<&str> = s.iter().map(String::as_str).collect();
        let rep = schedsim_core::recorded::fit::compare(&self.inner, &self.title, &s).map_err(js_err)?;
        Ok(report::to_json_string(&rep))
    }

    /// CPU share per domain in consecutive buckets of `bucket_ms`, as a run's `share_series`.
    pub fn share_series(&self, bucket_ms: f64) -> js_sys::Float64Array {
        let bucket_ns = (bucket_ms.max(0.001) * 1e6) as u64;
        js_sys::Float64Array::from(self.inner.trace.share_series(bucket_ns).as_slice())
    }

    /// A domain's wake-to-run latencies ("wake_to_run") as flattened (value_ms, count) pairs, for CDFs.
    pub fn distribution(&self, domain: u32, metric: &str) -> js_sys::Float64Array {
        let pts = match (metric, self.inner.wake.per_dom.get(domain as usize)) {
            ("wake_to_run", Some(s)) => s.points(),
            _ => Vec::new(),
        };
        flat_ms(&pts)
    }

    pub fn wake_latency_map(&self, from_ns: f64, to_ns: f64, buckets: u32) -> js_sys::Float64Array {
        self.held().wake_latency_map(from_ns, to_ns, buckets)
    }
}
