//! Sweep grids: the combinations of scenario parameters a sweep runs (`--set PATH=V1,V2,...` in the CLI, a dict
//! of paths to value lists in Python), each validated before anything runs, and the runs they make (combination,
//! seed, policy) in grid order. One home for what a grid means, so the CLI's threads and shards and Python's workers
//! run the same points; running them in parallel, writing shards and caching are the front ends' business.

use crate::cost;
use crate::report::{with_overrides, RunOptions, RunReport};
use crate::scenario::{Scenario, ScenarioError, MAX_SEED};
use crate::sim::{SimOptions, Simulation};
use serde_json::{Map, Value};
use std::fmt;

/// `base`, `base + 1`, ..., `base + n - 1`; an error naming `--seeds` if that passes the largest seed.
pub fn seed_list(base: u64, n: u64) -> Result<Vec<u64>, String> {
    if n == 0 {
        return Err("--seeds: must be at least 1".into());
    }
    match base.checked_add(n - 1) {
        Some(last) if last <= MAX_SEED => Ok((base..=last).collect()),
        _ => Err(format!("--seeds: {n} seeds from {base} pass the largest seed, {MAX_SEED}")),
    }
}

/// Runs one policy of a scenario to the end and returns its run object (claims not attached).
pub fn run_one(sc: &Scenario, policy: &str, opts: &RunOptions) -> Result<RunReport, String> {
    let sim_opts = SimOptions { trace: true, max_events: opts.max_events, ..SimOptions::default() };
    let mut sim = Simulation::with_options(sc, policy, sim_opts).map_err(|e| e.to_string())?;
    sim.run().map_err(|e| e.to_string())?;
    Ok(sim.run_report(opts))
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

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// Sets `path` (dotted; array elements by index or by their `name`/`id`) in a scenario's JSON. Missing object keys
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
                let idx = match part.parse::<usize>() {
                    Ok(i) if i < items.len() => i,
                    Ok(i) => return Err(format!("{path}: index {i} is out of range ({at} has {} items)", items.len())),
                    Err(_) => match items.iter().position(|v| named(v) == Some(*part)) {
                        Some(i) => i,
                        None => {
                            let names: Vec<&str> = items.iter().filter_map(named).collect();
                            return Err(format!(
                                "{path}: {at} has no element named '{part}' (has: {})",
                                names.join(", ")
                            ));
                        }
                    },
                };
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

/// Every combination of the axes' values, the first axis varying slowest (`[]` axes give one empty combination).
pub fn combinations(axes: &[Axis]) -> Vec<Vec<Value>> {
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

/// One run of a grid: a combination (index into [`Grid::combos`]), a seed and a policy.
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
    /// Policy ids; empty means every policy of each combination.
    pub policies: Vec<String>,
}

/// A grid whose every combination has been built and validated: nothing runs until all of them are good.
pub struct Grid {
    pub paths: Vec<String>,
    pub combos: Vec<Vec<Value>>,
    pub scenarios: Vec<Scenario>,
    /// Every run in grid order: combination, then seed, then policy.
    pub work: Vec<Item>,
}

impl Grid {
    pub fn new(base: &Value, spec: &GridSpec) -> Result<Grid, GridError> {
        for (i, a) in spec.axes.iter().enumerate() {
            if spec.axes[..i].iter().any(|b| b.path == a.path) {
                return Err(
                    format!("--set {}: the same path is set twice; give all its values in one --set", a.path).into()
                );
            }
        }
        let paths: Vec<String> = spec.axes.iter().map(|a| a.path.clone()).collect();
        let combos = combinations(&spec.axes);
        // Seeds are applied per run, so memory does not grow with --seeds.
        let mut scenarios = Vec::with_capacity(combos.len());
        let mut work = Vec::new();
        for (c, values) in combos.iter().enumerate() {
            let at = |e: GridError| match e {
                GridError::Scenario { context, error } => {
                    GridError::Scenario { context: format!("combination {c} {context}"), error }
                }
                GridError::Other(msg) if msg.starts_with("--set") => GridError::Other(msg),
                GridError::Other(msg) => GridError::Other(format!("combination {c} {msg}")),
            };
            let (sc, ids) = combination_scenario(base, &paths, values, spec.duration_ms, &spec.policies).map_err(at)?;
            for seed in seed_list(spec.seed.unwrap_or(sc.seed), spec.seeds)? {
                work.extend(ids.iter().map(|p| Item { combination: c, seed, policy: p.clone() }));
            }
            scenarios.push(sc);
        }
        Ok(Grid { paths, combos, scenarios, work })
    }

    /// Refuses the grid if one combination's run is estimated above `max_events` (one point of a grid, such as
    /// `--set host.pcpus=1,256`, may cost thousands of times another); `option` is how the caller spells the limit.
    pub fn within(&self, max_events: u64, option: &str) -> Result<(), String> {
        for (c, sc) in self.scenarios.iter().enumerate() {
            let ids: Vec<String> = self.work.iter().filter(|w| w.combination == c).map(|w| w.policy.clone()).collect();
            cost::within_naming(sc, &ids, max_events, option)
                .map_err(|e| format!("combination {c} ({}): {e}", describe(&self.paths, &self.combos[c])))?;
        }
        Ok(())
    }
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
}
