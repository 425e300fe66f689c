//! `schedsim sweep`: a grid over scenario parameters. Each `--set PATH=V1,V2,...` names a dotted path into the
//! scenario file and the values it takes; every combination is validated before anything runs, then every
//! (combination, seed, policy) is simulated in parallel and printed as one row, in grid order.

use crate::par;
pub use schedsim_core::grid::{
    combination_scenario, combinations, describe, parse_axis, run_point, set_path, Axis, Grid, GridError, GridSpec,
    Item,
};
use schedsim_core::metric_path::resolve;
use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};
use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

/// Metrics printed when no `--metric` is given (patterns; `*` matches every domain).
pub const DEFAULT_METRICS: &[&str] =
    &["domains.*.cpu_share", "domains.*.response_ms.mean", "domains.*.response_ms.p99", "fairness.jain"];

/// `I/N`: the I-th (from 0) of N slices of a grid's runs. Runs are dealt round-robin (run r goes to slice r mod N),
/// so slices cost about the same even when cost grows along the grid.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Shard {
    pub index: usize,
    pub count: usize,
}

impl Shard {
    pub fn parse(arg: &str) -> Result<Shard, String> {
        let bad = || format!("--shard {arg}: expected I/N with 0 <= I < N (e.g. 3/10)");
        let (i, n) = arg.split_once('/').ok_or_else(bad)?;
        let (index, count) =
            (i.trim().parse::<usize>().map_err(|_| bad())?, n.trim().parse::<usize>().map_err(|_| bad())?);
        if count == 0 || index >= count {
            return Err(bad());
        }
        Ok(Shard { index, count })
    }

    /// Indices of this slice's runs among `len`.
    pub fn runs(&self, len: usize) -> impl Iterator<Item = usize> + '_ {
        (self.index..len).step_by(self.count)
    }

    fn stem(&self) -> String {
        format!("shard-{:05}-of-{:05}", self.index, self.count)
    }
}

/// What to sweep and how.
pub struct Spec {
    pub grid: GridSpec,
    pub metrics: Vec<String>,
    pub jobs: usize,
    /// Run only this slice of the grid.
    pub shard: Option<Shard>,
    /// Refuse the sweep if one combination's run is estimated above this many events, and stop any run that gets
    /// there (`--max-events`), as `run` does.
    pub max_events: u64,
}

/// The sweep's result: one row per (combination, seed, policy), in that order.
pub struct Table {
    pub scenario: String,
    pub axes: Vec<String>,
    pub seeds: u64,
    /// Metric columns: the paths each pattern matched in any row, pattern by pattern, in first-seen order.
    pub columns: Vec<String>,
    /// For each column, the index of the pattern that matched it.
    pub column_patterns: Vec<usize>,
    pub rows: Vec<Row>,
    /// Runs in the whole grid (more than `rows` in a shard).
    pub total_runs: usize,
}

pub struct Row {
    /// Index of the run in the whole grid.
    pub run: usize,
    pub combination: usize,
    pub values: Vec<Value>,
    pub seed: u64,
    pub policy: String,
    /// Matched metrics, per pattern: `(path, number)`.
    pub metrics: Vec<Vec<(String, Value)>>,
}

/// Metric columns of `rows`, pattern by pattern, first-seen order; with each column's pattern index.
fn columns_of(patterns: usize, rows: &[Row]) -> (Vec<String>, Vec<usize>) {
    let (mut columns, mut owners) = (Vec::new(), Vec::new());
    for p in 0..patterns {
        let before = columns.len();
        for row in rows {
            for (path, _) in &row.metrics[p] {
                if !columns[before..].contains(path) {
                    columns.push(path.clone());
                    owners.push(p);
                }
            }
        }
    }
    (columns, owners)
}

/// Builds and validates every combination's scenario, then runs the grid (or the spec's slice of it).
pub fn sweep(base: &Value, spec: &Spec) -> Result<Table, GridError> {
    for m in &spec.metrics {
        if m.is_empty() || m.split('.').any(str::is_empty) {
            return Err(format!("--metric '{m}': not a dotted path (e.g. domains.web.cpu_share)").into());
        }
    }
    let grid = Grid::new(base, &spec.grid)?;
    // Every combination is estimated before anything runs.
    grid.within(spec.max_events, "--max-events ")?;
    let patterns: Vec<String> = if spec.metrics.is_empty() {
        DEFAULT_METRICS.iter().map(|s| s.to_string()).collect()
    } else {
        spec.metrics.clone()
    };
    let runs: Vec<usize> = match spec.shard {
        Some(shard) => shard.runs(grid.work.len()).collect(),
        None => (0..grid.work.len()).collect(),
    };
    let bar = par::progress(runs.len(), "runs");
    let rows = par::try_map(&runs, spec.jobs, &bar, |&r| {
        let Item { combination: c, seed, ref policy } = grid.work[r];
        let run = run_point(&grid.scenarios[c], seed, policy, false, Some(spec.max_events)).map_err(|e| {
            format!("combination {c} ({}), seed {seed}, policy {policy}: {e}", describe(&grid.paths, &grid.combos[c]))
        })?;
        Ok::<Row, String>(Row {
            run: r,
            combination: c,
            values: grid.combos[c].clone(),
            seed,
            policy: policy.clone(),
            metrics: patterns
                .iter()
                .map(|p| resolve(&run, p).into_iter().map(|(k, v)| (k, v.clone())).collect())
                .collect(),
        })
    })?;
    let (columns, column_patterns) = columns_of(patterns.len(), &rows);
    // The defaults ask for response times "where present"; only a pattern the user typed deserves a warning. A
    // shard sees only part of the grid, so it stays quiet; the merge warns instead.
    if !spec.metrics.is_empty() && spec.shard.is_none() {
        for (p, pattern) in patterns.iter().enumerate() {
            if !column_patterns.contains(&p) {
                eprintln!("schedsim sweep: warning: --metric {pattern} matches nothing in any run");
            }
        }
    }
    let scenario = grid.scenarios.first().map(|sc| sc.id.clone()).unwrap_or_default();
    let total_runs = grid.work.len();
    Ok(Table { scenario, axes: grid.paths, seeds: spec.grid.seeds, columns, column_patterns, rows, total_runs })
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
        self.csv(false)
    }

    /// The CSV, with a leading `run` column (the row's index in the whole grid) when `with_run`.
    fn csv(&self, with_run: bool) -> String {
        let mut header = if with_run { vec!["run".to_string()] } else { Vec::new() };
        header.push("combination".to_string());
        header.extend(self.axes.iter().map(|a| csv_field(a)));
        header.extend(["seed".to_string(), "policy".to_string()]);
        header.extend(self.columns.iter().map(|c| csv_field(c)));
        let mut out = header.join(",");
        out.push('\n');
        for row in &self.rows {
            let mut cells = if with_run { vec![row.run.to_string()] } else { Vec::new() };
            cells.push(row.combination.to_string());
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

/// What a shard writes beside its CSV (`shard-I-of-N.json`): enough for `--merge` to check that every slice of
/// the same sweep is there and to rebuild the whole table exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardManifest {
    /// SHA-256 of the scenario file and every option that shapes the grid or its rows.
    pub sweep: String,
    pub scenario: String,
    pub shard: usize,
    pub of: usize,
    /// Runs in the whole grid.
    pub runs: usize,
    pub axes: Vec<ManifestAxis>,
    pub seeds: u64,
    pub patterns: Vec<String>,
    /// Whether the patterns were given with --metric (then the merge warns about patterns matching nothing).
    pub user_metrics: bool,
    /// This shard's metric columns and the pattern each belongs to.
    pub columns: Vec<(usize, String)>,
    /// Rows in this shard's CSV.
    pub rows: usize,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestAxis {
    pub path: String,
    pub values: Vec<Value>,
}

/// The identity of a sweep: the scenario file's bytes and the options, hashed (hex SHA-256).
pub fn sweep_id(text: &str, spec: &Spec) -> String {
    let options = json!({
        "axes": spec.grid.axes.iter().map(|a| json!([a.path, a.values])).collect::<Vec<_>>(),
        "seeds": spec.grid.seeds, "seed": spec.grid.seed, "duration_ms": spec.grid.duration_ms,
        "policies": spec.grid.policies, "metrics": spec.metrics,
    });
    let mut h = Sha256::new();
    h.update(text.as_bytes());
    h.update([0]);
    h.update(options.to_string().as_bytes());
    h.finalize().iter().map(|b| format!("{b:02x}")).collect()
}

/// Writes a shard's table to `dir/shard-I-of-N.csv` and its manifest beside it. Each file is written under a
/// temporary name and renamed, and the manifest last, so a slice killed halfway leaves no file `--merge` takes.
pub fn write_shard(dir: &Path, table: &Table, spec: &Spec, id: String) -> Result<PathBuf, String> {
    let shard = spec.shard.ok_or("write_shard: no --shard")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("--out {}: {e}", dir.display()))?;
    let manifest = ShardManifest {
        sweep: id,
        scenario: table.scenario.clone(),
        shard: shard.index,
        of: shard.count,
        runs: table.total_runs,
        axes: spec.grid.axes.iter().map(|a| ManifestAxis { path: a.path.clone(), values: a.values.clone() }).collect(),
        seeds: spec.grid.seeds,
        patterns: if spec.metrics.is_empty() {
            DEFAULT_METRICS.iter().map(|s| s.to_string()).collect()
        } else {
            spec.metrics.clone()
        },
        user_metrics: !spec.metrics.is_empty(),
        columns: table.column_patterns.iter().copied().zip(table.columns.iter().cloned()).collect(),
        rows: table.rows.len(),
    };
    let csv = dir.join(format!("{}.csv", shard.stem()));
    write_atomically(&csv, &table.csv(true))?;
    let text = serde_json::to_string_pretty(&manifest).expect("manifest serialises");
    write_atomically(&dir.join(format!("{}.json", shard.stem())), &format!("{text}\n"))?;
    Ok(csv)
}

fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    std::fs::write(&tmp, text).map_err(|e| format!("{}: cannot write: {e}", tmp.display()))?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Joins the shards in `dir` into the table the whole sweep prints, after checking that they are the N slices of
/// one sweep, each exactly once.
pub fn merge(dir: &Path) -> Result<Table, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("--merge {}: {e}", dir.display()))?;
    let mut manifests: Vec<(PathBuf, ShardManifest)> = Vec::new();
    for e in entries {
        let path = e.map_err(|e| format!("--merge {}: {e}", dir.display()))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with("shard-") && name.ends_with(".json") {
            let text = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
            let m: ShardManifest = serde_json::from_str(&text).map_err(|e| format!("{}: {e}", path.display()))?;
            manifests.push((path, m));
        }
    }
    manifests.sort_by_key(|(_, m)| m.shard);
    let Some((first_path, first)) = manifests.first() else {
        return Err(format!(
            "--merge {}: no shard-*.json files (write them with --shard I/N --out DIR)",
            dir.display()
        ));
    };
    for (path, m) in &manifests {
        if m.sweep != first.sweep || m.of != first.of {
            return Err(format!(
                "--merge: {} and {} are from different sweeps (scenario file or options differ)",
                first_path.display(),
                path.display()
            ));
        }
    }
    let have: Vec<usize> = manifests.iter().map(|(_, m)| m.shard).collect();
    let missing: Vec<String> = (0..first.of).filter(|i| !have.contains(i)).map(|i| i.to_string()).collect();
    if !missing.is_empty() || have.len() != first.of {
        return Err(format!(
            "--merge {}: {} of {} shards present; missing: {}",
            dir.display(),
            have.len(),
            first.of,
            if missing.is_empty() { "none (a shard appears twice)".into() } else { missing.join(", ") }
        ));
    }
    let axes: Vec<Axis> = first.axes.iter().map(|a| Axis { path: a.path.clone(), values: a.values.clone() }).collect();
    let combos = combinations(&axes);
    let mut rows: Vec<Row> = Vec::with_capacity(first.runs);
    for (path, m) in &manifests {
        let csv = path.with_extension("csv");
        rows.extend(read_shard_rows(&csv, m, &combos)?);
    }
    rows.sort_by_key(|r| r.run);
    if rows.len() != first.runs || rows.iter().enumerate().any(|(i, r)| r.run != i) {
        return Err(format!(
            "--merge {}: the shards' rows do not cover runs 0..{} once each",
            dir.display(),
            first.runs
        ));
    }
    let (columns, column_patterns) = columns_of(first.patterns.len(), &rows);
    if first.user_metrics {
        for (p, pattern) in first.patterns.iter().enumerate() {
            if !column_patterns.contains(&p) {
                eprintln!("schedsim sweep: warning: --metric {pattern} matches nothing in any run");
            }
        }
    }
    Ok(Table {
        scenario: first.scenario.clone(),
        axes: axes.into_iter().map(|a| a.path).collect(),
        seeds: first.seeds,
        columns,
        column_patterns,
        rows,
        total_runs: first.runs,
    })
}

/// A shard's CSV back into rows: parameter values from the manifest's grid, metrics from the non-empty cells.
fn read_shard_rows(csv: &Path, m: &ShardManifest, combos: &[Vec<Value>]) -> Result<Vec<Row>, String> {
    let at = |e: String| format!("{}: {e}", csv.display());
    let mut reader = csv::Reader::from_path(csv).map_err(|e| at(e.to_string()))?;
    let fixed = 2 + m.axes.len(); // run, combination, the parameters
    let width = fixed + 2 + m.columns.len();
    let mut rows = Vec::with_capacity(m.rows);
    for record in reader.records() {
        let rec = record.map_err(|e| at(e.to_string()))?;
        if rec.len() != width {
            return Err(at(format!("a row has {} fields, expected {width}", rec.len())));
        }
        let int = |i: usize| rec[i].parse::<u64>().map_err(|_| at(format!("'{}' is not a count", &rec[i])));
        let (run, combination, seed) = (int(0)? as usize, int(1)? as usize, int(fixed)?);
        let values =
            combos.get(combination).ok_or_else(|| at(format!("combination {combination} is not in the grid")))?;
        let mut metrics = vec![Vec::new(); m.patterns.len()];
        for (k, (p, path)) in m.columns.iter().enumerate() {
            let text = &rec[fixed + 2 + k];
            if !text.is_empty() {
                let x: Value = serde_json::from_str(text).map_err(|_| at(format!("'{text}' is not a number")))?;
                metrics.get_mut(*p).ok_or_else(|| at(format!("pattern {p} out of range")))?.push((path.clone(), x));
            }
        }
        rows.push(Row { run, combination, values: values.clone(), seed, policy: rec[fixed + 1].to_string(), metrics });
    }
    if rows.len() != m.rows {
        return Err(at(format!("{} rows, its manifest says {}", rows.len(), m.rows)));
    }
    Ok(rows)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::batch;
    use schedsim_core::cost;
    use schedsim_core::report::RunOptions;
    use schedsim_core::scenario::Scenario;

    #[test]
    fn csv_fields_are_quoted_when_needed() {
        assert_eq!(csv_field("plain"), "plain");
        assert_eq!(csv_field("a,b"), "\"a,b\"");
        assert_eq!(cell(&json!([1, 2])), "\"[1,2]\"");
        assert_eq!(cell(&json!("say \"hi\"")), "\"say \"\"hi\"\"\"");
    }

    #[test]
    fn shards_parse_and_deal_runs_round_robin() {
        assert_eq!(Shard::parse("3/10").unwrap(), Shard { index: 3, count: 10 });
        for bad in ["10/10", "1/0", "x/2", "2", "-1/3"] {
            assert!(Shard::parse(bad).unwrap_err().contains("I/N"), "{bad}");
        }
        let s = Shard { index: 1, count: 3 };
        assert_eq!(s.runs(8).collect::<Vec<_>>(), vec![1, 4, 7]);
        // Every run belongs to exactly one slice.
        let mut all: Vec<usize> =
            (0..3).flat_map(|i| Shard { index: i, count: 3 }.runs(8).collect::<Vec<_>>()).collect();
        all.sort();
        assert_eq!(all, (0..8).collect::<Vec<_>>());
    }

    fn spec(shard: Option<Shard>, metrics: Vec<String>) -> Spec {
        Spec {
            grid: GridSpec {
                axes: vec![parse_axis("domains.heavy.weight=256,1024").unwrap(), parse_axis("host.pcpus=1,2").unwrap()],
                seeds: 2,
                seed: None,
                duration_ms: Some(1600),
                policies: Vec::new(),
            },
            metrics,
            jobs: 2,
            shard,
            max_events: schedsim_core::cost::DEFAULT_MAX_EVENTS,
        }
    }

    /// `--max-events` stops a sweep's run at that many events, with `run`'s budget error naming the point: the
    /// estimate is a guard against runs thousands of times too long, not a count, so a run may pass it and still
    /// reach the limit.
    #[test]
    fn max_events_stops_a_sweep_run_as_it_stops_run() {
        // The disk path's events are the ones the estimate undercounts most in the library.
        let text = include_str!("../../../scenarios/p003-table4-disk-stress.json");
        let base: Value = serde_json::from_str(text).unwrap();
        let sc = Scenario::from_json(text).unwrap();
        let events = |p: &str| run_point(&sc, sc.seed, p, true, None).unwrap()["events"].as_u64().unwrap();
        let (actual, policy) = sc.policies.iter().map(|p| (events(&p.id), p.id.clone())).max().unwrap();
        let estimate = cost::estimate(&sc, std::slice::from_ref(&policy)).events_per_run;
        assert!(actual > estimate + 2, "needs a run above its estimate: {actual} events, estimated {estimate}");
        let limit = (estimate + actual) / 2;
        let spec = |max_events| Spec {
            grid: GridSpec {
                axes: Vec::new(),
                seeds: 1,
                seed: None,
                duration_ms: None,
                policies: vec![policy.clone()],
            },
            metrics: vec!["events".to_string()],
            jobs: 1,
            shard: None,
            max_events,
        };
        let e = sweep(&base, &spec(limit)).err().expect("the run stops at the limit").to_string();
        assert!(e.contains("run stopped") && e.contains(&format!("{} events", limit + 1)), "{e}");
        assert!(e.contains(&format!("seed {}, policy {policy}", sc.seed)), "{e}");
        // The same limit stops `run` the same way; at the run's own count the sweep completes.
        let opts = RunOptions { max_events: Some(limit), ..RunOptions::default() };
        let e = batch::run_one(&sc, &policy, &opts).expect_err("run stops too");
        assert!(e.contains(&format!("{} events", limit + 1)), "{e}");
        let table = sweep(&base, &spec(actual)).unwrap();
        assert_eq!(table.rows[0].metric("events"), Some(&json!(actual)));
    }

    #[test]
    fn shards_merged_equal_the_whole_sweep() {
        let text = include_str!("../../../scenarios/credit-weights.json");
        let base: Value = serde_json::from_str(text).unwrap();
        let metrics = vec!["domains.*.cpu_share".to_string(), "events".to_string()];
        let whole = sweep(&base, &spec(None, metrics.clone())).unwrap();
        assert_eq!(whole.rows.len(), 4 * 2 * 2);
        let dir = std::env::temp_dir().join(format!("schedsim-shards-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for index in 0..3 {
            let spec = spec(Some(Shard { index, count: 3 }), metrics.clone());
            let part = sweep(&base, &spec).unwrap();
            assert_eq!(part.total_runs, whole.rows.len());
            write_shard(&dir, &part, &spec, sweep_id(text, &spec)).unwrap();
        }
        let merged = merge(&dir).unwrap();
        assert_eq!(merged.to_csv(), whole.to_csv());
        assert_eq!(merged.to_json(), whole.to_json());

        // A slice of another sweep (other options) is refused, and so is a missing slice.
        let other = spec(Some(Shard { index: 0, count: 3 }), vec!["events".to_string()]);
        let stray = dir.join("stray");
        std::fs::create_dir_all(&stray).unwrap();
        for f in ["shard-00001-of-00003", "shard-00002-of-00003"] {
            for ext in ["csv", "json"] {
                std::fs::copy(dir.join(format!("{f}.{ext}")), stray.join(format!("{f}.{ext}"))).unwrap();
            }
        }
        let e = merge(&stray).err().unwrap();
        assert!(e.contains("2 of 3 shards present; missing: 0"), "{e}");
        let part = sweep(&base, &other).unwrap();
        write_shard(&stray, &part, &other, sweep_id(text, &other)).unwrap();
        let e = merge(&stray).err().unwrap();
        assert!(e.contains("different sweeps"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_combination_names_its_field_path() {
        let base: Value = serde_json::from_str(include_str!("../../../scenarios/credit-weights.json")).unwrap();
        let mut s = spec(None, Vec::new());
        s.grid.axes = vec![parse_axis("domains.heavy.weight=256,-3").unwrap()];
        match Grid::new(&base, &s.grid) {
            Err(GridError::Scenario { context, error }) => {
                assert!(context.starts_with("combination 1 (domains.heavy.weight=-3)"), "{context}");
                assert!(error.problems[0].starts_with("domains[1].weight"), "{:?}", error.problems);
            }
            Err(e) => panic!("expected a scenario error, got {e}"),
            Ok(_) => panic!("expected a scenario error"),
        }
    }
}
