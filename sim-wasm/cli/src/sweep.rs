//! `schedsim sweep`: a grid over scenario parameters. Each `--set PATH=V1,V2,...` names a dotted path into the
//! scenario file and the values it takes; every combination is validated before anything runs, then every
//! (combination, seed, policy) is simulated in parallel and printed as one row, in grid order.

use crate::batch::{self, seed_list};
use crate::par;
use schedsim_core::report::{with_overrides, RunOptions};
use schedsim_core::scenario::Scenario;
use schedsim_core::sim::Simulation;
use serde_json::{json, Map, Value};

/// Metrics printed when no `--metric` is given (patterns; `*` matches every domain).
pub const DEFAULT_METRICS: &[&str] =
    &["domains.*.cpu_share", "domains.*.response_ms.mean", "domains.*.response_ms.p99", "fairness.jain"];

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
    if path.is_empty() || path.split('.').any(str::is_empty) {
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
    Ok(Axis { path: path.to_string(), values })
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

/// What to sweep and how.
pub struct Spec {
    pub axes: Vec<Axis>,
    pub seeds: u64,
    pub seed: Option<u64>,
    pub duration_ms: Option<u64>,
    pub policies: Vec<String>,
    pub metrics: Vec<String>,
    pub jobs: usize,
}

/// The sweep's result: one row per (combination, seed, policy), in that order.
pub struct Table {
    pub scenario: String,
    pub axes: Vec<String>,
    pub seeds: u64,
    /// Metric columns: the paths each pattern matched in any row, pattern by pattern, in first-seen order.
    pub columns: Vec<String>,
    pub rows: Vec<Row>,
}

pub struct Row {
    pub combination: usize,
    pub values: Vec<Value>,
    pub seed: u64,
    pub policy: String,
    /// Matched metrics, per pattern: `(path, number)`.
    pub metrics: Vec<Vec<(String, Value)>>,
}

/// Every number a metric pattern matches in a run, as `(path, number)`, numbers kept as written (integers stay
/// integers in the output). Same matching as claims: dotted keys, `*` for every key at a level.
fn resolve(run: &Value, pattern: &str) -> Vec<(String, Value)> {
    fn walk(v: &Value, parts: &[&str], prefix: &str, out: &mut Vec<(String, Value)>) {
        let Some((head, rest)) = parts.split_first() else {
            if v.is_number() {
                out.push((prefix.to_string(), v.clone()));
            }
            return;
        };
        let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
        match (*head, v) {
            ("*", Value::Object(obj)) => obj.iter().for_each(|(k, child)| walk(child, rest, &join(k), out)),
            (key, _) => {
                if let Some(child) = v.get(key) {
                    walk(child, rest, &join(key), out);
                }
            }
        }
    }
    let parts: Vec<&str> = pattern.split('.').collect();
    let mut out = Vec::new();
    walk(run, &parts, "", &mut out);
    out
}

/// A combination as `path=value, ...` for messages.
fn describe(axes: &[Axis], values: &[Value]) -> String {
    if axes.is_empty() {
        return "the scenario as written".into();
    }
    axes.iter().zip(values).map(|(a, v)| format!("{}={v}", a.path)).collect::<Vec<_>>().join(", ")
}

/// Builds and validates every combination's scenario (one per seed), then runs the grid.
pub fn sweep(base: &Value, spec: &Spec) -> Result<Table, String> {
    for (i, a) in spec.axes.iter().enumerate() {
        if spec.axes[..i].iter().any(|b| b.path == a.path) {
            return Err(format!("--set {}: the same path is set twice; give all its values in one --set", a.path));
        }
    }
    for m in &spec.metrics {
        if m.is_empty() || m.split('.').any(str::is_empty) {
            return Err(format!("--metric '{m}': not a dotted path (e.g. domains.web.cpu_share)"));
        }
    }
    let combos = combinations(&spec.axes);
    // One scenario per combination (duration override applied), validated up front so that a bad value stops the
    // sweep before any run; seeds are applied per run, so memory does not grow with --seeds.
    let mut scenarios: Vec<Scenario> = Vec::new();
    let mut seeds: Vec<Vec<u64>> = Vec::new();
    let mut policies: Vec<Vec<String>> = Vec::new();
    for (c, values) in combos.iter().enumerate() {
        let what = describe(&spec.axes, values);
        let mut v = base.clone();
        for (axis, value) in spec.axes.iter().zip(values) {
            set_path(&mut v, &axis.path, value.clone()).map_err(|e| format!("--set {e}"))?;
        }
        let sc = Scenario::from_value(v).map_err(|e| format!("combination {c} ({what}): {e}"))?;
        let ids: Vec<String> = if spec.policies.is_empty() {
            sc.policies.iter().map(|p| p.id.clone()).collect()
        } else {
            spec.policies.clone()
        };
        for id in &ids {
            if sc.policy(id).is_none() {
                let known: Vec<&str> = sc.policies.iter().map(|p| p.id.as_str()).collect();
                return Err(format!(
                    "combination {c} ({what}): --policy {id}: no such policy (has: {})",
                    known.join(", ")
                ));
            }
        }
        let opts = RunOptions { duration_ms: spec.duration_ms, ..RunOptions::default() };
        let sc = with_overrides(&sc, &opts).map_err(|e| format!("combination {c} ({what}): {e}"))?;
        // Policy parameters are checked when a policy is built, not by the schema alone.
        for id in &ids {
            Simulation::new(&sc, id).map_err(|e| format!("combination {c} ({what}), policy {id}: {e}"))?;
        }
        seeds.push(seed_list(spec.seed.unwrap_or(sc.seed), spec.seeds)?);
        scenarios.push(sc);
        policies.push(ids);
    }
    let patterns: Vec<String> = if spec.metrics.is_empty() {
        DEFAULT_METRICS.iter().map(|s| s.to_string()).collect()
    } else {
        spec.metrics.clone()
    };

    // Grid order: combination, then seed, then policy.
    let mut work: Vec<(usize, u64, &str)> = Vec::new();
    for c in 0..combos.len() {
        for &seed in &seeds[c] {
            work.extend(policies[c].iter().map(|p| (c, seed, p.as_str())));
        }
    }
    let bar = par::progress(work.len(), "runs");
    let rows = par::try_map(&work, spec.jobs, &bar, |&(c, seed, policy)| {
        let opts = RunOptions { seed: Some(seed), ..RunOptions::default() };
        let failed = |e: String| {
            format!("combination {c} ({}), seed {seed}, policy {policy}: {e}", describe(&spec.axes, &combos[c]))
        };
        let sc = with_overrides(&scenarios[c], &opts).map_err(failed)?;
        let run = batch::run_one(&sc, policy, &opts).map_err(failed)?.to_value();
        Ok::<Row, String>(Row {
            combination: c,
            values: combos[c].clone(),
            seed,
            policy: policy.to_string(),
            metrics: patterns.iter().map(|p| resolve(&run, p)).collect(),
        })
    })?;

    let mut columns = Vec::new();
    for (p, pattern) in patterns.iter().enumerate() {
        let before = columns.len();
        for row in &rows {
            for (path, _) in &row.metrics[p] {
                if !columns[before..].contains(path) {
                    columns.push(path.clone());
                }
            }
        }
        // The defaults ask for response times "where present"; only a pattern the user typed deserves a warning.
        if columns.len() == before && !spec.metrics.is_empty() {
            eprintln!("schedsim sweep: warning: --metric {pattern} matches nothing in any run");
        }
    }
    let scenario = scenarios.first().map(|sc| sc.id.clone()).unwrap_or_default();
    Ok(Table { scenario, axes: spec.axes.iter().map(|a| a.path.clone()).collect(), seeds: spec.seeds, columns, rows })
}

/// A CSV field, quoted when it holds a comma, quote or newline.
fn csv_field(s: &str) -> String {
    if s.contains([',', '"', '\n', '\r']) {
        format!("\"{}\"", s.replace('"', "\"\""))
    } else {
        s.to_string()
    }
}

/// A parameter value as a CSV cell: strings bare, everything else as JSON.
fn cell(v: &Value) -> String {
    match v {
        Value::String(s) => csv_field(s),
        other => csv_field(&other.to_string()),
    }
}

impl Row {
    fn metric(&self, path: &str) -> Option<&Value> {
        self.metrics.iter().flatten().find(|(p, _)| p == path).map(|(_, x)| x)
    }
}

impl Table {
    /// `combination,<parameter paths>,seed,policy,<metric paths>`; a metric a run lacks is an empty cell.
    pub fn to_csv(&self) -> String {
        let mut header = vec!["combination".to_string()];
        header.extend(self.axes.iter().map(|a| csv_field(a)));
        header.extend(["seed".to_string(), "policy".to_string()]);
        header.extend(self.columns.iter().map(|c| csv_field(c)));
        let mut out = header.join(",");
        out.push('\n');
        for row in &self.rows {
            let mut cells = vec![row.combination.to_string()];
            cells.extend(row.values.iter().map(cell));
            cells.extend([row.seed.to_string(), csv_field(&row.policy)]);
            cells.extend(self.columns.iter().map(|c| row.metric(c).map(Value::to_string).unwrap_or_default()));
            out.push_str(&cells.join(","));
            out.push('\n');
        }
        out
    }

    /// `{"scenario", "parameters", "seeds", "metrics", "rows": [{"combination", "set", "seed", "policy",
    /// "metrics"}]}`; a metric a run lacks is omitted from its row.
    pub fn to_json(&self) -> Value {
        let rows: Vec<Value> = self
            .rows
            .iter()
            .map(|row| {
                let set: Map<String, Value> = self.axes.iter().cloned().zip(row.values.iter().cloned()).collect();
                let metrics: Map<String, Value> =
                    self.columns.iter().filter_map(|c| row.metric(c).map(|x| (c.clone(), x.clone()))).collect();
                json!({ "combination": row.combination, "set": set, "seed": row.seed, "policy": row.policy,
                        "metrics": metrics })
            })
            .collect();
        json!({ "scenario": self.scenario, "parameters": self.axes, "seeds": self.seeds, "metrics": self.columns,
                "rows": rows })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn metric_patterns_keep_numbers_as_written() {
        let run = json!({"domains":{"a":{"cpu_share":0.5,"context_switches":7,"busy":true},"b":{"cpu_share":0.25}}});
        assert_eq!(
            resolve(&run, "domains.*.cpu_share"),
            vec![("domains.a.cpu_share".into(), json!(0.5)), ("domains.b.cpu_share".into(), json!(0.25))]
        );
        assert_eq!(
            resolve(&run, "domains.a.*"),
            vec![("domains.a.cpu_share".into(), json!(0.5)), ("domains.a.context_switches".into(), json!(7))]
        );
        assert_eq!(resolve(&run, "domains.a.context_switches")[0].1.to_string(), "7");
        assert!(resolve(&run, "domains.c.cpu_share").is_empty());
    }

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(cell(&json!([1, 2])), "\"[1,2]\"");
        assert_eq!(cell(&json!("say \"hi\"")), "\"say \"\"hi\"\"\"");
    }
}
