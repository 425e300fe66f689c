//! Scenario tests: the schema and its validator, field paths in errors, limits, variants and ablations.

use super::*;

const MINIMAL: &str = r#"{"schema":1,"id":"t","title":"t","seed":1,"duration_ms":1000,
    "host":{"pcpus":1},"domains":[{"name":"a","tasks":[{"name":"burn","workload":{"type":"cpu"}}]}],
    "policies":[{"id":"credit","scheduler":"credit"}]}"#;

/// A not-reproduced reason that names a work item, a branch or an uninvestigated cause is a defect.
#[test]
fn reasons_state_the_model_not_work_items() {
    let defect = |reason: &str| {
        let c: Claim = serde_json::from_value(serde_json::json!({"text":"t","metric":"m","policy":"p",
            "at_most":1,"status":"not_reproduced","reason":reason}))
        .unwrap();
        c.reason_defect()
    };
    assert!(defect("out-of-phase pCPUs are issue 21").is_some());
    assert!(defect("it held on main before").is_some());
    assert!(defect("drifting timers, not investigated").is_some());
    assert!(defect("").is_some());
    assert_eq!(defect("the guest issues reads one at a time, so the domain's disk is idle 40% of the time"), None);
}

fn with(patch: impl FnOnce(&mut Value)) -> Result<Scenario, ScenarioError> {
    let mut v: Value = serde_json::from_str(MINIMAL).unwrap();
    patch(&mut v);
    Scenario::from_value(v)
}

#[test]
fn the_schema_is_a_valid_2020_12_schema() {
    let schema: Value = serde_json::from_str(SCHEMA_JSON).unwrap();
    assert_eq!(schema["$id"], SCHEMA_ID);
    jsonschema::draft202012::meta::validate(&schema).unwrap();
}

#[test]
fn the_validator_reports_what_one_built_from_the_schema_itself_does() {
    let schema: Value = serde_json::from_str(SCHEMA_JSON).unwrap();
    let direct = jsonschema::validator_for(&schema).unwrap();
    let errors = |v: &jsonschema::Validator, doc: &Value| -> Vec<String> {
        let mut out: Vec<String> = v
            .iter_errors(doc)
            .map(|e| format!("{} | {} | {}", e.instance_path().as_str(), e, e.kind().keyword()))
            .collect();
        out.sort();
        out
    };
    let mut docs: Vec<Value> = vec![serde_json::from_str(MINIMAL).unwrap(), Value::Null, serde_json::json!([1])];
    let breaks: [fn(&mut Value); 8] = [
        |v| v["domains"][0]["weight"] = "heavy".into(),
        |v| v["domains"][0]["tasks"][0]["workload"]["colour"] = 1.into(),
        |v| v["host"]["pcpus"] = 100000.into(),
        |v| v["id"] = "Not An Id!".into(),
        |v| v["policies"][0]["scheduler"] = "fifo".into(),
        |v| v["policies"][0]["params"] = serde_json::json!({"tslice_ms": -1, "boost": "yes"}),
        |v| v["extra"] = true.into(),
        |v| v["claims"] = serde_json::json!([{"kind": "nope"}, {}]),
    ];
    for b in breaks {
        let mut v = docs[0].clone();
        b(&mut v);
        docs.push(v);
    }
    for f in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios")).unwrap() {
        let f = f.unwrap().path();
        if f.extension().is_some_and(|e| e == "json") {
            docs.push(serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap());
        }
    }
    for doc in &docs {
        assert_eq!(errors(validator(), doc), errors(&direct, doc), "{doc}");
    }
    assert!(docs.iter().filter(|d| !errors(&direct, d).is_empty()).count() >= 10);
}

#[test]
fn minimal_scenario_parses_with_defaults() {
    let s = Scenario::from_json(MINIMAL).unwrap();
    assert_eq!(s.domains[0].weight, 256);
    assert_eq!(s.domains[0].vcpus, 1);
    assert_eq!(s.host.net.latency_us, 100.0);
}

#[test]
fn errors_name_the_field_path() {
    let e = with(|v| v["domains"][0]["weight"] = "heavy".into()).unwrap_err();
    assert!(e.to_string().contains("domains[0].weight"), "{e}");
    let e = with(|v| v["domains"][0]["tasks"][0]["workload"]["colour"] = 1.into()).unwrap_err();
    assert!(e.to_string().contains("domains[0].tasks[0].workload"), "{e}");
    let e = with(|v| v["host"]["pcpus"] = 100000.into()).unwrap_err();
    assert!(e.to_string().contains("host.pcpus"), "{e}");
    let e = with(|v| v["duration_ms"] = 7_200_000.into()).unwrap_err();
    assert!(e.to_string().contains("duration_ms"), "{e}");
}

/// A value over a size limit is refused by the rule, its field and its size, not by a quote of it cut short.
#[test]
fn size_limits_say_the_rule_first() {
    let e = with(|v| v["title"] = "x".repeat(5000).into()).unwrap_err().to_string();
    assert!(e.contains("title: at most 200 characters, and this string has 5000"), "{e}");
    assert!(!e.contains("xxxxxxxxxx"), "{e}");
    let e = with(|v| {
        let p = v["policies"][0].clone();
        v["policies"] = Value::Array(vec![p; 9]);
    })
    .unwrap_err()
    .to_string();
    assert!(e.contains("policies: at most 8 items, and this array has 9"), "{e}");
}

#[test]
fn a_copy_bomb_in_a_variant_or_an_ablation_is_refused_naming_it() {
    let bomb: Vec<Value> =
        (0..40).map(|_| serde_json::json!({"op":"copy","from":"/domains","path":"/domains/-"})).collect();
    let sc = with(|v| v["variants"] = serde_json::json!([{"label":"bomb","patch":bomb}])).unwrap();
    let e = sc.pick_variant("bomb").unwrap_err();
    assert!(e.to_string().contains("variants[0] ('bomb'): patch op"), "{e}");
    assert!(e.to_string().contains("larger than the limit"), "{e}");
    let sc = with(|v| {
        v["claims"] = serde_json::json!([{"text":"x","metric":"domains.a.cpu_share","policy":"credit",
            "at_least":0,"without":{"label":"boom","patch":bomb}}])
    })
    .unwrap();
    let e = sc.ablated(0).unwrap().unwrap_err();
    assert!(e.to_string().contains("claims[0].without ('boom'): patch op"), "{e}");
    // Refused at the first copy that would pass the limit (the size is measured before each copy), not after
    // applying all forty: the op it names is one of the first thirty (each copy doubles the domains).
    let op: usize = e.to_string().split("patch op ").nth(1).and_then(|r| r.split(' ').next()?.parse().ok()).unwrap();
    assert!(op < 30, "{e}");
}

#[test]
fn duplicate_keys_and_variant_labels_are_refused() {
    let text = MINIMAL.replace(r#""name":"a""#, r#""name":"a","name":"b""#);
    let e = Scenario::from_json(&text).unwrap_err();
    assert!(e.to_string().contains("duplicate key 'name' at line"), "{e}");
    let e =
        with(|v| v["variants"] = serde_json::json!([{"label":"x","patch":[]},{"label":"x","patch":[]}])).unwrap_err();
    assert!(e.to_string().contains("variants[1].label: 'x' is used by another variant"), "{e}");
}

#[test]
fn a_whole_number_written_as_a_float_names_its_field() {
    let e = Scenario::from_json(&MINIMAL.replace(r#""pcpus":1"#, r#""pcpus":1.0"#)).unwrap_err();
    assert!(e.to_string().contains("host.pcpus: 1.0 must be a whole number"), "{e}");
    // Float fields keep taking floats.
    assert!(Scenario::from_json(&MINIMAL.replace(r#""pcpus":1}"#, r#""pcpus":1,"net":{"mbps":100.0}}"#)).is_ok());
}

#[test]
fn claims_naming_a_missing_domain_or_task_are_refused_at_load() {
    let claim = |metric: &str| {
        with(|v| v["claims"] = serde_json::json!([{"text":"x","metric":metric,"policy":"credit","at_least":0}]))
    };
    let e = claim("domains.nope.cpu_share").unwrap_err();
    assert!(e.to_string().contains("claims[0].metric") && e.to_string().contains("'nope'"), "{e}");
    let e = claim("tasks.a/nope.belief").unwrap_err();
    assert!(e.to_string().contains("names no task"), "{e}");
    assert!(claim("domains.a.cpu_share").is_ok());
    assert!(claim("domains.*.cpu_share").is_ok());
    assert!(claim("tasks.a/burn.cpu_ms").is_ok());
    assert!(claim("fairness.jain").is_ok());
}

#[test]
fn work_below_a_microsecond_is_refused_naming_the_field() {
    let e = with(|v| {
        v["domains"][0]["vcpus"] = 2.into();
        v["domains"][0]["tasks"][0]["workload"] =
            serde_json::json!({"type":"barrier","compute_us":0.01,"phases":10,"sync":"spin"});
    })
    .unwrap_err();
    assert!(e.to_string().contains("domains[0].tasks[0].workload.compute_us"), "{e}");
    let e = with(|v| {
        v["domains"][0]["role"] = "driver".into();
        v["domains"][0]["tasks"][0]["workload"] = serde_json::json!({"type":"disk_reader","cpu_us":0.5});
    })
    .unwrap_err();
    assert!(e.to_string().contains("workload.cpu_us: 0.5 is below the floor of 1 us"), "{e}");
}

#[test]
fn variants_are_patched_and_validated_when_built() {
    let sc = with(|v| {
        let b = serde_json::json!({"name":"b","tasks":[{"name":"burn","workload":{"type":"cpu"}}]});
        v["domains"].as_array_mut().unwrap().push(b);
        v["variants"] = serde_json::json!([{"label":"one domain","patch":[{"op":"remove","path":"/domains/1"}]}]);
    })
    .unwrap();
    let v = sc.pick_variant("one domain").unwrap();
    assert_eq!((sc.domains.len(), v.domains.len()), (2, 1));
    assert!(v.variants.is_empty());
    // A patch that breaks the scenario loads (it is not built then) and is reported when the variant is
    // built, naming the variant and the field.
    let sc = with(|v| {
        v["variants"] = serde_json::json!([{"label":"bad","patch":[
            {"op":"add","path":"/domains/0/weight","value":"heavy"}]}]);
    })
    .unwrap();
    let e = sc.pick_variant("bad").unwrap_err();
    assert!(e.contains("variants[0] ('bad')") && e.contains("domains[0].weight"), "{e}");
    let sc = with(|v| {
        v["variants"] = serde_json::json!([{"label":"gone","patch":[{"op":"remove","path":"/domains/7"}]}]);
    })
    .unwrap();
    let e = sc.variant(0, &mut crate::patch::PatchBudget::default()).unwrap_err();
    assert!(e.to_string().contains("variants[0] ('gone')"), "{e}");
    let e = sc.pick_variant("other").unwrap_err();
    assert!(e.contains("no variant 'other' ('gone')"), "{e}");
}

#[test]
fn ablations_patch_what_was_run_and_are_checked_when_built() {
    let claim = |patch: Value| {
        serde_json::json!([{"text":"busy","metric":"domains.a.cpu_share","policy":"credit","at_least":0.5,
            "without":{"label":"capped","patch":patch}}])
    };
    let sc = with(|v| {
        v["claims"] = claim(serde_json::json!([{"op":"add","path":"/domains/0/cap_pct","value":20}]));
        v["variants"] = serde_json::json!([{"label":"longer","patch":[
            {"op":"replace","path":"/duration_ms","value":2000}]}]);
    })
    .unwrap();
    let seeded = crate::report::with_overrides(
        &sc.pick_variant("longer").unwrap(),
        &crate::report::RunOptions { seed: Some(9), ..Default::default() },
    )
    .unwrap();
    let ab = seeded.ablated(0).unwrap().unwrap();
    // The variant's change, the run's seed, and the ablation itself; no ablation of the ablation.
    assert_eq!((ab.duration_ms, ab.seed, ab.domains[0].cap_pct), (2000, 9, 20));
    assert!(ab.claims[0].without.is_none() && ab.variants.is_empty());
    assert!(sc.ablated(1).is_none());
    // A patch that does not fit names the claim and its ablation when it is built.
    let sc = with(|v| v["claims"] = claim(serde_json::json!([{"op":"replace","path":"/domains/4/cap_pct","value":1}])))
        .unwrap();
    let e = sc.ablated(0).unwrap().unwrap_err();
    assert!(e.to_string().contains("claims[0].without ('capped')"), "{e}");
    let e = with(|v| {
        v["claims"] = serde_json::json!([{"text":"x","metric":"fairness.jain","policy":"credit","at_least":0.9,
            "status":"not_reproduced"}]);
    })
    .unwrap_err();
    assert!(e.to_string().contains("claims[0].status"), "{e}");
}

#[test]
fn patch_work_is_charged_before_a_patch_is_applied_and_estimated_for_a_check() {
    let op = serde_json::json!({"op":"add","path":"/domains/0/weight","value":300});
    let sc = with(|v| {
        v["claims"] = serde_json::json!([
            {"text":"a","metric":"domains.a.cpu_share","policy":"credit","at_least":0.5,
             "without":{"label":"w","patch":[op.clone(), op.clone()]}},
            {"text":"b","metric":"domains.a.cpu_share","policy":"credit","at_least":0.4,
             "without":{"label":"w","patch":[op.clone(), op.clone()]}}]);
        v["variants"] = serde_json::json!([{"label":"v","patch":[op.clone()]}]);
    })
    .unwrap();
    let s = sc.doc_bytes as u64;
    assert_eq!(s, serde_json::to_string(&*sc.doc).unwrap().len() as u64);
    // One distinct ablation of 2 ops on the scenario and on the variant; the variant's 1 op.
    let grown = crate::patch::grown_bound(sc.variant_patch(0), sc.doc_bytes) as u64;
    assert_eq!(sc.distinct_ablations(), vec![0]);
    assert_eq!(sc.check_work(), 3 * s + 2 * s + 3 * grown);
    // A budget that holds one variant build but not two.
    let mut budget = crate::patch::PatchBudget::new(3 * s);
    sc.variant(0, &mut budget).unwrap();
    assert_eq!(budget.spent, 2 * s);
    let e = sc.variant(0, &mut budget).unwrap_err().to_string();
    assert!(e.contains("variants[0] ('v'): applying it takes") && e.contains("--max-patch-work"), "{e}");
    let e = sc.ablated_within(0, &mut budget).unwrap().unwrap_err().to_string();
    assert!(e.contains("claims[0].without ('w')") && e.contains("(2 operations + 1)"), "{e}");
    let e = budget.check_total(sc.check_work(), "its variants and ablations").unwrap_err();
    assert!(e.contains("more than the limit of") && e.contains("--max-patch-work raises it"), "{e}");
}

#[test]
fn broken_json_is_a_clear_error() {
    let e = Scenario::from_json("{\"schema\": 1,").unwrap_err();
    assert!(e.to_string().contains("not valid JSON"), "{e}");
    let e = Scenario::from_json(&" ".repeat(MAX_SCENARIO_BYTES + 1)).unwrap_err();
    assert!(e.to_string().contains("limit"), "{e}");
}

#[test]
fn cross_field_checks() {
    let e = with(|v| v["domains"][0]["tasks"][0]["vcpu"] = 3.into()).unwrap_err();
    assert!(e.to_string().contains("domains[0].tasks[0].vcpu"), "{e}");
    let e = with(|v| {
        v["domains"][0]["tasks"][0]["workload"] = serde_json::json!({"type":"server","port":7});
    })
    .unwrap_err();
    assert!(e.to_string().contains("driver domain"), "{e}");
    // A driver domain's own tasks may do disk I/O, but not network I/O; a server's disk must do some I/O.
    let driver_task = |w: serde_json::Value| {
        with(|v| {
            v["domains"][0]["role"] = "driver".into();
            v["domains"][0]["tasks"][0]["workload"] = w;
        })
    };
    assert!(driver_task(serde_json::json!({"type":"disk_reader","op":"write"})).is_ok());
    let e = driver_task(serde_json::json!({"type":"io_loop","io":"net"})).unwrap_err();
    assert!(e.to_string().contains("domains[0].tasks[0].workload: a driver domain's own tasks"), "{e}");
    let e = driver_task(serde_json::json!({"type":"disk_reader","op":"erase"})).unwrap_err();
    assert!(e.to_string().contains("op"), "{e}");
    let e = with(|v| {
        v["domains"].as_array_mut().unwrap().insert(0, serde_json::json!({"name":"dom0","role":"driver"}));
        v["domains"][1]["tasks"][0]["workload"] = serde_json::json!({"type":"server","port":7,"disk":{}});
    })
    .unwrap_err();
    assert!(e.to_string().contains("domains[1].tasks[0].workload.disk"), "{e}");
    let e = with(|v| {
        v["claims"] = serde_json::json!([{"text":"x","metric":"fairness.jain","policy":"nope","at_least":0.9}]);
    })
    .unwrap_err();
    assert!(e.to_string().contains("claims[0].policy"), "{e}");
    let e = with(|v| v["warmup_ms"] = 1000.into()).unwrap_err();
    assert!(e.to_string().contains("warmup_ms"), "{e}");
    let e = with(|v| {
        v["domains"][0]["guest"] = serde_json::json!({"balloon": true});
        v["domains"][0]["tasks"][0]["name"] = "balloon".into();
    })
    .unwrap_err();
    assert!(e.to_string().contains("domains[0].tasks[0].name"), "{e}");
}

#[test]
fn pointer_paths() {
    assert_eq!(pointer_to_path(""), "(scenario)");
    assert_eq!(pointer_to_path("/domains/1/tasks/0/name"), "domains[1].tasks[0].name");
}
