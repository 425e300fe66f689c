//! The scenario library is consistent: every file validates, its id matches its file name, and `index.json`
//! lists exactly the scenario files. (Claims are run by `schedsim check scenarios/`, a stage of `npm test`.)

use schedsim_core::scenario::Scenario;
use serde_json::Value;
use std::collections::BTreeSet;
use std::path::PathBuf;

fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

#[test]
fn every_scenario_validates_and_is_indexed() {
    let index: Value = serde_json::from_str(&std::fs::read_to_string(dir().join("index.json")).unwrap()).unwrap();
    let listed: BTreeSet<String> =
        index["scenarios"].as_array().unwrap().iter().map(|e| e["file"].as_str().unwrap().to_string()).collect();
    let mut files = BTreeSet::new();
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.ends_with(".json") || name == "schema.json" || name == "index.json" {
            continue;
        }
        let sc =
            Scenario::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap_or_else(|e| panic!("{name}: {e}"));
        assert_eq!(format!("{}.json", sc.id), name, "a scenario's id is its file name");
        let entry = index["scenarios"].as_array().unwrap().iter().find(|e| e["file"] == name.as_str());
        let entry = entry.unwrap_or_else(|| panic!("{name} is not listed in index.json"));
        assert_eq!(entry["id"], sc.id.as_str(), "{name}: index id");
        assert!(!sc.claims.is_empty() || entry["kind"] == "bench", "{name}: a paper or lesson scenario needs claims");
        files.insert(name);
    }
    assert_eq!(files, listed, "index.json must list exactly the scenario files");
    let default = index["default"].as_str().unwrap();
    assert!(files.contains(&format!("{default}.json")), "the default scenario exists");
}

/// A paper scenario's effect claim (one policy beats another, or one metric another) credits a mechanism, so it
/// names its ablation (`without`), which `schedsim check` requires to fail; or it is kept as `not_reproduced`.
/// Tolerance claims (`by_factor` below 1: "no worse than") guard rather than credit, and need none.
#[test]
fn every_effect_claim_of_a_paper_names_its_ablation() {
    let mut missing = Vec::new();
    for entry in std::fs::read_dir(dir()).unwrap() {
        let path = entry.unwrap().path();
        let name = path.file_name().unwrap().to_str().unwrap().to_string();
        if !name.starts_with('p') || !name.ends_with(".json") {
            continue;
        }
        let sc = Scenario::from_json(&std::fs::read_to_string(&path).unwrap()).unwrap();
        for (k, c) in sc.claims.iter().enumerate() {
            let effect = (c.higher.is_some() || c.lower.is_some()) && c.by_factor.is_none_or(|f| f >= 1.0);
            if effect && c.without.is_none() && !c.not_reproduced() {
                missing.push(format!("{name}: claims[{k}] '{}'", c.text));
            }
        }
    }
    assert!(missing.is_empty(), "effect claims without an ablation:\n{}", missing.join("\n"));
}
