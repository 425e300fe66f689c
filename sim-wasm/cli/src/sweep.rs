//! `schedsim sweep`: a grid over scenario parameters. Each `--set PATH=V1,V2,...` names a dotted path into the
//! scenario file and the values it takes; every combination is validated before anything runs, then every
//! (combination, seed, policy) is simulated in parallel and printed as one row, in grid order.

use crate::par;
pub use schedsim_core::grid::{
    combination_scenario, describe, parse_axis, run_point, set_path, Axis, Grid, GridError, GridSpec, Item, Limits,
    CLI_LIMITS,
};
use schedsim_core::metric_path::resolve;
use schedsim_core::scenario::Scenario;
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
    /// Refuse the sweep if one combination's run is estimated above `max_events` events (and stop any run that
    /// gets there, as `run` does), if it has more than `max_runs` runs, or if all its runs are estimated above
    /// `max_total_events` events.
    pub limits: Limits,
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
    /// What a shard records of the grid so that `--merge` can say which run each row must be.
    pub identity: GridIdentity,
}

/// The grid's runs beyond its axes: each combination's first seed and the policies every combination runs.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct GridIdentity {
    pub first_seeds: Vec<u64>,
    pub policies: Vec<String>,
}

impl GridIdentity {
    /// The (combination, seed, policy) of run `r` of a grid with `seeds` seeds per combination.
    fn item(&self, seeds: u64, r: usize) -> Option<(usize, u64, &str)> {
        let per_seed = self.policies.len();
        let per_combo = per_seed.checked_mul(seeds as usize)?;
        if per_combo == 0 {
            return None;
        }
        let c = r / per_combo;
        let first = *self.first_seeds.get(c)?;
        Some((c, first + ((r % per_combo) / per_seed) as u64, &self.policies[r % per_seed]))
    }
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
    // The run count, then every combination's estimate, are checked before anything runs.
    let grid = Grid::new(base, &spec.grid, spec.limits, CLI_LIMITS)?;
    let patterns: Vec<String> = if spec.metrics.is_empty() {
        DEFAULT_METRICS.iter().map(|s| s.to_string()).collect()
    } else {
        spec.metrics.clone()
    };
    let runs: Vec<usize> = match spec.shard {
        Some(shard) => shard.runs(grid.len()).collect(),
        None => (0..grid.len()).collect(),
    };
    let bar = par::progress(runs.len(), "runs");
    // Each thread keeps the scenario of the combination it ran last: a thread's runs come in grid order, so a
    // combination is built at most once per thread, within the grid work checked above.
    let rows = par::try_map_with(
        &runs,
        spec.jobs,
        &bar,
        || None,
        |held: &mut Option<(usize, Scenario)>, &r| {
            let Item { combination: c, seed, ref policy } = grid.item(r);
            let values = grid.combo(c);
            if held.as_ref().is_none_or(|(k, _)| *k != c) {
                *held = None;
                *held = Some((c, grid.scenario(c).map_err(|e| e.to_string())?));
            }
            let sc = &held.as_ref().expect("built above").1;
            let run = run_point(sc, seed, policy, false, Some(spec.limits.max_events)).map_err(|e| {
                format!("combination {c} ({}), seed {seed}, policy {policy}: {e}", describe(&grid.paths, &values))
            })?;
            Ok::<Row, String>(Row {
                run: r,
                combination: c,
                values,
                seed,
                policy: policy.clone(),
                metrics: patterns
                    .iter()
                    .map(|p| resolve(&run, p).into_iter().map(|(k, v)| (k, v.clone())).collect())
                    .collect(),
            })
        },
    )?;
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
    let identity = GridIdentity { first_seeds: grid.first_seeds.clone(), policies: grid.policies.clone() };
    Ok(Table {
        scenario: grid.scenario_id.clone(),
        axes: grid.paths.clone(),
        seeds: spec.grid.seeds,
        columns,
        column_patterns,
        rows,
        total_runs: grid.len(),
        identity,
    })
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

/// The simulator's version as shards record it: the crate's, and a hash of the sources that decide a run's result.
pub const VERSION: &str = schedsim_core::VERSION;

/// What a shard writes beside its CSV (`shard-I-of-N.json`): the sweep's identity (the scenario file's hash, the
/// simulator version and the whole grid) and a hash of its CSV, enough for `--merge` to check that every slice of
/// the same sweep is there, that each row is the run its index says, and to rebuild the whole table exactly.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ShardManifest {
    /// SHA-256 of the scenario file and every option that shapes the grid or its rows.
    pub sweep: String,
    /// The simulator that ran the shard ([`VERSION`]).
    pub version: String,
    /// SHA-256 of the scenario file as run (scripts attached).
    pub scenario_sha256: String,
    pub scenario: String,
    pub shard: usize,
    pub of: usize,
    /// Runs in the whole grid.
    pub runs: usize,
    pub axes: Vec<ManifestAxis>,
    pub seeds: u64,
    /// Duration override [ms].
    pub duration_ms: Option<u64>,
    #[serde(flatten)]
    pub grid: GridIdentity,
    pub patterns: Vec<String>,
    /// Whether the patterns were given with --metric (then the merge warns about patterns matching nothing).
    pub user_metrics: bool,
    /// This shard's metric columns and the pattern each belongs to.
    pub columns: Vec<(usize, String)>,
    /// Rows in this shard's CSV.
    pub rows: usize,
    /// SHA-256 of this shard's CSV file, header and rows.
    pub csv_sha256: String,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ManifestAxis {
    pub path: String,
    pub values: Vec<Value>,
}

fn sha256_hex(bytes: &[u8]) -> String {
    Sha256::digest(bytes).iter().map(|b| format!("{b:02x}")).collect()
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
/// temporary name, synced and renamed, and the manifest last, so a slice killed halfway leaves no file `--merge`
/// takes.
pub fn write_shard(dir: &Path, table: &Table, spec: &Spec, text: &str) -> Result<PathBuf, String> {
    let shard = spec.shard.ok_or("write_shard: no --shard")?;
    std::fs::create_dir_all(dir).map_err(|e| format!("--out {}: {e}", dir.display()))?;
    let csv_text = table.csv(true);
    let manifest = ShardManifest {
        sweep: sweep_id(text, spec),
        version: VERSION.to_string(),
        scenario_sha256: sha256_hex(text.as_bytes()),
        scenario: table.scenario.clone(),
        shard: shard.index,
        of: shard.count,
        runs: table.total_runs,
        axes: spec.grid.axes.iter().map(|a| ManifestAxis { path: a.path.clone(), values: a.values.clone() }).collect(),
        seeds: spec.grid.seeds,
        duration_ms: spec.grid.duration_ms,
        grid: table.identity.clone(),
        patterns: if spec.metrics.is_empty() {
            DEFAULT_METRICS.iter().map(|s| s.to_string()).collect()
        } else {
            spec.metrics.clone()
        },
        user_metrics: !spec.metrics.is_empty(),
        columns: table.column_patterns.iter().copied().zip(table.columns.iter().cloned()).collect(),
        rows: table.rows.len(),
        csv_sha256: sha256_hex(csv_text.as_bytes()),
    };
    let csv = dir.join(format!("{}.csv", shard.stem()));
    write_atomically(&csv, &csv_text)?;
    let text = serde_json::to_string_pretty(&manifest).expect("manifest serialises");
    write_atomically(&dir.join(format!("{}.json", shard.stem())), &format!("{text}\n"))?;
    Ok(csv)
}

fn write_atomically(path: &Path, text: &str) -> Result<(), String> {
    use std::io::Write;
    let tmp = path.with_extension(format!("tmp{}", std::process::id()));
    let cannot = |e: std::io::Error| format!("{}: cannot write: {e}", tmp.display());
    let mut f = std::fs::File::create(&tmp).map_err(cannot)?;
    f.write_all(text.as_bytes()).map_err(cannot)?;
    f.sync_all().map_err(cannot)?;
    std::fs::rename(&tmp, path).map_err(|e| format!("{}: cannot write: {e}", path.display()))
}

/// Largest shard file `--merge` reads [bytes]: a row is well under a kilobyte, and a grid has at most
/// `--max-runs` rows in all.
const MAX_SHARD_BYTES: u64 = 1 << 30;

/// A shard file's bytes, refusing anything but a regular file (a FIFO would block forever) and one over the limit.
fn read_shard_file(path: &Path) -> Result<Vec<u8>, String> {
    use std::io::Read;
    let cannot = |e: std::io::Error| format!("{}: cannot read: {e}", path.display());
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if !meta.is_file() {
        return Err(format!("{}: not a regular file", path.display()));
    }
    if meta.len() > MAX_SHARD_BYTES {
        return Err(format!("{}: larger than the limit of {MAX_SHARD_BYTES} bytes for a shard file", path.display()));
    }
    let mut bytes = Vec::new();
    std::fs::File::open(path).map_err(cannot)?.take(MAX_SHARD_BYTES + 1).read_to_end(&mut bytes).map_err(cannot)?;
    Ok(bytes)
}

/// The first field of the sweep's identity in which `m` differs from `first`, by name.
fn identity_difference(first: &ShardManifest, m: &ShardManifest) -> Option<&'static str> {
    [
        ("sweep (the scenario file or the options)", first.sweep == m.sweep),
        ("version (the simulator)", first.version == m.version),
        ("scenario_sha256", first.scenario_sha256 == m.scenario_sha256),
        ("scenario", first.scenario == m.scenario),
        ("of (the number of shards)", first.of == m.of),
        ("runs", first.runs == m.runs),
        ("axes", first.axes == m.axes),
        ("seeds", first.seeds == m.seeds),
        ("duration_ms", first.duration_ms == m.duration_ms),
        ("first_seeds", first.grid.first_seeds == m.grid.first_seeds),
        ("policies", first.grid.policies == m.grid.policies),
        ("patterns", first.patterns == m.patterns),
        ("user_metrics", first.user_metrics == m.user_metrics),
    ]
    .into_iter()
    .find(|(_, same)| !same)
    .map(|(name, _)| name)
}

/// Joins the shards in `dir` into the table the whole sweep prints, after checking that they are the N slices of
/// one sweep, each exactly once, each CSV as its shard wrote it, and each row the run its index names.
pub fn merge(dir: &Path) -> Result<Table, String> {
    let entries = std::fs::read_dir(dir).map_err(|e| format!("--merge {}: {e}", dir.display()))?;
    let mut manifests: Vec<(PathBuf, ShardManifest)> = Vec::new();
    for e in entries {
        let path = e.map_err(|e| format!("--merge {}: {e}", dir.display()))?.path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default();
        if name.starts_with("shard-") && name.ends_with(".json") {
            let bytes = read_shard_file(&path)?;
            let m: ShardManifest = serde_json::from_slice(&bytes)
                .map_err(|e| format!("{}: not a shard manifest of this schedsim: {e}", path.display()))?;
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
        if let Some(field) = identity_difference(first, m) {
            return Err(format!(
                "--merge: {} and {} are from different sweeps: their {field} differ",
                first_path.display(),
                path.display()
            ));
        }
        if m.version != VERSION {
            return Err(format!(
                "--merge: {} was written by schedsim {}, this is {VERSION}; merge with the build that ran the shards",
                path.display(),
                m.version
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
    let combos = axes.iter().try_fold(1usize, |n, a| n.checked_mul(a.values.len()));
    let expected_runs =
        combos.and_then(|c| c.checked_mul(first.seeds as usize)).and_then(|n| n.checked_mul(first.grid.policies.len()));
    if combos != Some(first.grid.first_seeds.len()) || expected_runs != Some(first.runs) {
        return Err(format!(
            "{}: its grid ({} axes, {} seeds, {} policies, {} first seeds) does not make its {} runs",
            first_path.display(),
            axes.len(),
            first.seeds,
            first.grid.policies.len(),
            first.grid.first_seeds.len(),
            first.runs
        ));
    }
    let mut rows: Vec<Row> = Vec::new();
    rows.try_reserve_exact(first.runs).map_err(|e| format!("--merge: {} rows: {e}", first.runs))?;
    for (path, m) in &manifests {
        rows.extend(read_shard_rows(&path.with_extension("csv"), m, &axes)?);
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
        identity: first.grid.clone(),
    })
}

/// A combination's values from the axes, the first axis varying slowest (as the grid numbers them).
fn combo_values(axes: &[Axis], c: usize) -> Vec<Value> {
    let mut rest = c;
    let mut out = vec![Value::Null; axes.len()];
    for (k, axis) in axes.iter().enumerate().rev() {
        out[k] = axis.values[rest % axis.values.len()].clone();
        rest /= axis.values.len();
    }
    out
}

/// A shard's CSV back into rows, after checking its hash against the manifest, its header against the grid and
/// every row's run index, combination, seed and policy against the run the grid has at that index. Parameter
/// values come from the manifest's grid, metrics from the non-empty cells.
fn read_shard_rows(csv: &Path, m: &ShardManifest, axes: &[Axis]) -> Result<Vec<Row>, String> {
    let at = |e: String| format!("{}: {e}", csv.display());
    let bytes = read_shard_file(csv)?;
    if sha256_hex(&bytes) != m.csv_sha256 {
        return Err(at(format!(
            "its contents do not match the hash its manifest records (it was changed, cut short or replaced \
             after shard {} wrote it); run that shard again",
            m.shard
        )));
    }
    let mut reader = csv::Reader::from_reader(bytes.as_slice());
    let mut header: Vec<String> = vec!["run".into(), "combination".into()];
    header.extend(axes.iter().map(|a| a.path.clone()));
    header.extend(["seed".into(), "policy".into()]);
    header.extend(m.columns.iter().map(|(_, c)| c.clone()));
    let have: Vec<String> = reader.headers().map_err(|e| at(e.to_string()))?.iter().map(str::to_string).collect();
    if have != header {
        return Err(at(format!("its header is {}, the grid's is {}", have.join(","), header.join(","))));
    }
    let fixed = 2 + axes.len(); // run, combination, the parameters
    let expected_rows = (m.runs + m.of - 1 - m.shard) / m.of;
    if m.rows != expected_rows {
        return Err(at(format!(
            "its manifest says {} rows, shard {} of {} has {expected_rows}",
            m.rows, m.shard, m.of
        )));
    }
    let mut rows = Vec::with_capacity(m.rows);
    for (k, record) in reader.records().enumerate() {
        let line = k + 2;
        let at = |e: String| format!("{}: row {} (line {line}): {e}", csv.display(), k + 1);
        let rec = record.map_err(|e| at(e.to_string()))?;
        if rec.len() != header.len() {
            return Err(at(format!("{} fields, expected {}", rec.len(), header.len())));
        }
        let int =
            |i: usize| rec[i].parse::<u64>().map_err(|_| at(format!("{} '{}' is not a count", header[i], &rec[i])));
        let (run, combination, seed) = (int(0)? as usize, int(1)? as usize, int(fixed)?);
        let want_run = m.shard + k * m.of;
        if run != want_run {
            return Err(at(format!("run {run}, but row {} of shard {}/{} is run {want_run}", k + 1, m.shard, m.of)));
        }
        let (c, want_seed, want_policy) =
            m.grid.item(m.seeds, run).ok_or_else(|| at(format!("run {run} is not in the grid")))?;
        let policy = &rec[fixed + 1];
        if (combination, seed, policy) != (c, want_seed, want_policy) {
            return Err(at(format!(
                "run {run} is combination {combination}, seed {seed}, policy {policy}; the grid's run {run} is \
                 combination {c}, seed {want_seed}, policy {want_policy}"
            )));
        }
        let mut metrics = vec![Vec::new(); m.patterns.len()];
        for (j, (p, path)) in m.columns.iter().enumerate() {
            let text = &rec[fixed + 2 + j];
            if !text.is_empty() {
                let x: Value = serde_json::from_str(text)
                    .ok()
                    .filter(Value::is_number)
                    .ok_or_else(|| at(format!("{path} '{text}' is not a number")))?;
                metrics.get_mut(*p).ok_or_else(|| at(format!("pattern {p} out of range")))?.push((path.clone(), x));
            }
        }
        rows.push(Row { run, combination, values: combo_values(axes, c), seed, policy: policy.to_string(), metrics });
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
            limits: Limits::default(),
        }
    }

    /// `--max-events` stops a sweep's run at that many events, with `run`'s budget error naming the point: the
    /// estimate is a guard against runs thousands of times too long, not a count, so a run may pass it and still
    /// reach the limit.
    #[test]
    fn max_events_stops_a_sweep_run_as_it_stops_run() {
        // The network path under dom0 stress is what the estimate undercounts most in the library.
        let text = include_str!("../../../scenarios/p003-table5-dom0-stress.json");
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
            limits: Limits { max_events, ..Limits::default() },
        };
        let e = sweep(&base, &spec(limit)).err().expect("the run stops at the limit").to_string();
        assert!(e.contains("run stopped") && e.contains(&format!("limit of {limit}")), "{e}");
        assert!(e.contains(&format!("seed {}, policy {policy}", sc.seed)), "{e}");
        // The same limit stops `run` the same way; at the run's own count the sweep completes.
        let opts = RunOptions { max_events: Some(limit), ..RunOptions::default() };
        let e = batch::run_one(&sc, &policy, &opts).expect_err("run stops too");
        assert!(e.contains(&format!("limit of {limit}")), "{e}");
        // The limit counts work (events and the run-queue entries they walk), a few times the events here.
        let table = sweep(&base, &spec(10 * actual)).unwrap();
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
            write_shard(&dir, &part, &spec, text).unwrap();
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
        write_shard(&stray, &part, &other, text).unwrap();
        let e = merge(&stray).err().unwrap();
        assert!(e.contains("different sweeps"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn a_bad_combination_names_its_field_path() {
        let base: Value = serde_json::from_str(include_str!("../../../scenarios/credit-weights.json")).unwrap();
        let mut s = spec(None, Vec::new());
        s.grid.axes = vec![parse_axis("domains.heavy.weight=256,-3").unwrap()];
        match Grid::new(&base, &s.grid, Limits::default(), CLI_LIMITS) {
            Err(GridError::Scenario { context, error }) => {
                assert!(context.starts_with("combination 1 (domains.heavy.weight=-3)"), "{context}");
                assert!(error.problems[0].starts_with("domains[1].weight"), "{:?}", error.problems);
            }
            Err(e) => panic!("expected a scenario error, got {e}"),
            Ok(_) => panic!("expected a scenario error"),
        }
    }

    /// Writes the 3 shards of `spec` over `text` into a fresh directory named `tag`.
    fn shards_in(tag: &str, text: &str, metrics: &[&str]) -> PathBuf {
        let base: Value = serde_json::from_str(text).unwrap();
        let dir = std::env::temp_dir().join(format!("schedsim-merge-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        for index in 0..3 {
            let spec = spec(Some(Shard { index, count: 3 }), metrics.iter().map(|m| m.to_string()).collect());
            write_shard(&dir, &sweep(&base, &spec).unwrap(), &spec, text).unwrap();
        }
        dir
    }

    /// Edits shard 1's CSV with `edit`; with `rehash`, records the new hash in its manifest, as someone covering
    /// their tracks would, so that the row checks are what refuses it.
    fn tamper(dir: &Path, rehash: bool, edit: impl FnOnce(String) -> String) {
        let csv = dir.join("shard-00001-of-00003.csv");
        let text = edit(std::fs::read_to_string(&csv).unwrap());
        std::fs::write(&csv, &text).unwrap();
        if rehash {
            let json = dir.join("shard-00001-of-00003.json");
            let mut m: ShardManifest = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            m.csv_sha256 = sha256_hex(text.as_bytes());
            std::fs::write(&json, serde_json::to_string(&m).unwrap()).unwrap();
        }
    }

    /// Every way a shard's files can differ from what its sweep wrote is refused, naming the shard (and the row
    /// where one is at fault); untouched shards merge.
    #[test]
    fn merges_refuse_shards_the_sweep_did_not_write() {
        let text = include_str!("../../../scenarios/credit-weights.json");
        let metrics = ["domains.*.cpu_share", "events"];
        let fresh = |tag: &str| shards_in(tag, text, &metrics);
        let refused = |dir: &Path, says: &[&str]| {
            let e = merge(dir).err().expect("refused");
            for s in says {
                assert!(e.contains(s), "expected '{s}' in: {e}");
            }
            std::fs::remove_dir_all(dir).unwrap();
        };
        let hash = "do not match the hash its manifest records";
        let shard1 = "shard-00001-of-00003.csv";

        // Cut short mid-number.
        let dir = fresh("cut");
        tamper(&dir, false, |t| t[..t.len() - 7].to_string());
        refused(&dir, &[shard1, hash]);

        // Another sweep's CSV of the same shape (another scenario file, same grid and metrics).
        let other_text = text.replacen("\"seed\": ", "\"seed\": 1", 1);
        assert_ne!(other_text, text);
        let other = shards_in("other", &other_text, &metrics);
        let dir = fresh("foreign");
        std::fs::copy(other.join(shard1), dir.join(shard1)).unwrap();
        refused(&dir, &[shard1, hash]);
        // ... and that sweep's whole shard, manifest too: a different sweep.
        let dir = fresh("foreign-pair");
        for ext in ["csv", "json"] {
            let f = format!("shard-00001-of-00003.{ext}");
            std::fs::copy(other.join(&f), dir.join(&f)).unwrap();
        }
        refused(&dir, &["shard-00001-of-00003.json", "different sweeps", "sweep (the scenario file"]);
        std::fs::remove_dir_all(&other).unwrap();

        // Two data columns swapped under their headers.
        let swap = |t: String| {
            t.lines()
                .enumerate()
                .map(|(k, l)| {
                    let mut cells: Vec<&str> = l.split(',').collect();
                    let n = cells.len();
                    if k > 0 {
                        cells.swap(n - 2, n - 3);
                    }
                    cells.join(",") + "\n"
                })
                .collect::<String>()
        };
        let dir = fresh("swap");
        tamper(&dir, false, swap);
        refused(&dir, &[shard1, hash]);

        // Rehashed edits: a seed, a policy, a run index, a header, a metric that is not a number.
        let edit_cell = |row: usize, col: usize, to: &'static str| {
            move |t: String| {
                t.lines()
                    .enumerate()
                    .map(|(k, l)| {
                        let mut cells: Vec<&str> = l.split(',').collect();
                        if k == row {
                            cells[col] = to;
                        }
                        cells.join(",") + "\n"
                    })
                    .collect::<String>()
            }
        };
        // Columns: run, combination, two parameters, seed, policy, metrics.
        for (tag, row, col, to, says) in [
            ("seed", 2, 4, "999", "row 2 (line 3): run 4 is combination 1, seed 999, policy"),
            ("policy", 1, 5, "sedf", "row 1 (line 2): run 1 is combination 0, seed 1, policy sedf"),
            ("run", 1, 0, "2", "row 1 (line 2): run 2, but row 1 of shard 1/3 is run 1"),
            ("header", 0, 4, "seeds", "its header is run,combination"),
            ("metric", 3, 6, "[1]", "row 3 (line 4): domains."),
        ] {
            let dir = fresh(tag);
            tamper(&dir, true, edit_cell(row, col, to));
            refused(&dir, &[shard1, says]);
        }

        // A shard written by another build of the simulator.
        let dir = fresh("version");
        for k in 0..3 {
            let json = dir.join(format!("shard-{k:05}-of-00003.json"));
            let mut m: ShardManifest = serde_json::from_str(&std::fs::read_to_string(&json).unwrap()).unwrap();
            m.version = "0.0.0+000000000000".into();
            std::fs::write(&json, serde_json::to_string(&m).unwrap()).unwrap();
        }
        refused(&dir, &["written by schedsim 0.0.0+000000000000"]);

        // A FIFO named like a manifest is refused, not waited on.
        #[cfg(unix)]
        {
            let dir = fresh("fifo");
            std::fs::remove_file(dir.join("shard-00002-of-00003.json")).unwrap();
            let ok = std::process::Command::new("mkfifo").arg(dir.join("shard-00002-of-00003.json")).status();
            if ok.is_ok_and(|s| s.success()) {
                refused(&dir, &["shard-00002-of-00003.json: not a regular file"]);
            }
        }

        // Untouched, they merge.
        let dir = fresh("clean");
        merge(&dir).unwrap();
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
