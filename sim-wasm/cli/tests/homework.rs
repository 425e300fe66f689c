//! The homework scenarios (`scenarios/hw-*.json`) grade a student's script by their `goal` claims, so those
//! claims must be reachable and must be able to fail: a reference solution (here, not shipped in the page) meets
//! every goal on several seeds, while the starting script the file ships and Credit in the student's place each
//! miss one.

use schedsim_core::claims;
use schedsim_core::policy::script::TEMPLATES;
use schedsim_core::report::{self, RunOptions};
use schedsim_core::scenario::Scenario;
use serde_json::{json, Value};
use std::path::PathBuf;

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../..")
}

/// The homework file as JSON.
fn homework(id: &str) -> Value {
    let text = std::fs::read_to_string(root().join(format!("scenarios/{id}.json"))).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Index of the student's policy in the file.
fn student(doc: &Value) -> usize {
    doc["policies"].as_array().unwrap().iter().position(|p| p["id"] == "student").expect("a 'student' policy")
}

/// Each goal claim's verdict (and values, for the message) on the file `doc` at `seed`.
fn goals(doc: &Value, seed: u64) -> Vec<(bool, String)> {
    let mut doc = doc.clone();
    doc["seed"] = json!(seed);
    let sc = Scenario::from_json(&doc.to_string()).unwrap_or_else(|e| panic!("{}: {e}", doc["id"]));
    let ids: Vec<String> = sc.policies.iter().map(|p| p.id.clone()).collect();
    let rep = report::run_scenario(&sc, &ids, &RunOptions { deterministic: true, ..Default::default() })
        .unwrap_or_else(|e| panic!("{}: {e}", doc["id"]));
    let judged = claims::evaluate(&sc, &rep.runs);
    sc.claims
        .iter()
        .zip(judged)
        .filter(|(c, _)| c.goal())
        .map(|(c, r)| (r.holds, format!("{} -> {} {:?}", c.text, r.values, r.error)))
        .collect()
}

fn with_reference(id: &str) -> Value {
    let mut doc = homework(id);
    let k = student(&doc);
    let source =
        std::fs::read_to_string(PathBuf::from(env!("CARGO_MANIFEST_DIR")).join(format!("tests/homework/{id}.rhai")))
            .unwrap();
    doc["policies"][k]["params"]["source"] = json!(source);
    doc
}

fn check(id: &str, vars: Value) {
    let mut reference = with_reference(id);
    let k = student(&reference);
    reference["policies"][k]["params"]["vars"] = vars;
    for seed in 1..=3 {
        let g = goals(&reference, seed);
        assert!(!g.is_empty(), "{id}: goal claims");
        for (holds, what) in &g {
            assert!(holds, "{id} seed {seed}: the reference solution misses a goal: {what}");
        }
    }
    // The page opens the homework on the round-robin template as it ships.
    let rr = TEMPLATES.iter().find(|t| t.id == "round_robin").unwrap();
    assert_eq!(homework(id)["policies"][k]["params"]["source"], rr.source, "{id}: the starting script");
    let starter = goals(&homework(id), 1);
    assert!(starter.iter().any(|(h, _)| !h), "{id}: the starting script already meets every goal: {starter:?}");
    let mut credit = homework(id);
    credit["policies"][k] = json!({ "id": "student", "label": "Credit", "scheduler": "credit" });
    let credit = goals(&credit, 1);
    assert!(credit.iter().any(|(h, _)| !h), "{id}: Credit meets every goal: {credit:?}");
}

#[test]
fn mixed_response_goals_are_met_by_a_reference_and_missed_by_credit_and_round_robin() {
    check("hw-mixed-response", json!({ "slice_ms": 30, "boost_us": 1000 }));
}

#[test]
fn barrier_makespan_goals_are_met_by_a_reference_and_missed_by_credit_and_round_robin() {
    check("hw-barrier-makespan", json!({ "slot_ms": 10, "gang": "job" }));
}

/// `schedsim check hw-*.json --script student=FILE` grades the script: each goal `met` or `not met`, and the
/// total judged on the script given, never "on the starting scripts".
#[test]
fn check_with_a_script_grades_it_goal_by_goal() {
    let file = root().join("scenarios/hw-mixed-response.json");
    let run = |script: &str| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_schedsim"))
            .args(["check", file.to_str().unwrap(), "--script", &format!("student={script}")])
            .output()
            .expect("schedsim runs");
        String::from_utf8(out.stdout).unwrap()
    };
    let reference = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/homework/hw-mixed-response.rhai");
    let text = run(reference.to_str().unwrap());
    let met = text.lines().filter(|l| l.starts_with("met ")).count();
    let goals = met + text.lines().filter(|l| l.starts_with("not met ")).count();
    assert!(goals > 0, "{text}");
    assert!(
        text.contains(&format!("homework goals: {met} of {goals} met (judged on your script for student")),
        "{text}"
    );
    assert!(!text.contains("starting scripts"), "{text}");
    let rr = root().join("sim-wasm/core/src/policy/script/templates/round_robin.rhai");
    let text = run(rr.to_str().unwrap());
    assert!(text.lines().any(|l| l.starts_with("not met ")), "{text}");
    assert!(!text.contains(&format!("{goals} of {goals} met")), "{text}");
}
