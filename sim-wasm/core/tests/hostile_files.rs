//! The worst hostile inputs found so far, kept as files (`tests/fixtures/hostile/`, see its README): each trace is
//! refused, or read with its damage named, and each script policy is stopped by the rule it breaks (or, for one
//! slow in every call, estimated long enough that the page asks first), never a panic, an abort or a hang. A file
//! added to the folder without an expectation here fails the test.

use schedsim_core::estimate::estimate;
use schedsim_core::recorded::{open_path, ReadOptions};
use schedsim_core::scenario::Scenario;
use schedsim_core::sim::{SimOptions, Simulation};
use std::path::PathBuf;

// As in the CLI, the page and Python: a script's copying counts as its work.
#[global_allocator]
static ALLOCATOR: schedsim_core::allocated::Counting = schedsim_core::allocated::Counting;

/// What each file must give: a substring of its outcome (the error, the damage, or "ok").
const EXPECT: &[(&str, &str)] = &[
    ("gzip-zeros-64MiB.txt.gz", "refused as a decompression bomb"),
    ("perf-data-size-2e40.data.gz", "its data section ends at byte 1099511629000"),
    ("perf-feature-size-2e40.data.gz", "the feature section 1 (offset 1459064, size 1099511627776"),
    ("text-cpu-99999999.txt", "CPU 99999999"),
    ("text-cpu-4294967295.txt", "CPU 4294967295"),
    ("text-dest-cpu-minus-1.txt", "dest_cpu"),
    ("text-time-backwards.txt", "backwards"),
    ("xentrace-cpu-99999999.xt", "not a xentrace file"),
    ("xentrace-tsc-backwards.xt", "backwards"),
    ("script-print-flood.json", "init at 0.000 ms, line 1: more than 2000000 operations in one call, copying counted"),
    ("script-log-flood.json", "ok"),
    ("script-timer-storm.json", "more than 100000 hook calls at one simulated instant"),
    ("script-resched-storm.json", "more than 100000 hook calls at one simulated instant"),
    ("script-nested-20000.json", "init at 0.000 ms, line 1: more than 2000000 operations in one call, copying counted"),
    ("script-copy-loop.json", "init at 0.000 ms, line 1: more than 2000000 operations in one call, copying counted"),
    ("script-this-growth.json", "`this` holds more than 100000 values after the call"),
    ("script-this-deep.json", "`this` nests values more than 32 levels deep after the call"),
    ("script-slow-calls.json", "the page asks"),
];

/// The page asks before a run estimated longer than this [s] (`COST_ASK_SECONDS` in the page).
const PAGE_ASKS_S: f64 = 20.0;

fn outcome(path: &std::path::Path) -> String {
    let name = path.file_name().unwrap().to_string_lossy();
    if !name.ends_with(".json") {
        return match open_path(path, None, &ReadOptions::default(), &mut || Ok(())) {
            Err(e) => e,
            Ok(run) => run.read.damage.map_or("ok".to_string(), |d| format!("damage: {}", d.message)),
        };
    }
    let sc = match Scenario::from_json(&std::fs::read_to_string(path).unwrap()) {
        Ok(sc) => sc,
        Err(e) => return e.to_string(),
    };
    let cost = estimate(&sc, &[]);
    if cost.seconds > PAGE_ASKS_S {
        // Running it is what the estimate guards against: minutes of interpreting.
        return format!("the page asks: {}", cost.describe());
    }
    let mut sim = Simulation::with_options(&sc, "mine", SimOptions { trace: false, ..SimOptions::default() }).unwrap();
    match sim.run() {
        Ok(()) => "ok".to_string(),
        Err(e) => e.to_string(),
    }
}

#[test]
fn every_kept_hostile_file_is_refused_or_bounded() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/fixtures/hostile");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir).unwrap().map(|e| e.unwrap().path()).collect();
    files.retain(|p| p.extension().is_some_and(|x| x != "md"));
    files.sort();
    let mut wrong = Vec::new();
    for path in &files {
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let t = std::time::Instant::now();
        let got = outcome(path);
        let secs = t.elapsed().as_secs_f64();
        eprintln!("{name}: {secs:.2} s: {got}");
        match EXPECT.iter().find(|(n, _)| *n == name) {
            None => wrong.push(format!("{name}: no expectation (got: {got})")),
            Some((_, want)) if !got.contains(want) => wrong.push(format!("{name}: want '{want}', got: {got}")),
            Some(_) => {}
        }
    }
    assert!(files.len() >= EXPECT.len(), "files missing: {} of {}", files.len(), EXPECT.len());
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
}
