//! Property tests of the scenario parser and the engine's robustness (bad input gets a clear error; nothing panics).
//!
//! - Arbitrary text and mutated copies of the real `scenarios/*.json` (a key deleted, a type changed, huge or
//!   negative numbers, deep nesting, unicode, truncation) go to `Scenario::from_json`: it must never panic, and
//!   every problem it reports must start with a field path (or the root, `(scenario)`), e.g. "not valid JSON".
//! - Mutants that still validate, and small random valid scenarios, run through `Simulation::new` + `run` for a
//!   short simulated time: no panic, no error, and the report's shares stay within the host.

use proptest::prelude::*;
use proptest::test_runner::TestCaseError;
use schedsim_core::report::RunOptions;
use schedsim_core::scenario::{Scenario, ScenarioError};
use schedsim_core::sim::{SimError, Simulation};
use serde_json::{json, Map, Value};
use std::path::PathBuf;
use std::sync::OnceLock;

/// The library's scenario files (schema and index excluded), read once.
/// The same cases on every run (`cargo test` is deterministic); set `PROPTEST_RNG_SEED` to explore others.
fn fixed_seed(cases: u32) -> ProptestConfig {
    let given = ProptestConfig::default();
    let rng_seed = match given.rng_seed {
        proptest::test_runner::RngSeed::Random => proptest::test_runner::RngSeed::Fixed(0x5eed_5c4e_d1ab),
        seed => seed,
    };
    ProptestConfig { cases, rng_seed, ..given }
}

fn library() -> &'static [(String, Value)] {
    static LIB: OnceLock<Vec<(String, Value)>> = OnceLock::new();
    LIB.get_or_init(|| {
        let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
        let mut out = Vec::new();
        for entry in std::fs::read_dir(&dir).expect("scenarios/ exists") {
            let path = entry.expect("readable entry").path();
            let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
            if !name.ends_with(".json") || name == "schema.json" || name == "index.json" {
                continue;
            }
            let text = std::fs::read_to_string(&path).expect("readable scenario");
            out.push((name, serde_json::from_str(&text).expect("library scenarios are JSON")));
        }
        out.sort_by(|a, b| a.0.cmp(&b.0));
        assert!(!out.is_empty(), "no scenarios found in {}", dir.display());
        out
    })
}

/// Top-level fields of the scenario file, as its schema lists them: a field path in an error starts with one.
fn top_level() -> Vec<String> {
    let schema: Value = serde_json::from_str(schedsim_core::scenario::SCHEMA_JSON).expect("the schema is JSON");
    schema["properties"].as_object().expect("the schema lists the top-level fields").keys().cloned().collect()
}

/// Whether a problem reads `PATH: message` with PATH the root or under a known top-level field.
fn names_a_path(problem: &str) -> bool {
    let Some((head, msg)) = problem.split_once(": ") else { return false };
    if msg.trim().is_empty() {
        return false;
    }
    head.starts_with("(scenario)")
        || top_level().iter().any(|f| {
            head.strip_prefix(f).is_some_and(|rest| rest.is_empty() || rest.starts_with('.') || rest.starts_with('['))
        })
}

fn check_error(e: &ScenarioError) -> Result<(), TestCaseError> {
    prop_assert!(!e.problems.is_empty(), "an error without problems");
    for p in &e.problems {
        prop_assert!(names_a_path(p), "problem does not name a field path: {p:?}");
    }
    let text = e.to_string();
    prop_assert!(text.starts_with("invalid scenario"), "{text}");
    Ok(())
}

/// Runs every policy of a valid scenario for at most `max_ms` of simulated time and checks the report's sanity.
/// Runs every policy of `sc` for at most `max_ms`. With `scripts_may_refuse`, a script policy that stops the run
/// (its own error, named with the policy and line: a mutated variable can make a student's script return a bad
/// slice) is a clear outcome, not a failure; any other run error still fails.
fn run_briefly(mut sc: Scenario, max_ms: u64, scripts_may_refuse: bool) -> Result<(), TestCaseError> {
    sc.duration_ms = sc.duration_ms.min(max_ms);
    sc.warmup_ms = sc.warmup_ms.min(sc.duration_ms - 1);
    for p in sc.policies.clone() {
        let mut sim = Simulation::new(&sc, &p.id).map_err(|e| TestCaseError::fail(format!("{}: new: {e}", p.id)))?;
        match sim.run() {
            Ok(()) => {}
            Err(e @ SimError::Policy(_)) if scripts_may_refuse => {
                prop_assert!(e.to_string().contains(&format!("'{}'", p.id)), "{}: unnamed policy error: {e}", p.id);
                continue;
            }
            Err(e) => return Err(TestCaseError::fail(format!("{}: run: {e}", p.id))),
        }
        let rep = sim.report(&RunOptions { deterministic: true, ..RunOptions::default() });
        let total: f64 =
            rep["domains"].as_object().into_iter().flatten().filter_map(|(_, d)| d["cpu_share"].as_f64()).sum();
        // Shares are rounded to 6 decimals each, hence the slack.
        prop_assert!(total <= 1.0 + 1e-4, "{}: domains use {total} of the host", p.id);
        if let Some(j) = rep["fairness"]["jain"].as_f64() {
            prop_assert!((0.0..=1.0 + 1e-6).contains(&j), "{}: jain {j}", p.id);
        }
    }
    Ok(())
}

/// One way to break a scenario, applied at a node chosen by `at` among all nodes of the document.
#[derive(Debug, Clone)]
enum Mutation {
    Delete,
    Replace(Value),
    Negate,
    Nest { depth: usize, objects: bool },
    AddKey(String, Value),
    RenameKeys(String),
}

fn odd_values() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::from),
        Just(json!("")),
        "\\PC{0,40}".prop_map(Value::from),
        Just(json!([])),
        Just(json!({})),
        Just(json!([1, "two", null])),
        Just(json!({"type": "cpu"})),
        // Huge, tiny and boundary numbers.
        prop_oneof![
            Just(json!(1e308)),
            Just(json!(-1e308)),
            Just(json!(u64::MAX)),
            Just(json!(i64::MIN)),
            Just(json!(9_007_199_254_740_993u64)),
            Just(json!(4_294_967_296u64)),
            Just(json!(65_536)),
            Just(json!(0)),
            Just(json!(-1)),
            Just(json!(0.5)),
            Just(json!(5e-324)),
        ],
        any::<i64>().prop_map(Value::from),
        any::<f64>().prop_filter("JSON has no NaN or infinity", |x| x.is_finite()).prop_map(Value::from),
    ]
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        3 => Just(Mutation::Delete),
        4 => odd_values().prop_map(Mutation::Replace),
        2 => Just(Mutation::Negate),
        1 => (1usize..300, any::<bool>()).prop_map(|(depth, objects)| Mutation::Nest { depth, objects }),
        2 => ("\\PC{0,12}", odd_values()).prop_map(|(k, v)| Mutation::AddKey(k, v)),
        1 => "\\PC{1,12}".prop_map(Mutation::RenameKeys),
    ]
}

/// JSON pointers of every node, root first, in document order.
fn pointers(v: &Value) -> Vec<String> {
    fn walk(v: &Value, at: String, out: &mut Vec<String>) {
        out.push(at.clone());
        match v {
            Value::Object(o) => {
                for (k, c) in o {
                    walk(c, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out)
                }
            }
            Value::Array(a) => {
                for (i, c) in a.iter().enumerate() {
                    walk(c, format!("{at}/{i}"), out)
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(v, String::new(), &mut out);
    out
}

fn apply(doc: &mut Value, at: usize, m: &Mutation) {
    let ptrs = pointers(doc);
    let ptr = &ptrs[at % ptrs.len()];
    match m {
        Mutation::Delete => {
            let Some((parent, last)) = ptr.rsplit_once('/') else {
                *doc = Value::Null;
                return;
            };
            let key = last.replace("~1", "/").replace("~0", "~");
            match doc.pointer_mut(parent) {
                Some(Value::Object(o)) => {
                    o.shift_remove(&key);
                }
                Some(Value::Array(a)) => {
                    if let Ok(i) = key.parse::<usize>() {
                        if i < a.len() {
                            a.remove(i);
                        }
                    }
                }
                _ => {}
            }
        }
        Mutation::Replace(v) => {
            if let Some(node) = doc.pointer_mut(ptr) {
                *node = v.clone();
            }
        }
        Mutation::Negate => {
            if let Some(node) = doc.pointer_mut(ptr) {
                *node = match node {
                    Value::Number(n) => n.as_f64().map_or(json!(-1), |x| json!(-x - 1.0)),
                    _ => json!(-1),
                };
            }
        }
        Mutation::Nest { depth, objects } => {
            if let Some(node) = doc.pointer_mut(ptr) {
                let mut v = node.take();
                for _ in 0..*depth {
                    v = if *objects { json!({ "x": v }) } else { json!([v]) };
                }
                *node = v;
            }
        }
        Mutation::AddKey(k, v) => {
            if let Some(Value::Object(o)) = doc.pointer_mut(ptr) {
                o.insert(k.clone(), v.clone());
            }
        }
        Mutation::RenameKeys(suffix) => {
            if let Some(Value::Object(o)) = doc.pointer_mut(ptr) {
                let renamed: Map<String, Value> =
                    std::mem::take(o).into_iter().map(|(k, v)| (k + suffix.as_str(), v)).collect();
                *o = renamed;
            }
        }
    }
}

/// Cuts `text` to at most `keep` bytes on a char boundary.
fn truncate(text: &str, keep: usize) -> &str {
    let mut end = keep.min(text.len());
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}

proptest! {
    #![proptest_config(fixed_seed(256))]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
        match Scenario::from_json(&text) {
            Ok(_) => {}
            Err(e) => check_error(&e)?,
        }
    }

    #[test]
    fn json_like_text_never_panics(text in "[\\[\\]{}\",:0-9a-z_ .eE+-]{0,300}") {
        match Scenario::from_json(&text) {
            Ok(_) => {}
            Err(e) => check_error(&e)?,
        }
    }

    #[test]
    fn mutated_library_scenarios_never_panic(
        which in any::<prop::sample::Index>(),
        muts in prop::collection::vec((any::<usize>(), mutation()), 1..4),
        cut in prop::option::weighted(0.2, any::<prop::sample::Index>()),
    ) {
        let (name, original) = &library()[which.index(library().len())];
        let mut doc = original.clone();
        for (at, m) in &muts {
            apply(&mut doc, *at, m);
        }
        let full = serde_json::to_string(&doc).expect("a Value serialises");
        let text = match cut {
            Some(ix) => truncate(&full, ix.index(full.len().max(1))),
            None => &full,
        };
        match Scenario::from_json(text) {
            Err(e) => {
                check_error(&e).map_err(|f| TestCaseError::fail(format!("{name} {muts:?}: {f}")))?;
            }
            // Some mutations leave a valid scenario (a deleted optional key, an unchanged value): run it.
            Ok(sc) => run_briefly(sc, 20, true).map_err(|f| TestCaseError::fail(format!("{name} {muts:?}: {f}")))?,
        }
    }

    #[test]
    fn small_valid_scenarios_run(doc in small_scenario()) {
        let sc = Scenario::from_value(doc.clone())
            .map_err(|e| TestCaseError::fail(format!("generator made an invalid scenario: {e}\n{doc}")))?;
        run_briefly(sc, 300, false)?;
    }
}

fn credit_params() -> impl Strategy<Value = Value> {
    (
        prop::option::of(any::<bool>()),
        prop::option::of(1u32..=100),
        prop::option::of(0u32..=5000),
        prop::option::of(prop_oneof![Just("exact"), Just("tick")]),
        prop::option::of(prop_oneof![Just("3.0.3"), Just("3.2"), Just("4.x")]),
    )
        .prop_map(|(boost, tslice, rl, acc, ver)| {
            let mut p = Map::new();
            if let Some(b) = boost {
                p.insert("boost".into(), json!(b));
            }
            if let Some(t) = tslice {
                p.insert("tslice_ms".into(), json!(t));
            }
            if let Some(r) = rl {
                p.insert("ratelimit_us".into(), json!(r));
            }
            if let Some(a) = acc {
                p.insert("accounting".into(), json!(a));
            }
            if let Some(v) = ver {
                p.insert("version".into(), json!(v));
            }
            Value::Object(p)
        })
}

/// A task for a domain with `vcpus` vCPUs; `servers` says whether server workloads may appear.
fn task(j: usize, vcpus: u32, servers: bool) -> impl Strategy<Value = Value> {
    let server = (0u32..=4, 0f64..50.0, 0f64..200.0, 0f64..2000.0).prop_map(move |(clients, lo, span, cpu)| {
        // Request CPU is 0 (none) or at least the validator's 1 us floor.
        let cpu = if cpu < 1.0 { 0.0 } else { cpu };
        json!({ "type": "server", "port": 1000 + j, "clients": clients, "think_ms": [lo, lo + span], "cpu_us": cpu })
    });
    let workload = if servers {
        prop_oneof![Just(json!({"type": "cpu"})), server].boxed()
    } else {
        Just(json!({"type": "cpu"})).boxed()
    };
    (
        workload,
        prop::option::of(0..vcpus),
        prop::option::of(prop_oneof![Just(json!("rt")), (-20i32..=19).prop_map(Value::from)]),
    )
        .prop_map(move |(w, pin, prio)| {
            let mut t = json!({ "name": format!("t{j}"), "workload": w });
            if let Some(v) = pin {
                t["vcpu"] = json!(v);
            }
            if let Some(p) = prio {
                t["priority"] = p;
            }
            t
        })
}

fn guest(i: usize, servers: bool) -> impl Strategy<Value = Value> {
    (1u32..=3, 1u32..=1024, prop_oneof![Just(0u32), 1u32..=300], prop_oneof![Just("linux"), Just("cfs")], 0usize..=3)
        .prop_flat_map(move |(vcpus, weight, cap, sched, ntasks)| {
            let tasks: Vec<_> = (0..ntasks).map(|j| task(j, vcpus, servers)).collect();
            tasks.prop_map(move |tasks| {
                json!({ "name": format!("g{i}"), "vcpus": vcpus, "weight": weight, "cap_pct": cap,
                        "guest": { "scheduler": sched }, "tasks": tasks })
            })
        })
}

/// Small valid scenarios: 1-4 pCPUs, an optional driver domain (servers only with one), 1-5 guests of 0-3 tasks,
/// 1-3 credit policies with random parameters, 1-300 ms, and sometimes a run-time parameter change.
fn small_scenario() -> impl Strategy<Value = Value> {
    (1u32..=4, any::<bool>(), 1usize..=5, 0u64..(1 << 53), 1u64..=300)
        .prop_flat_map(|(pcpus, driver, nguests, seed, duration)| {
            let guests: Vec<_> = (0..nguests).map(|i| guest(i, driver)).collect();
            (
                Just((pcpus, driver, seed, duration)),
                guests,
                prop::collection::vec(credit_params(), 1..=3),
                0..duration,
                prop::option::of((
                    0..duration,
                    prop_oneof![
                        Just(("boost", json!(false))),
                        (1u32..=50).prop_map(|t| ("tslice_ms", json!(t))),
                        (0u32..=2000).prop_map(|r| ("ratelimit_us", json!(r))),
                    ],
                )),
            )
        })
        .prop_map(|((pcpus, driver, seed, duration), guests, params, warmup, change)| {
            let mut domains = Vec::new();
            if driver {
                domains.push(json!({ "name": "dom0", "role": "driver", "weight": 256 }));
            }
            domains.extend(guests);
            let policies: Vec<Value> = params
                .into_iter()
                .enumerate()
                .map(|(k, p)| json!({ "id": format!("p{k}"), "scheduler": "credit", "params": p }))
                .collect();
            let mut doc = json!({ "schema": 1, "id": "prop", "title": "generated", "seed": seed,
                                  "duration_ms": duration, "warmup_ms": warmup,
                                  "host": { "pcpus": pcpus }, "domains": domains, "policies": policies });
            if let Some((at, (param, value))) = change {
                doc["changes"] = json!([{ "at_ms": at, "policy": "p0", "param": param, "value": value }]);
            }
            doc
        })
}

#[test]
fn path_check_accepts_real_messages_and_rejects_others() {
    assert!(names_a_path("domains[1].weight: \"abc\" is not of type \"integer\""));
    assert!(names_a_path("(scenario): not valid JSON: EOF while parsing"));
    assert!(names_a_path("host.pcpus: 0 is less than the minimum of 1"));
    assert!(!names_a_path("something went wrong"));
    assert!(!names_a_path("hosting: x"));
}

#[test]
fn every_library_scenario_runs_briefly() {
    for (name, doc) in library() {
        let sc = Scenario::from_value(doc.clone()).unwrap_or_else(|e| panic!("{name}: {e}"));
        run_briefly(sc, 50, false).unwrap_or_else(|e| panic!("{name}: {e}"));
    }
}
