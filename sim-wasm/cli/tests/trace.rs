//! `schedsim trace` end to end on the recorded fixtures (sim-wasm/core/tests/fixtures).

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn fixture(path: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../core/tests/fixtures").join(path).display().to_string()
}

fn schedsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedsim")).args(args).output().expect("schedsim runs")
}

#[test]
fn trace_report_scenario_and_refusal() {
    let trace = fixture("perf/sched.perf-script.txt.gz");
    let mapping = fixture("perf/sched.mapping.json");
    let out = schedsim(&["trace", "report", &trace, "--mapping", &mapping]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let rep: Value = serde_json::from_slice(&out.stdout).unwrap();
    let run = &rep["runs"][0];
    assert_eq!(run["policy"], "recorded");
    assert!((run["domains"]["hi"]["cpu_share"].as_f64().unwrap() - 0.8).abs() < 0.01);
    assert!(run["domains"]["hi"]["wake_to_run_ms"]["p99"].as_f64().is_some());

    // The fitted scenario is a scenario file the simulator runs.
    let out_path = std::env::temp_dir().join(format!("schedsim-trace-test-{}.json", std::process::id()));
    let out_s = out_path.display().to_string();
    let w = schedsim(&["trace", "scenario", &trace, "--mapping", &mapping, "--out", &out_s]);
    assert!(w.status.success(), "{}", String::from_utf8_lossy(&w.stderr));
    let r = schedsim(&["run", &out_s, "--duration-ms", "300", "--deterministic", "--policy", "credit"]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let _ = std::fs::remove_file(&out_path);

    // xentrace, and a file that is no trace.
    let x = schedsim(&["trace", "report", &fixture("xentrace/synthetic.xt"), "--format", "csv"]);
    assert!(String::from_utf8_lossy(&x.stdout).contains(",recorded,d2,10,"));
    let bad = schedsim(&["trace", "report", &fixture("README.md")]);
    assert_eq!(bad.status.code(), Some(2));
    assert!(
        String::from_utf8_lossy(&bad.stderr).contains("not a scheduling trace"),
        "{}",
        String::from_utf8_lossy(&bad.stderr)
    );
}
