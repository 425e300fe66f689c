//! Sweep grids: the combinations of scenario parameters a sweep runs (`--set PATH=V1,V2,...` in the CLI, a dict
//! of paths to value lists in Python), each validated before anything runs, and the runs they make (combination,
//! seed, policy) in grid order. One home for what a grid means, so the CLI's threads and shards and Python's workers
//! run the same points; running them in parallel, writing shards and caching are the front ends' business.

use crate::estimate as cost;
use crate::patch::kind;
use crate::report::{with_overrides, RunOptions, RunReport};
use crate::scenario::{Scenario, ScenarioError, MAX_SEED};
use crate::sim::{SimOptions, Simulation};
use serde_json::{Map, Value};
use std::fmt;

/// `base`, `base + 1`, ..., `base + n - 1`; an error naming `--seeds` if that passes the largest seed.
pub fn seed_list(base: u64, n: u64) -> Result<Vec<u64>, String> {
    last_seed(base, n).map(|last| (base..=last).collect())
}

/// The last of `n` seeds from `base`; an error naming `--seeds` if that passes the largest seed.
pub fn last_seed(base: u64, n: u64) -> Result<u64, String> {
    if n == 0 {
        return Err("--seeds: must be at least 1".into());
    }
    match base.checked_add(n - 1) {
        Some(last) if last <= MAX_SEED => Ok(last),
        _ => Err(format!("--seeds: {n} seeds from {base} pass the largest seed, {MAX_SEED}")),
    }
}

/// Runs one policy of a scenario to the end and returns its run object (claims not attached). The page's trace is
/// not recorded: a run object never reads it, and it can take more memory than the run itself.
pub fn run_one(sc: &Scenario, policy: &str, opts: &RunOptions) -> Result<RunReport, String> {
    let mut sim = batch_simulation(sc, policy, opts)?;
    sim.run().map_err(|e| e.to_string())?;
    Ok(sim.run_report(opts))
}

/// The simulation [`run_one`] runs: no trace, the run's work limit.
fn batch_simulation(sc: &Scenario, policy: &str, opts: &RunOptions) -> Result<Simulation, String> {
    let sim_opts = SimOptions { trace: false, max_events: opts.max_events, ..SimOptions::default() };
    Simulation::with_options(sc, policy, sim_opts).map_err(|e| e.to_string())
}

/// One `--set`: a path and the values it takes.
#[derive(Debug, Clone, PartialEq)]
pub struct Axis {
    pub path: String,
    pub values: Vec<Value>,
}

/// Parses `PATH=V1,V2,...`. Each value is JSON when it parses as JSON (`256`, `true`, `"x"`, `[1,2]`) and a plain
/// string otherwise (`cfs`); commas inside brackets, braces or quotes do not split.
pub fn parse_axis(arg: &str) -> Result<Axis, String> {
    let Some((path, list)) = arg.split_once('=') else {
        return Err(format!("--set {arg}: expected PATH=V1,V2,... (e.g. domains.1.weight=256,512)"));
    };
    let path = path.trim();
    if !is_dotted(path) {
        return Err(format!("--set {arg}: '{path}' is not a dotted path (e.g. host.pcpus)"));
    }
    let mut values = Vec::new();
    for raw in split_top_level(list) {
        let raw = raw.trim();
        if raw.is_empty() {
            return Err(format!("--set {arg}: an empty value in the list"));
        }
        values.push(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_string())));
    }
    Axis::new(path, values).map_err(|e| format!("--set {arg}: {e}"))
}

fn is_dotted(path: &str) -> bool {
    !path.is_empty() && !path.split('.').any(str::is_empty)
}

impl Axis {
    /// An axis of a grid given as data (Python's `{path: [values]}`): a dotted path and at least one value.
    pub fn new(path: &str, values: Vec<Value>) -> Result<Axis, String> {
        if !is_dotted(path) {
            return Err(format!("'{path}' is not a dotted path (e.g. host.pcpus)"));
        }
        if values.is_empty() {
            return Err(format!("{path} has no values"));
        }
        Ok(Axis { path: path.to_string(), values })
    }
}

/// Splits at commas that are not inside `[]`, `{}` or a JSON string.
fn split_top_level(s: &str) -> Vec<&str> {
    let (mut depth, mut in_str, mut escaped, mut start) = (0i32, false, false, 0);
    let mut out = Vec::new();
    for (i, c) in s.char_indices() {
        if in_str {
            match (escaped, c) {
                (true, _) => escaped = false,
                (false, '\\') => escaped = true,
                (false, '"') => in_str = false,
                _ => {}
            }
            continue;
        }
        match c {
            '"' => in_str = true,
            '[' | '{' => depth += 1,
            ']' | '}' => depth -= 1,
            ',' if depth <= 0 => {
                out.push(&s[start..i]);
                start = i + 1;
            }
            _ => {}
        }
    }
    out.push(&s[start..]);
    out
}

/// An array element's name: its `name` (domains, tasks) or `id` (policies).
fn named(v: &Value) -> Option<&str> {
    v.get("name").or_else(|| v.get("id")).and_then(Value::as_str)
}

/// Why a path part names no element of an array.
enum Miss {
    Index(usize),
    Name,
}

/// The element of `items` a path part names: the one whose `name`/`id` it is, else (a number) the one at that
/// index. Names come first, as in metric paths and claims, which know elements only by name: a domain named `1`
/// is `domains.1` everywhere, whatever its index.
fn element(items: &[Value], part: &str) -> Result<usize, Miss> {
    if let Some(i) = items.iter().position(|v| named(v) == Some(part)) {
        return Ok(i);
    }
    match part.parse::<usize>() {
        Ok(i) if i < items.len() => Ok(i),
        Ok(i) => Err(Miss::Index(i)),
        Err(_) => Err(Miss::Name),
    }
}

/// Sets `path` (dotted; array elements by their `name`/`id`, else by index) in a scenario's JSON. Missing object keys
/// are created, so `policies.1.params.ratelimit_us` works on a policy without `params`; whether the key is
/// allowed there is for the scenario validation to say.
pub fn set_path(root: &mut Value, path: &str, value: Value) -> Result<(), String> {
    let parts: Vec<&str> = path.split('.').collect();
    let mut cur = root;
    for (depth, part) in parts.iter().enumerate() {
        let at = parts[..depth].join(".");
        let at = if at.is_empty() { "(scenario)".to_string() } else { at };
        let last = depth + 1 == parts.len();
        cur = match cur {
            Value::Array(items) => {
                let idx = element(items, part).map_err(|miss| match miss {
                    Miss::Index(i) => format!("{path}: index {i} is out of range ({at} has {} items)", items.len()),
                    Miss::Name => {
                        let names: Vec<&str> = items.iter().filter_map(named).collect();
                        format!("{path}: {at} has no element named '{part}' (has: {})", names.join(", "))
                    }
                })?;
                if last {
                    items[idx] = value;
                    return Ok(());
                }
                &mut items[idx]
            }
            Value::Object(obj) => {
                if last {
                    obj.insert(part.to_string(), value);
                    return Ok(());
                }
                obj.entry(part.to_string()).or_insert_with(|| Value::Object(Map::new()))
            }
            other => return Err(format!("{path}: {at} is {}, which has no field '{part}'", kind(other))),
        };
    }
    Ok(())
}

/// Every combination of the axes' values, the first axis varying slowest (`[]` axes give one empty combination):
/// what [`Grid::combo`] gives one at a time.
#[cfg(test)]
fn combinations(axes: &[Axis]) -> Vec<Vec<Value>> {
    let mut out: Vec<Vec<Value>> = vec![Vec::new()];
    for axis in axes {
        out = out
            .iter()
            .flat_map(|prefix| axis.values.iter().map(move |v| [prefix.clone(), vec![v.clone()]].concat()))
            .collect();
    }
    out
}

/// A sweep failure: a combination whose scenario is invalid (with the problems and their field paths), or any
/// other problem with the grid or a run.
#[derive(Debug, Clone, PartialEq)]
pub enum GridError {
    Scenario { context: String, error: ScenarioError },
    Other(String),
}

impl fmt::Display for GridError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            GridError::Scenario { context, error } => write!(f, "{context}: {error}"),
            GridError::Other(msg) => f.write_str(msg),
        }
    }
}

impl From<String> for GridError {
    fn from(msg: String) -> GridError {
        GridError::Other(msg)
    }
}

/// A combination as `path=value, ...` for messages.
pub fn describe(paths: &[String], values: &[Value]) -> String {
    if paths.is_empty() {
        return "the scenario as written".into();
    }
    paths.iter().zip(values).map(|(p, v)| format!("{p}={v}")).collect::<Vec<_>>().join(", ")
}

/// One combination's scenario: `base` with each path set to its value, validated, the duration override applied
/// and every policy (all of the scenario's when `policies` is empty) built once, since policy parameters are
/// checked when a policy is built, not by the schema alone. Returns the scenario and the policy ids to run.
pub fn combination_scenario(
    base: &Value,
    paths: &[String],
    values: &[Value],
    duration_ms: Option<u64>,
    policies: &[String],
) -> Result<(Scenario, Vec<String>), GridError> {
    let what = format!("({})", describe(paths, values));
    let mut v = base.clone();
    for (path, value) in paths.iter().zip(values) {
        set_path(&mut v, path, value.clone()).map_err(|e| format!("--set {e}"))?;
    }
    let sc = Scenario::from_value(v).map_err(|error| GridError::Scenario { context: what.clone(), error })?;
    let ids: Vec<String> =
        if policies.is_empty() { sc.policies.iter().map(|p| p.id.clone()).collect() } else { policies.to_vec() };
    for id in &ids {
        if sc.policy(id).is_none() {
            let known: Vec<&str> = sc.policies.iter().map(|p| p.id.as_str()).collect();
            return Err(format!("{what}: --policy {id}: no such policy (has: {})", known.join(", ")).into());
        }
    }
    let opts = RunOptions { duration_ms, ..RunOptions::default() };
    let sc = with_overrides(&sc, &opts).map_err(|e| format!("{what}: {e}"))?;
    for id in &ids {
        Simulation::new(&sc, id).map_err(|e| format!("{what}, policy {id}: {e}"))?;
    }
    Ok((sc, ids))
}

/// Runs one (scenario, seed, policy) and returns its run object; `deterministic` leaves out wall-clock fields.
pub fn run_point(
    sc: &Scenario,
    seed: u64,
    policy: &str,
    deterministic: bool,
    max_events: Option<u64>,
) -> Result<Value, String> {
    let opts = RunOptions { seed: Some(seed), deterministic, max_events, ..RunOptions::default() };
    let sc = with_overrides(sc, &opts)?;
    run_one(&sc, policy, &opts).map(|r| r.to_value())
}

/// One run of a grid: a combination (index into the grid's combinations), a seed and a policy.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub combination: usize,
    pub seed: u64,
    pub policy: String,
}

/// What a grid is made of, whoever runs it (the CLI's threads, its shards, or Python's workers).
pub struct GridSpec {
    pub axes: Vec<Axis>,
    /// Seeds per combination, consecutive from `seed` or the combination's own seed.
    pub seeds: u64,
    pub seed: Option<u64>,
    /// Duration override [ms].
    pub duration_ms: Option<u64>,
    /// Policy ids; empty means every policy of the scenario as written.
    pub policies: Vec<String>,
}

/// Runs a sweep may have before it is refused (`--max-runs`): enough for a paper's figure many times over, few
/// enough that the table of results stays within a few hundred MB.
pub const DEFAULT_MAX_RUNS: u64 = 100_000;

/// Estimated events of a whole sweep before it is refused (`--max-total-events`): about half an hour of both cores
/// of a laptop at the native build's pace.
pub const DEFAULT_MAX_TOTAL_EVENTS: u64 = 100_000_000_000;

/// Scenario a grid may build in all before it is refused (`--max-grid-work`) [bytes]: its combinations x the
/// document's compact JSON size. Checking a grid builds and validates each combination twice (the second time with
/// its policies' engines) and running it builds it once more on each worker thread that runs it. Measured
/// natively: 8-10 MB of document a second for the first pass, 1.5 MB/s for both passes of a 0.9 MB scenario of
/// 18,000 tasks; so the default takes three minutes at worst, and allows 64 combinations of a document at the
/// 4 MB limit, 16,000 of the largest library scenario (16 kB), the run limit's 100,000 of a 2.6 kB one.
pub const DEFAULT_MAX_GRID_WORK: u64 = 1 << 28;

/// The bounds a grid is checked against before anything runs; `option` names how the caller spells each.
#[derive(Debug, Clone, Copy)]
pub struct Limits {
    /// Estimated (and actual) events of one run.
    pub max_events: u64,
    /// Runs in the whole grid.
    pub max_runs: u64,
    /// Estimated events of every run together.
    pub max_total_events: u64,
    /// Combinations x document size [bytes] (see [`DEFAULT_MAX_GRID_WORK`]).
    pub max_grid_work: u64,
}

impl Default for Limits {
    fn default() -> Limits {
        Limits {
            max_events: cost::DEFAULT_MAX_EVENTS,
            max_runs: DEFAULT_MAX_RUNS,
            max_total_events: DEFAULT_MAX_TOTAL_EVENTS,
            max_grid_work: DEFAULT_MAX_GRID_WORK,
        }
    }
}

/// How a front end spells each limit in its messages (`--max-runs ` in the CLI, `max_runs=` in Python).
#[derive(Debug, Clone, Copy)]
pub struct LimitNames {
    pub max_events: &'static str,
    pub max_runs: &'static str,
    pub max_total_events: &'static str,
    pub max_grid_work: &'static str,
}

pub const CLI_LIMITS: LimitNames = LimitNames {
    max_events: "--max-events ",
    max_runs: "--max-runs ",
    max_total_events: "--max-total-events ",
    max_grid_work: "--max-grid-work ",
};

/// A checked grid. Combinations, their scenarios and the runs are not kept: the run count is checked against the
/// limit before anything is built, then every combination is built, validated and estimated once and dropped, so
/// memory stays that of one scenario whatever the grid's size; [`Grid::item`] and [`Grid::scenario`] give any run
/// and any combination again on demand.
pub struct Grid<'a> {
    base: &'a Value,
    pub paths: Vec<String>,
    axes: Vec<Axis>,
    pub seeds: u64,
    /// Each combination's first seed (`--seed`, or the seed its scenario says).
    pub first_seeds: Vec<u64>,
    /// The policies every combination runs, in order.
    pub policies: Vec<String>,
    duration_ms: Option<u64>,
    combinations: usize,
    /// The id of the scenario as written.
    pub scenario_id: String,
    /// Estimated events of the whole grid.
    pub estimated_events: u64,
}

/// The number of combinations of `axes` and of runs with `seeds` seeds and `policies` policies each, or the first
/// of them that passes `u64`.
fn grid_size(axes: &[Axis], seeds: u64, policies: usize) -> (Option<u64>, Option<u64>) {
    let combos = axes.iter().try_fold(1u64, |n, a| n.checked_mul(a.values.len() as u64));
    let runs = combos.and_then(|c| c.checked_mul(seeds)).and_then(|n| n.checked_mul(policies as u64));
    (combos, runs)
}

impl<'a> Grid<'a> {
    pub fn new(base: &'a Value, spec: &GridSpec, limits: Limits, names: LimitNames) -> Result<Grid<'a>, GridError> {
        Grid::new_polled(base, spec, limits, names, &mut || Ok(()))
    }

    /// [`Grid::new`], calling `poll` before each combination is built (twice per combination) and giving up with
    /// its error: how a front end whose checks cannot run meanwhile (Python's Ctrl-C, the GIL released) stops a
    /// long check.
    pub fn new_polled(
        base: &'a Value,
        spec: &GridSpec,
        limits: Limits,
        names: LimitNames,
        poll: &mut dyn FnMut() -> Result<(), GridError>,
    ) -> Result<Grid<'a>, GridError> {
        check_distinct_paths(base, &spec.axes)?;
        let written = Scenario::from_value(base.clone())
            .map_err(|error| GridError::Scenario { context: "the scenario as written".into(), error })?;
        let policies: Vec<String> = if spec.policies.is_empty() {
            written.policies.iter().map(|p| p.id.clone()).collect()
        } else {
            spec.policies.clone()
        };
        if spec.seeds == 0 {
            return Err("--seeds: must be at least 1".to_string().into());
        }
        let (combos, runs) = grid_size(&spec.axes, spec.seeds, policies.len());
        let runs = match runs {
            Some(n) if n <= limits.max_runs => n,
            _ => {
                let figure = match runs {
                    Some(n) => n.to_string(),
                    None => "more than 2^64".into(),
                };
                return Err(format!(
                    "the grid has {figure} runs ({} combinations x {} seeds x {} policies): more than the limit of {} \
                     runs; pass {}N to allow more",
                    combos.map_or("more than 2^64".into(), |c| c.to_string()),
                    spec.seeds,
                    policies.len(),
                    limits.max_runs,
                    names.max_runs
                )
                .into());
            }
        };
        let combinations = combos.unwrap_or(0) as usize;
        check_grid_work(base, combinations, limits.max_grid_work, names.max_grid_work)?;
        let mut grid = Grid {
            base,
            paths: spec.axes.iter().map(|a| a.path.clone()).collect(),
            axes: spec.axes.clone(),
            seeds: spec.seeds,
            first_seeds: Vec::new(),
            policies,
            duration_ms: spec.duration_ms,
            combinations,
            scenario_id: written.id.clone(),
            estimated_events: 0,
        };
        drop(written);
        let mut first_seeds = Vec::new();
        first_seeds.try_reserve_exact(combinations).map_err(|e| format!("the grid's {combinations} seeds: {e}"))?;
        let mut total: u64 = 0;
        let over = |total: u64, seen: usize| {
            // Refused as soon as the combinations seen pass the limit, the rest extrapolated from them, so a huge
            // grid of costly points is not built whole just to be refused.
            let all =
                if seen < combinations { (total as f64 / seen as f64 * combinations as f64) as u64 } else { total };
            let secs = all as f64 / cost::EVENTS_PER_WALL_SECOND;
            let time = if secs < 120.0 { format!("{secs:.0} s") } else { format!("{:.0} min", secs / 60.0) };
            let how = if seen < combinations {
                format!("(the first {seen} of {combinations} combinations: ~{:.2e})", total as f64)
            } else {
                String::new()
            };
            format!(
                "the grid's {runs} runs are estimated at ~{:.2e} events in all {how} (~{time} at {:.0}M events/s): \
                 more than the limit of {} events for a sweep; pass {}{} to run it anyway",
                all as f64,
                cost::EVENTS_PER_WALL_SECOND / 1e6,
                limits.max_total_events,
                names.max_total_events,
                all.saturating_mul(2)
            )
            .replace("  (", " (")
        };
        // First every combination's schema and estimate (cheap), then its policies built (dearer: a policy's
        // parameters are checked when it is built), so an over-large grid is refused before the dearer pass.
        for c in 0..combinations {
            poll()?;
            let sc = grid.scenario(c)?;
            let first = spec.seed.unwrap_or(sc.seed);
            last_seed(first, spec.seeds)?;
            first_seeds.push(first);
            let est = cost::within_naming(&sc, &grid.policies, limits.max_events, names.max_events)
                .map_err(|e| format!("combination {c} ({}): {e}", describe(&grid.paths, &grid.combo(c))))?;
            total = total.saturating_add(est.events.saturating_mul(spec.seeds));
            if total > limits.max_total_events {
                return Err(over(total, c + 1).into());
            }
        }
        for c in 0..combinations {
            poll()?;
            grid.checked_scenario(c)?;
        }
        grid.first_seeds = first_seeds;
        grid.estimated_events = total;
        Ok(grid)
    }

    /// Combinations in the grid.
    pub fn combinations(&self) -> usize {
        self.combinations
    }

    /// Runs in the grid: combinations x seeds x policies.
    pub fn len(&self) -> usize {
        self.combinations * self.seeds as usize * self.policies.len()
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Combination `c`'s values, one per axis, the first axis varying slowest.
    pub fn combo(&self, c: usize) -> Vec<Value> {
        let mut rest = c;
        let mut out = vec![Value::Null; self.axes.len()];
        for (k, axis) in self.axes.iter().enumerate().rev() {
            let n = axis.values.len();
            out[k] = axis.values[rest % n].clone();
            rest /= n;
        }
        out
    }

    /// Run `r` of the grid, in grid order: combination, then seed, then policy.
    pub fn item(&self, r: usize) -> Item {
        let per_seed = self.policies.len();
        let per_combo = per_seed * self.seeds as usize;
        let c = r / per_combo;
        let k = (r % per_combo) / per_seed;
        let first = self.first_seeds.get(c).copied().unwrap_or_default();
        Item { combination: c, seed: first + k as u64, policy: self.policies[r % per_seed].clone() }
    }

    /// Combination `c`'s scenario to run: built and validated again (cheap beside a run) with the duration override
    /// applied; its policies were built once when the grid was checked.
    pub fn scenario(&self, c: usize) -> Result<Scenario, GridError> {
        let values = self.combo(c);
        let what = || format!("combination {c} ({})", describe(&self.paths, &values));
        let mut v = self.base.clone();
        for (path, value) in self.paths.iter().zip(&values) {
            set_path(&mut v, path, value.clone()).map_err(|e| format!("--set {e}"))?;
        }
        let sc = Scenario::from_value(v).map_err(|error| GridError::Scenario { context: what(), error })?;
        let opts = RunOptions { duration_ms: self.duration_ms, ..RunOptions::default() };
        Ok(with_overrides(&sc, &opts).map_err(|e| format!("{}: {e}", what()))?)
    }

    /// [`Grid::scenario`], every policy built once too (policy parameters are checked when a policy is built).
    fn checked_scenario(&self, c: usize) -> Result<Scenario, GridError> {
        let values = self.combo(c);
        let at = |e: GridError| match e {
            GridError::Scenario { context, error } => {
                GridError::Scenario { context: format!("combination {c} {context}"), error }
            }
            GridError::Other(msg) if msg.starts_with("--set") => GridError::Other(msg),
            GridError::Other(msg) => GridError::Other(format!("combination {c} {msg}")),
        };
        combination_scenario(self.base, &self.paths, &values, self.duration_ms, &self.policies)
            .map(|(sc, _)| sc)
            .map_err(at)
    }
}

/// Refuses a grid whose combinations x document size passes `limit` [bytes], before any combination is built:
/// each is built and validated a few times (see [`DEFAULT_MAX_GRID_WORK`]), so a grid of many combinations over a
/// large document would otherwise spend hours before its first run.
fn check_grid_work(base: &Value, combinations: usize, limit: u64, option: &str) -> Result<(), GridError> {
    let doc_bytes = crate::patch::json_len(base, usize::MAX).unwrap_or(usize::MAX) as u64;
    let work = (combinations as u64).checked_mul(doc_bytes);
    match work {
        Some(w) if w <= limit => Ok(()),
        _ => {
            let figure = work.map_or("more than 2^64".into(), |w| w.to_string());
            let secs = work.map_or(f64::INFINITY, |w| w as f64 / GRID_BYTES_PER_SECOND);
            let raise = work.map_or(format!("{option}N"), |w| format!("{option}{w}"));
            Err(format!(
                "the grid's {combinations} combinations each build and validate the {doc_bytes}-byte scenario: \
                 {figure} bytes of work (combinations x document size, up to ~{secs:.0} s to check), more than the limit \
                 of {limit}; pass {raise} to allow it, or sweep fewer values"
            )
            .into())
        }
    }
}

/// Document bytes a grid check builds and validates per wall-clock second natively at worst (both passes over a
/// 0.9 MB scenario of 18,000 tasks): only for the time in a refusal's message.
const GRID_BYTES_PER_SECOND: f64 = 1.5e6;

/// Refuses two axes that reach the same field, or one inside the other, however each names it (an element by
/// index or by name/id): the later would silently win and the table would label runs with values they did not
/// run.
fn check_distinct_paths(base: &Value, axes: &[Axis]) -> Result<(), GridError> {
    let canon: Vec<Vec<String>> = axes.iter().map(|a| canonical_path(base, &a.path)).collect();
    for (j, b) in axes.iter().enumerate() {
        for (i, a) in axes[..j].iter().enumerate() {
            let (x, y) = (&canon[i], &canon[j]);
            let n = x.len().min(y.len());
            if x[..n] == y[..n] {
                let how = if x.len() == y.len() {
                    format!("the same field as --set {}", a.path)
                } else if x.len() < y.len() {
                    format!("a field inside --set {}", a.path)
                } else {
                    format!("a field that holds --set {}", a.path)
                };
                return Err(format!(
                    "--set {}: names {how} (both reach {}); give each field once, by one name",
                    b.path,
                    y.join(".")
                )
                .into());
            }
        }
    }
    Ok(())
}

/// `path` as it reaches into `base`, every array element written as its index: `domains.heavy.weight` and
/// `domains.1.weight` are the same field when domain 1 is named heavy. Parts past what `base` has are kept as
/// written.
pub fn canonical_path(base: &Value, path: &str) -> Vec<String> {
    let mut cur = Some(base);
    let mut out = Vec::new();
    for part in path.split('.') {
        match cur {
            Some(Value::Array(items)) => match element(items, part) {
                Ok(i) => {
                    out.push(i.to_string());
                    cur = items.get(i);
                }
                Err(_) => {
                    out.push(part.to_string());
                    cur = None;
                }
            },
            Some(v) => {
                out.push(part.to_string());
                cur = v.get(part);
            }
            None => out.push(part.to_string()),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn seeds_are_consecutive_and_bounded() {
        assert_eq!(seed_list(5, 3).unwrap(), vec![5, 6, 7]);
        assert!(seed_list(5, 0).unwrap_err().contains("--seeds"));
        assert!(seed_list((1 << 53) - 2, 3).unwrap_err().contains("largest seed"));
        assert!(seed_list(u64::MAX, 2).is_err());
    }

    /// A run whose report is all that is kept (`run --seeds`, `check`, `sweep`) records no trace, which can take
    /// more memory than the run itself.
    #[test]
    fn batch_runs_record_no_trace() {
        let sc = Scenario::from_value(two_domain_base()).unwrap();
        let mut traced = Simulation::new(&sc, "credit").unwrap();
        traced.run().unwrap();
        assert!(!traced.trace().segments().is_empty());
        let mut batch = batch_simulation(&sc, "credit", &RunOptions::default()).unwrap();
        batch.run().unwrap();
        assert!(batch.trace().segments().is_empty());
    }

    #[test]
    fn axes_parse_json_and_bare_words() {
        let a = parse_axis("domains.2.weight=256, 512").unwrap();
        assert_eq!(a.path, "domains.2.weight");
        assert_eq!(a.values, vec![json!(256), json!(512)]);
        let a = parse_axis("domains.1.guest.scheduler=linux,cfs").unwrap();
        assert_eq!(a.values, vec![json!("linux"), json!("cfs")]);
        let a = parse_axis(r#"x.think_ms=[1,2],[3,4],"a,b""#).unwrap();
        assert_eq!(a.values, vec![json!([1, 2]), json!([3, 4]), json!("a,b")]);
        assert!(parse_axis("host.pcpus").unwrap_err().contains("PATH=V1"));
        assert!(parse_axis("host..pcpus=1").unwrap_err().contains("dotted path"));
        assert!(parse_axis("host.pcpus=1,,2").unwrap_err().contains("empty value"));
    }

    #[test]
    fn paths_reach_by_index_name_and_create_objects() {
        let mut v = json!({"host":{"pcpus":1},"domains":[{"name":"dom0"},{"name":"web","weight":256}],
                           "policies":[{"id":"credit","scheduler":"credit"}]});
        set_path(&mut v, "domains.1.weight", json!(512)).unwrap();
        set_path(&mut v, "domains.dom0.vcpus", json!(2)).unwrap();
        set_path(&mut v, "policies.credit.params.ratelimit_us", json!(1000)).unwrap();
        set_path(&mut v, "host.pcpus", json!(4)).unwrap();
        assert_eq!(v["domains"][1]["weight"], 512);
        assert_eq!(v["domains"][0]["vcpus"], 2);
        assert_eq!(v["policies"][0]["params"]["ratelimit_us"], 1000);
        assert_eq!(v["host"]["pcpus"], 4);
        let e = set_path(&mut v, "domains.5.weight", json!(1)).unwrap_err();
        assert!(e.contains("index 5 is out of range (domains has 2 items)"), "{e}");
        let e = set_path(&mut v, "domains.db.weight", json!(1)).unwrap_err();
        assert!(e.contains("no element named 'db'") && e.contains("dom0, web"), "{e}");
        let e = set_path(&mut v, "host.pcpus.x", json!(1)).unwrap_err();
        assert!(e.contains("host.pcpus is a number"), "{e}");
    }

    #[test]
    fn combinations_vary_the_last_axis_fastest() {
        let axes = vec![
            Axis { path: "a".into(), values: vec![json!(1), json!(2)] },
            Axis { path: "b".into(), values: vec![json!("x"), json!("y"), json!("z")] },
        ];
        let c = combinations(&axes);
        assert_eq!(c.len(), 6);
        assert_eq!(c[0], vec![json!(1), json!("x")]);
        assert_eq!(c[1], vec![json!(1), json!("y")]);
        assert_eq!(c[3], vec![json!(2), json!("x")]);
        assert_eq!(combinations(&[]), vec![Vec::<Value>::new()]);
    }

    fn two_domain_base() -> Value {
        json!({"schema":1,"id":"t","title":"t","seed":7,"duration_ms":1000,"host":{"pcpus":1},
               "domains":[{"name":"dom0","tasks":[{"name":"burn","workload":{"type":"cpu"}}]},
                          {"name":"heavy","tasks":[{"name":"burn","workload":{"type":"cpu"}}]},
                          {"name":"1","tasks":[{"name":"burn","workload":{"type":"cpu"}}]}],
               "policies":[{"id":"credit","scheduler":"credit"}]})
    }

    fn spec(axes: &[&str], seeds: u64) -> GridSpec {
        GridSpec {
            axes: axes.iter().map(|a| parse_axis(a).unwrap()).collect(),
            seeds,
            seed: None,
            duration_ms: None,
            policies: Vec::new(),
        }
    }

    /// A part that is both an element's name and another element's index means the named one, as metric paths
    /// and claims (which only know names) read it.
    #[test]
    fn a_name_that_looks_like_an_index_names_its_element() {
        let mut v = two_domain_base();
        set_path(&mut v, "domains.1.weight", json!(512)).unwrap();
        assert_eq!(v["domains"][2]["weight"], 512);
        assert!(v["domains"][1].get("weight").is_none());
        set_path(&mut v, "domains.0.weight", json!(64)).unwrap();
        assert_eq!(v["domains"][0]["weight"], 64);
        assert_eq!(canonical_path(&v, "domains.1.weight"), ["domains", "2", "weight"]);
        assert_eq!(canonical_path(&v, "domains.heavy.weight"), ["domains", "1", "weight"]);
        assert_eq!(canonical_path(&v, "policies.credit.params.x"), ["policies", "0", "params", "x"]);
    }

    #[test]
    fn a_field_named_twice_is_refused() {
        let base = two_domain_base();
        let grid = |axes: &[&str]| Grid::new(&base, &spec(axes, 1), Limits::default(), CLI_LIMITS).map(|_| ());
        for (axes, says) in [
            (&["domains.dom0.weight=256,1024", "domains.0.weight=256"][..], "same field as --set domains.dom0"),
            (&["domains.1.weight=256,1024", "domains.2.weight=256"][..], "same field as --set domains.1.weight"),
            (&["policies.credit.params.ratelimit_us=0", "policies.0.params.ratelimit_us=10"][..], "same field"),
            (&["domains.dom0.weight=256", "domains.0=null"][..], "a field that holds"),
            (&["domains.2=null", "domains.1.weight=256"][..], "a field inside"),
        ] {
            let e = grid(axes).unwrap_err().to_string();
            assert!(e.contains(says) && e.contains("give each field once"), "{axes:?}: {e}");
        }
        // Different fields of one element, and the element named "1" beside the one at index 1, are fine.
        grid(&["domains.heavy.weight=256,512", "domains.heavy.vcpus=1"]).unwrap();
        grid(&["domains.heavy.weight=256,512", "domains.1.weight=128"]).unwrap();
    }

    #[test]
    fn runs_come_lazily_in_grid_order() {
        let base = two_domain_base();
        let s = spec(&["domains.heavy.weight=128,256,512", "host.pcpus=1,2"], 2);
        let g = Grid::new(&base, &s, Limits::default(), CLI_LIMITS).unwrap();
        assert_eq!((g.combinations(), g.len()), (6, 12));
        let all = combinations(&s.axes);
        assert_eq!((0..6).map(|c| g.combo(c)).collect::<Vec<_>>(), all);
        assert_eq!(g.item(0), Item { combination: 0, seed: 7, policy: "credit".into() });
        assert_eq!(g.item(3), Item { combination: 1, seed: 8, policy: "credit".into() });
        assert_eq!(g.item(11), Item { combination: 5, seed: 8, policy: "credit".into() });
        assert_eq!(g.scenario(5).unwrap().host.pcpus, 2);
    }

    /// A grid too big to run is refused before any combination is built, with its size and the option to raise
    /// the limit; likewise one whose runs together are estimated above the sweep's work limit.
    #[test]
    fn grids_past_the_limits_are_refused_up_front() {
        let base = two_domain_base();
        let values: Vec<String> = (1..=1000).map(|n| n.to_string()).collect();
        let axis = format!("domains.heavy.weight={}", values.join(","));
        let e = Grid::new(&base, &spec(&[&axis], 100_000), Limits::default(), CLI_LIMITS).err().unwrap().to_string();
        assert!(e.contains("100000000 runs (1000 combinations x 100000 seeds x 1 policies)"), "{e}");
        assert!(e.contains("--max-runs"), "{e}");
        // Past u64: said so rather than wrapped.
        let axes: Vec<Axis> =
            (0..10).map(|k| Axis { path: format!("x{k}"), values: (0..100_000).map(Value::from).collect() }).collect();
        let s = GridSpec { axes, seeds: 1, seed: None, duration_ms: None, policies: Vec::new() };
        let e = Grid::new(&base, &s, Limits::default(), CLI_LIMITS).err().unwrap().to_string();
        assert!(e.contains("more than 2^64 runs"), "{e}");
        let tight = Limits { max_total_events: 10, ..Limits::default() };
        let e = Grid::new(&base, &spec(&["host.pcpus=1,2"], 1), tight, CLI_LIMITS).err().unwrap().to_string();
        assert!(e.contains("the grid's 2 runs are estimated at") && e.contains("--max-total-events "), "{e}");
    }

    /// A grid whose combinations x document size passes the grid work limit is refused before any combination is
    /// built, with the figure and the option that raises it; at the figure it is accepted.
    #[test]
    fn grids_past_the_work_limit_are_refused_with_the_figure() {
        let base = two_domain_base();
        let doc = crate::patch::json_len(&base, usize::MAX).unwrap() as u64;
        let s = spec(&["host.pcpus=1,2,3"], 1);
        let tight = Limits { max_grid_work: 3 * doc - 1, ..Limits::default() };
        let e = Grid::new(&base, &s, tight, CLI_LIMITS).err().unwrap().to_string();
        let want = format!("3 combinations each build and validate the {doc}-byte scenario: {} bytes", 3 * doc);
        assert!(e.contains(&want) && e.contains(&format!("pass --max-grid-work {}", 3 * doc)), "{e}");
        let raised = Limits { max_grid_work: 3 * doc, ..Limits::default() };
        assert_eq!(Grid::new(&base, &s, raised, CLI_LIMITS).unwrap().combinations(), 3);
    }

    /// A long check stops at the first poll that says so.
    #[test]
    fn a_polled_check_stops_when_the_poll_says_so() {
        let base = two_domain_base();
        let mut polls = 0;
        let e = Grid::new_polled(&base, &spec(&["host.pcpus=1,2,3"], 1), Limits::default(), CLI_LIMITS, &mut || {
            polls += 1;
            if polls == 2 {
                Err(GridError::Other("interrupted".into()))
            } else {
                Ok(())
            }
        });
        assert_eq!(e.err().unwrap().to_string(), "interrupted");
        assert_eq!(polls, 2);
    }

    /// `--duration-ms` that would cut off a change of policy parameters is refused, as the same duration in the
    /// file is.
    #[test]
    fn a_duration_that_cuts_off_changes_is_refused() {
        let mut v = two_domain_base();
        v["duration_ms"] = json!(30_000);
        v["changes"] = json!([{"at_ms": 20_000, "policy": "credit", "param": "ratelimit_us", "value": 0}]);
        let sc = Scenario::from_value(v.clone()).unwrap();
        let opts = |d| RunOptions { duration_ms: Some(d), ..RunOptions::default() };
        let e = with_overrides(&sc, &opts(10_000)).unwrap_err();
        assert!(e.contains("--duration-ms: 10000") && e.contains("changes[0].at_ms (20000)"), "{e}");
        assert!(with_overrides(&sc, &opts(20_001)).is_ok());
        v["duration_ms"] = json!(10_000);
        assert!(Scenario::from_value(v).unwrap_err().to_string().contains("changes[0].at_ms"));
        let mut s = spec(&["host.pcpus=1,2"], 1);
        s.duration_ms = Some(10_000);
        let base = {
            let mut b = two_domain_base();
            b["duration_ms"] = json!(30_000);
            b["changes"] = json!([{"at_ms": 20_000, "policy": "credit", "param": "ratelimit_us", "value": 0}]);
            b
        };
        let e = Grid::new(&base, &s, Limits::default(), CLI_LIMITS).err().unwrap().to_string();
        assert!(e.contains("combination 0") && e.contains("changes[0]"), "{e}");
    }
}
