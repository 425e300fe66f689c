//! The `schedsim` binary end to end: multi-seed runs and checks, sweeps, bench output. Runs are shortened with
//! `--duration-ms` so the suite stays fast in debug builds; nothing here asserts on wall-clock figures.

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Command, Output};

fn scenario(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(name).display().to_string()
}

fn schedsim(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_schedsim")).args(args).output().expect("schedsim runs")
}

fn stdout_json(out: &Output) -> Value {
    assert!(out.status.success(), "schedsim failed: {}", String::from_utf8_lossy(&out.stderr));
    serde_json::from_slice(&out.stdout).expect("stdout is JSON")
}

/// A scratch copy of a library scenario with its claims replaced.
fn with_claims(name: &str, claims: Value) -> PathBuf {
    let mut v: Value = serde_json::from_str(&std::fs::read_to_string(scenario(name)).unwrap()).unwrap();
    v["claims"] = claims;
    let path = std::env::temp_dir().join(format!("schedsim-cli-test-{}-{name}", std::process::id()));
    std::fs::write(&path, v.to_string()).unwrap();
    path
}

#[test]
fn run_with_seeds_adds_stats_and_keeps_the_run_shape() {
    let file = scenario("credit-boost.json");
    let multi = stdout_json(&schedsim(&["run", &file, "--seeds", "3", "--duration-ms", "5000", "--deterministic"]));
    let single = stdout_json(&schedsim(&["run", &file, "--duration-ms", "5000", "--deterministic"]));
    assert_eq!(multi["seeds"], 3);
    assert_eq!(multi["first_seed"], 1);
    assert!(multi.get("seed_runs").is_none(), "seed_runs only with --keep-seed-runs");
    let runs = multi["runs"].as_array().unwrap();
    assert_eq!(runs.len(), single["runs"].as_array().unwrap().len());
    for (m, s) in runs.iter().zip(single["runs"].as_array().unwrap()) {
        // The run object is the first seed's, as `run` prints it; `stats` and the claims' seed counts are added.
        for key in ["policy", "events", "domains", "tasks", "fairness"] {
            assert_eq!(m[key], s[key], "{key}");
        }
        let st = &m["stats"]["domains.mixed.response_ms.mean"];
        assert_eq!(st["n"], 3);
        assert!(st["min"].as_f64() <= st["mean"].as_f64() && st["mean"].as_f64() <= st["max"].as_f64());
        assert!(st["ci95"].as_f64().unwrap() >= 0.0);
        for c in m["claims"].as_array().unwrap() {
            assert_eq!(c["seeds"], 3);
            let held = c["held_seeds"].as_u64().unwrap();
            assert_eq!(c["holds"], held == 3);
        }
    }
    let kept = stdout_json(&schedsim(&[
        "run",
        &file,
        "--seeds",
        "2",
        "--seed",
        "10",
        "--keep-seed-runs",
        "--duration-ms",
        "3000",
        "--policy",
        "credit",
    ]));
    let seeds: Vec<u64> = kept["seed_runs"].as_array().unwrap().iter().map(|r| r["seed"].as_u64().unwrap()).collect();
    assert_eq!(seeds, vec![10, 11]);
    assert_eq!(kept["seed_runs"][0]["runs"].as_array().unwrap().len(), 1);
}

#[test]
fn run_seeds_output_does_not_depend_on_threads() {
    let file = scenario("credit-boost.json");
    let args = |jobs: &'static str| {
        schedsim(&["run", &file, "--seeds", "4", "--duration-ms", "3000", "--deterministic", "--jobs", jobs]).stdout
    };
    assert_eq!(args("1"), args("3"));
}

#[test]
fn check_with_seeds_counts_seeds_per_claim() {
    let file = with_claims(
        "credit-boost.json",
        serde_json::json!([
            { "text": "always true", "metric": "fairness.jain", "policy": "credit", "at_least": 0 },
            { "text": "never true", "metric": "fairness.jain", "policy": "credit", "at_most": -1 }
        ]),
    );
    let out = schedsim(&["check", file.to_str().unwrap(), "--seeds", "2"]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert_eq!(out.status.code(), Some(1), "{text}");
    assert!(text.contains("ok   credit-boost [credit] always true (2/2 seeds)"), "{text}");
    assert!(text.contains("FAIL credit-boost [credit] never true (0/2 seeds; failed: seeds 1, 2)"), "{text}");
    assert!(text.contains("values (seed 1):"), "{text}");
    assert!(text.trim_end().ends_with("claims: 1 passed, 1 failed"), "{text}");
    // Without --seeds the lines read as they always have.
    let plain = String::from_utf8_lossy(&schedsim(&["check", file.to_str().unwrap()]).stdout).to_string();
    assert!(plain.contains("ok   credit-boost [credit] always true\n"), "{plain}");
    std::fs::remove_file(file).ok();
}

/// A broken ablation (here its patch renames the domain the claim's bound reads, so the ablated run lacks it) fails
/// the check as broken, not as "fails without" (which would read as a pass); `--json` gives the same verdicts.
#[test]
fn check_names_a_broken_ablation() {
    let mut doc: Value =
        serde_json::from_str(&std::fs::read_to_string(scenario("credit-weights.json")).unwrap()).unwrap();
    doc["duration_ms"] = 1500.into();
    doc["warmup_ms"] = 500.into();
    doc["variants"] = serde_json::json!([]);
    doc["claims"] = serde_json::json!([
        { "text": "heavy gets more", "metric": "domains.heavy.cpu_share", "higher": "credit", "than": "credit",
          "than_metric": "domains.light1.cpu_share", "by_factor": 1.2,
          "factor_at_most": { "policy": "credit", "metric": "domains.light2.cpu_share", "scale": 100 },
          "without": { "label": "renamed", "patch": [{ "op": "replace", "path": "/domains/2/name", "value": "light3" }] } }
    ]);
    let file = std::env::temp_dir().join(format!("schedsim-cli-test-{}-broken.json", std::process::id()));
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = schedsim(&["check", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.starts_with("FAIL credit-weights [credit] heavy gets more (without 'renamed': broken 1/1; ablation broken: factor_at_most: 'domains.light2.cpu_share' must match one value"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
    let out = schedsim(&["check", "--json", file.to_str().unwrap()]);
    assert_eq!(out.status.code(), Some(1));
    let v: Value = serde_json::from_slice(&out.stdout).expect("stdout is JSON");
    assert_eq!(v[0]["verdict"]["kind"], "ablation_broken", "{v}");
    assert!(v[0]["verdict"]["ablation_error"].as_str().unwrap().contains("must match one value"), "{v}");
    assert_eq!(v[0]["verdict"]["values"]["bound"], v[0]["values"]["factor_at_most"], "{v}");
    assert_eq!(v[0]["holds"], true, "it holds on the scenario itself");
    std::fs::remove_file(file).ok();
}

#[test]
fn check_passes_an_effect_claim_only_if_its_ablation_fails() {
    // credit-weights: weights give shares. Ablating the weights (all equal) must undo the claimed effect; an
    // ablation that leaves the mechanism in place (a cosmetic label change) must be caught.
    let sc: Value = serde_json::from_str(&std::fs::read_to_string(scenario("credit-weights.json")).unwrap()).unwrap();
    let (heavy, light) = {
        let d = sc["domains"].as_array().unwrap();
        let guests: Vec<&Value> = d.iter().filter(|d| d["role"] != "driver").collect();
        let w = |x: &Value| x["weight"].as_u64().unwrap_or(256);
        let (a, b) = (guests[0], guests[1]);
        if w(a) > w(b) {
            (a["name"].as_str().unwrap().to_string(), b["name"].as_str().unwrap().to_string())
        } else {
            (b["name"].as_str().unwrap().to_string(), a["name"].as_str().unwrap().to_string())
        }
    };
    let index = |name: &str| sc["domains"].as_array().unwrap().iter().position(|d| d["name"] == name).unwrap();
    let equal = serde_json::json!([
        { "op": "add", "path": format!("/domains/{}/weight", index(&heavy)), "value": 256 },
        { "op": "add", "path": format!("/domains/{}/weight", index(&light)), "value": 256 }
    ]);
    let claim = |label: &str, patch: Value| {
        serde_json::json!({ "text": format!("weights give shares ({label})"),
            "metric": format!("domains.{heavy}.cpu_share"), "higher": "credit", "than": "credit",
            "than_metric": format!("domains.{light}.cpu_share"), "by_factor": 1.2,
            "without": { "label": label, "patch": patch } })
    };
    let mut doc = sc.clone();
    doc["duration_ms"] = 3000.into();
    doc["warmup_ms"] = 500.into();
    doc["claims"] = serde_json::json!([
        claim("equal weights", equal),
        claim("relabelled", serde_json::json!([{ "op": "add", "path": "/policies/0/label", "value": "x" }])),
        { "text": "a result the model does not give", "metric": "fairness.jain", "policy": "credit",
          "at_most": -1, "status": "not_reproduced", "paper": "-1 (made up)", "reason": "test" }
    ]);
    let file = std::env::temp_dir().join(format!("schedsim-cli-test-{}-ablation.json", std::process::id()));
    std::fs::write(&file, doc.to_string()).unwrap();
    let out = schedsim(&["check", file.to_str().unwrap()]);
    let text = String::from_utf8_lossy(&out.stdout).to_string();
    assert!(text.contains("(equal weights)") && text.contains("without 'equal weights': fails 1/1"), "{text}");
    assert!(
        text.contains(
            "FAIL credit-weights [credit] weights give shares (relabelled) (without 'relabelled': still holds 1/1)"
        ),
        "{text}"
    );
    assert!(text.contains("n/r  credit-weights [credit] a result the model does not give (not reproduced)"), "{text}");
    // Both runs' values are printed for a claim with an ablation.
    assert!(text.contains("       without: {"), "{text}");
    assert!(text.contains("not reproduced: 1"), "{text}");
    assert!(text.trim_end().ends_with("claims: 1 passed, 1 failed"), "{text}");
    assert_eq!(out.status.code(), Some(1), "{text}");
    std::fs::remove_file(file).ok();
}

#[test]
fn sweep_runs_the_grid_in_order() {
    let file = scenario("credit-weights.json");
    let args = |jobs: &'static str| {
        schedsim(&[
            "sweep",
            &file,
            "--set",
            "domains.1.weight=256,512",
            "--set",
            "host.pcpus=1,2",
            "--seeds",
            "2",
            "--policy",
            "credit",
            "--duration-ms",
            "2000",
            "--jobs",
            jobs,
        ])
    };
    let one = args("1");
    assert!(one.status.success(), "{}", String::from_utf8_lossy(&one.stderr));
    assert_eq!(one.stdout, args("2").stdout, "output must not depend on thread timing");
    let text = String::from_utf8(one.stdout).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 1 + 2 * 2 * 2, "{text}");
    assert!(lines[0].starts_with("combination,domains.1.weight,host.pcpus,seed,policy,domains.light1.cpu_share"));
    assert!(lines[0].ends_with(",fairness.jain"), "{}", lines[0]);
    assert!(lines[1].starts_with("0,256,1,1,credit,"), "{}", lines[1]);
    assert!(lines[2].starts_with("0,256,1,2,credit,"), "{}", lines[2]);
    assert!(lines[8].starts_with("3,512,2,2,credit,"), "{}", lines[8]);

    let json = stdout_json(&schedsim(&[
        "sweep",
        &file,
        "--set",
        "policies.credit.params.ratelimit_us=0,1000",
        "--format",
        "json",
        "--metric",
        "domains.heavy.cpu_share",
        "--policy",
        "credit",
        "--duration-ms",
        "2000",
    ]));
    assert_eq!(json["metrics"], serde_json::json!(["domains.heavy.cpu_share"]));
    assert_eq!(json["rows"][1]["set"]["policies.credit.params.ratelimit_us"], 1000);
    let share = json["rows"][1]["metrics"]["domains.heavy.cpu_share"].as_f64().unwrap();
    assert!((share - 0.5).abs() < 0.02, "{share}");
}

#[test]
fn sweep_rejects_bad_values_with_the_path() {
    let file = scenario("credit-weights.json");
    for (set, expect) in [
        ("domains.1.weight=512,heavy", "domains.1.weight=\"heavy\""),
        ("host.pcpus=0", "host.pcpus"),
        ("domains.9.weight=1", "index 9 is out of range"),
        ("policies.credit.params.ratelimit_us=-1", "ratelimit_us"),
    ] {
        let out = schedsim(&["sweep", &file, "--set", set, "--duration-ms", "2000"]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{set}: {err}");
        assert!(err.contains(expect), "{set}: {err}");
        assert!(!err.contains("panicked"), "{set}: {err}");
        assert!(out.stdout.is_empty(), "{set}: nothing runs when a combination is invalid");
    }
}

#[test]
fn bench_json_has_the_contract_keys_and_more() {
    let out = stdout_json(&schedsim(&[
        "bench",
        &scenario("credit-weights.json"),
        &scenario("credit-cap.json"),
        "--json",
        "--rounds",
        "1",
    ]));
    let rows = out.as_array().unwrap();
    assert_eq!(rows.len(), 2);
    for r in rows {
        for key in [
            "scenario",
            "sim_seconds_per_wall_second",
            "events_per_second",
            "peak_rss_mb",
            "events",
            "sim_seconds",
            "wall_seconds",
            "relative_speed",
        ] {
            assert!(r.get(key).is_some(), "missing {key} in {r}");
        }
        assert!(r["events"].as_u64().unwrap() > 0);
        assert_eq!(r["rounds"], 1);
        for key in ["batch_vs_floor", "trace_slowdown", "timing_slowdown"] {
            let s = &r["ratios"][key];
            assert!(s["min"].as_f64().unwrap() <= s["median"].as_f64().unwrap(), "{key}: {s}");
            assert!(r["wall_ratios"][key]["median"].as_f64().unwrap() > 0.0, "{key}");
        }
    }
    assert_eq!(rows[0]["relative_speed"], 1.0);
}

/// A crafted input from `tests/hostile/`.
fn hostile(name: &str) -> String {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/hostile").join(name).display().to_string()
}

/// Runs schedsim and expects it to fail fast with a message on stderr containing every one of `says`.
fn refuses(args: &[&str], says: &[&str]) {
    let t = std::time::Instant::now();
    let out = schedsim(args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{args:?} should fail");
    assert!(out.stdout.is_empty(), "{args:?}: nothing on stdout when refused");
    for s in says {
        assert!(err.contains(s), "{args:?}: stderr should say {s:?}: {err}");
    }
    assert!(t.elapsed().as_secs() < 30, "{args:?} took {:?}", t.elapsed());
}

#[test]
fn patch_bombs_are_refused_naming_the_variant_or_claim_and_the_op() {
    // A patch is built when it is asked for: a variant by `run --variant` and by `check` (each in turn), an
    // ablation by `check`.
    let bomb = hostile("variant-copy-bomb.json");
    refuses(&["run", &bomb, "--variant", "bomb"], &["variants[0] ('bomb')", "copy from /domains"]);
    refuses(&["check", &bomb], &["variants[0] ('bomb')", "copy from /domains"]);
    refuses(&["check", &hostile("ablation-copy-bomb.json")], &["claims[0].without ('bomb')", "larger than the limit"]);
    // Many variants and ablations: refused before any is built, with the figure and the option.
    let many = hostile("many-variants-and-ablations.json");
    refuses(&["check", &many], &["patch work", "more than the limit of 67108864", "--max-patch-work"]);
    refuses(
        &["run", &many, "--variant", "v3", "--max-patch-work", "1000"],
        &["variants[3] ('v3')", "--max-patch-work"],
    );
}

#[test]
fn schema_and_cross_field_defects_are_refused_naming_the_field() {
    refuses(&["run", &hostile("pcpus-float.json")], &["host.pcpus: 2.0 must be a whole number"]);
    refuses(&["run", &hostile("duplicate-key.json")], &["duplicate key 'name'"]);
    refuses(&["run", &hostile("duplicate-variant-label.json")], &["variants[1].label"]);
    refuses(&["run", &hostile("claim-missing-domain.json")], &["claims[0].metric", "'nope'"]);
    refuses(&["run", &hostile("barrier-tiny-phases.json")], &["compute_us", "minimum of 1"]);
}

#[test]
fn seeds_outside_the_schemas_range_are_refused() {
    let file = scenario("credit-cap.json");
    refuses(&["run", &file, "--seed", "9007199254740992"], &["--seed", "9007199254740991"]);
    refuses(&["sweep", &file, "--set", "host.pcpus=1", "--seed", "18446744073709551615"], &["--seed"]);
    let ok = schedsim(&["run", &file, "--seed", "9007199254740991", "--duration-ms", "2000"]);
    assert!(ok.status.success(), "{}", String::from_utf8_lossy(&ok.stderr));
}

#[test]
fn a_run_estimated_above_the_limit_is_refused_unless_allowed() {
    refuses(&["run", &hostile("huge-host-hour.json")], &["estimated at", "events", "--max-events"]);
    refuses(&["check", &hostile("huge-host-hour.json")], &["--max-events"]);
    refuses(&["bench", &hostile("huge-host-hour.json")], &["--max-events"]);
    refuses(&["sweep", &hostile("huge-host-hour.json"), "--set", "host.pcpus=8,256"], &["combination", "--max-events"]);
    let file = scenario("credit-cap.json");
    refuses(&["run", &file, "--max-events", "10"], &["more than the limit of 10 events"]);
    // Allowed: the same file runs with a limit above its estimate.
    let out = schedsim(&["run", &file, "--duration-ms", "2000", "--max-events", "100000000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    // Progress goes to a terminal's stderr only: with stderr a pipe, nothing but the report is written.
    assert!(out.stderr.is_empty(), "{}", String::from_utf8_lossy(&out.stderr));
}

#[cfg(unix)]
#[test]
fn files_are_read_with_a_size_limit_and_directories_skip_what_is_not_a_file() {
    refuses(&["run", "/dev/zero"], &["not a regular file"]);
    let dir = std::env::temp_dir().join(format!("schedsim-cli-fifo-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::copy(scenario("credit-cap.json"), dir.join("credit-cap.json")).unwrap();
    let fifo = dir.join("trap.json");
    let made = Command::new("mkfifo").arg(&fifo).status().expect("mkfifo runs");
    assert!(made.success());
    // Before the fix this blocked forever opening the FIFO.
    let out = schedsim(&["check", dir.to_str().unwrap()]);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("skipping") && err.contains("trap.json") && err.contains("not a regular file"), "{err}");
    assert!(String::from_utf8_lossy(&out.stdout).contains("credit-cap"));
    // Named directly, a FIFO is refused at once too, as a scenario file, a script or a shard manifest.
    refuses(&["run", fifo.to_str().unwrap()], &["trap.json: not a regular file"]);
    refuses(&["sweep", fifo.to_str().unwrap(), "--set", "host.pcpus=1"], &["trap.json: not a regular file"]);
    // A byte order mark is skipped.
    let bom = dir.join("bom.json");
    let text = std::fs::read_to_string(scenario("credit-cap.json")).unwrap();
    std::fs::write(&bom, format!("\u{feff}{text}")).unwrap();
    let out = schedsim(&["run", bom.to_str().unwrap(), "--duration-ms", "2000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let out = schedsim(&["sweep", bom.to_str().unwrap(), "--set", "host.pcpus=1", "--duration-ms", "2000"]);
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    std::fs::remove_dir_all(&dir).unwrap();
}

/// A sweep runs what its table says: a field given twice (by name and by index) is refused, a duration that cuts
/// off the file's `changes` is refused as the same duration in the file is, and a grid past the run limit is
/// refused before anything is built, with its size and the option that allows it.
#[test]
fn sweeps_refuse_grids_that_would_not_run_what_they_say() {
    let weights = scenario("credit-weights.json");
    refuses(
        &["sweep", &weights, "--set", "domains.heavy.weight=256,1024", "--set", "domains.1.weight=256"],
        &["--set domains.1.weight", "same field as --set domains.heavy.weight", "domains.1.weight"],
    );
    let fig18 = scenario("p000-fig18-io-threshold.json");
    refuses(&["sweep", &fig18, "--duration-ms", "10000"], &["--duration-ms: 10000", "changes[0].at_ms (20000)"]);
    refuses(&["run", &fig18, "--duration-ms", "10000"], &["changes[0].at_ms (20000)"]);
    let t = std::time::Instant::now();
    let values: Vec<String> = (1..=1000).map(|n| n.to_string()).collect();
    let set = format!("domains.heavy.weight={}", values.join(","));
    refuses(
        &["sweep", &weights, "--set", &set, "--seeds", "100000"],
        &["runs (1000 combinations x 100000 seeds", "--max-runs"],
    );
    assert!(t.elapsed().as_secs() < 5, "refusing took {:?}", t.elapsed());
    // Combinations x the scenario's size, with the figure that would allow it.
    refuses(
        &["sweep", &weights, "--set", "host.pcpus=1,2", "--max-grid-work", "1000"],
        &["the grid's 2 combinations each build and validate the", "--max-grid-work"],
    );
}
