//! `schedsim validate DIR`: the `kvm` model against the recordings of this machine in DIR (one folder per shape:
//! `trace.txt.gz`, `mapping.json`, `record.txt`, and optionally `expect.json`), as a Markdown table; with `--out`
//! written to a file, with `--check` compared with that file instead (so a test keeps the committed page current).
//! Exits 1 when a claimed tolerance is missed.

use schedsim_core::recorded::validate::{self, Expectations, ShapeResult};
use schedsim_core::recorded::ReadOptions;
use std::collections::BTreeMap;
use std::path::{Path, PathBuf};

/// Largest mapping or expectations file [bytes].
const MAX_SIDE_FILE: u64 = 1 << 20;

fn read_small(p: &Path) -> Result<String, String> {
    let meta = std::fs::metadata(p).map_err(|e| format!("{}: {e}", p.display()))?;
    if !meta.is_file() || meta.len() > MAX_SIDE_FILE {
        return Err(format!("{}: not a regular file of at most {MAX_SIDE_FILE} bytes", p.display()));
    }
    std::fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display()))
}

/// The shape folders of `dir`, by name.
fn shapes(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.join("trace.txt.gz").is_file())
        .collect();
    out.sort();
    if out.is_empty() {
        return Err(format!("{}: no shape folders (each needs trace.txt.gz and mapping.json)", dir.display()));
    }
    Ok(out)
}

/// The `key: value` lines of a record.txt.
fn record_lines(text: &str) -> BTreeMap<String, String> {
    text.lines().filter_map(|l| l.split_once(": ")).map(|(k, v)| (k.trim().to_string(), v.trim().to_string())).collect()
}

/// Compares every shape of `dir` under `schedulers`; returns the results and the host facts of the first shape.
pub fn run_dir(dir: &Path, schedulers: &[&str]) -> Result<(Vec<ShapeResult>, BTreeMap<String, String>), String> {
    let mut results = Vec::new();
    let mut facts = BTreeMap::new();
    for shape in shapes(dir)? {
        let name = shape.file_name().map(|n| n.to_string_lossy().into_owned()).unwrap_or_default();
        let mapping = read_small(&shape.join("mapping.json"))?;
        let record = read_small(&shape.join("record.txt")).unwrap_or_default();
        let lines = record_lines(&record);
        let expect: Expectations = match read_small(&shape.join("expect.json")) {
            Ok(t) => serde_json::from_str(&t).map_err(|e| format!("{}/expect.json: {e}", shape.display()))?,
            Err(_) => Expectations::default(),
        };
        let run = crate::trace::open_trace(&shape.join("trace.txt.gz"), Some(&mapping), &ReadOptions::default())?;
        let what = lines.get("shape").cloned().unwrap_or_default();
        results.push(validate::compare(&name, &what, &run, schedulers, &expect)?);
        if facts.is_empty() {
            for k in ["kernel", "cpus", "cgroups", "config", "perf", "debugfs base_slice_ns", "sched_autogroup_enabled"]
            {
                if let Some(v) = lines.get(k) {
                    facts.insert(k.to_string(), v.clone());
                }
            }
        }
    }
    Ok((results, facts))
}
