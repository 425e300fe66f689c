//! A seeded mutation test of the engine: thousands of very short runs of the library's
//! scenarios with their numbers changed (scaled up or down, zeroed, negated) and parts removed. Mutants the
//! loader refuses must be refused with a message; every mutant it accepts must run without an error, and every
//! report must be sane: no NaN (serde_json writes one as `null`), no negative CPU time, counts or shares, no
//! domain above its whole host and no host above full. The seed is fixed, so a failure names a mutant that can be
//! replayed; the run stays well under a minute in a debug build.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedsim_core::report::RunOptions;
use schedsim_core::scenario::Scenario;
use schedsim_core::sim::{SimError, Simulation};
use serde_json::Value;
use std::path::PathBuf;

/// Runs (one policy each) to make; each is 2..=9 ms of simulated time.
const RUNS: usize = 3000;

fn library() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut out = Vec::new();
    for entry in std::fs::read_dir(&dir).expect("scenarios/ exists") {
        let path = entry.expect("readable").path();
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or_default().to_string();
        if !name.ends_with(".json") || name == "schema.json" || name == "index.json" {
            continue;
        }
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        // Claims and variants do not change a run, and loading builds every variant and ablation: without them
        // each mutant loads in a fraction of the time.
        if let Some(o) = v.as_object_mut() {
            o.remove("claims");
            o.remove("variants");
        }
        // The big benchmark host makes each run slow without adding kinds of behaviour.
        if v["domains"].as_array().is_some_and(|d| d.len() <= 16) {
            out.push((name, v));
        }
    }
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

/// JSON pointers of every number, and of every array element, in `v` (claims and variants left out: they do
/// not change a run).
fn targets(v: &Value, at: String, nums: &mut Vec<String>, elems: &mut Vec<String>) {
    match v {
        Value::Number(_) => nums.push(at),
        Value::Array(a) => {
            for (i, x) in a.iter().enumerate() {
                elems.push(format!("{at}/{i}"));
                targets(x, format!("{at}/{i}"), nums, elems);
            }
        }
        Value::Object(o) => {
            for (k, x) in o {
                if at.is_empty() && matches!(k.as_str(), "claims" | "variants" | "changes" | "seed") {
                    continue;
                }
                targets(x, format!("{at}/{k}"), nums, elems);
            }
        }
        _ => {}
    }
}

fn mutate(doc: &mut Value, rng: &mut ChaCha8Rng) -> String {
    let (mut nums, mut elems) = (Vec::new(), Vec::new());
    targets(doc, String::new(), &mut nums, &mut elems);
    let pick = |rng: &mut ChaCha8Rng, n: usize| (rng.next_u32() as usize) % n.max(1);
    if rng.next_u32().is_multiple_of(8) && !elems.is_empty() {
        let at = elems[pick(rng, elems.len())].clone();
        let (parent, index) = at.rsplit_once('/').unwrap();
        if let Some(a) = doc.pointer_mut(parent).and_then(Value::as_array_mut) {
            let i: usize = index.parse().unwrap();
            if i < a.len() {
                a.remove(i);
            }
        }
        return format!("remove {at}");
    }
    let at = nums[pick(rng, nums.len())].clone();
    let factor = [0.0, 0.1, 0.5, 2.0, 3.0, 10.0, 100.0, -1.0][pick(rng, 8)];
    let slot = doc.pointer_mut(&at).unwrap();
    let x = slot.as_f64().unwrap();
    let y = x * factor;
    // Integer fields stay integers (a float there is refused by design, which would test little).
    *slot = if slot.is_f64() { Value::from(y) } else { Value::from(y.round() as i64) };
    format!("{at}: {x} -> {y}")
}

/// Every problem with one run's report.
fn insane(run: &Value) -> Vec<String> {
    let mut bad = Vec::new();
    fn nulls(v: &Value, at: String, bad: &mut Vec<String>) {
        match v {
            Value::Null => bad.push(format!("{at} is null (NaN?)")),
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| nulls(x, format!("{at}/{i}"), bad)),
            Value::Object(o) => o.iter().for_each(|(k, x)| nulls(x, format!("{at}/{k}"), bad)),
            _ => {}
        }
    }
    nulls(run, String::new(), &mut bad);
    let mut total = 0.0;
    for (name, d) in run["domains"].as_object().into_iter().flatten() {
        for key in ["cpu_ms", "cpu_share", "fair_share", "context_switches"] {
            if let Some(x) = d[key].as_f64() {
                if x < 0.0 || !x.is_finite() {
                    bad.push(format!("domains.{name}.{key} = {x}"));
                }
            }
        }
        let share = d["cpu_share"].as_f64().unwrap_or(0.0);
        total += share;
        if share > 1.0 + 1e-6 {
            bad.push(format!("domains.{name}.cpu_share = {share}, more than the host"));
        }
    }
    // Shares are rounded to 6 decimals each, hence the slack.
    if total > 1.0 + 1e-4 {
        bad.push(format!("the domains' shares add up to {total}"));
    }
    for (name, t) in run["tasks"].as_object().into_iter().flatten() {
        if t["cpu_ms"].as_f64().is_some_and(|x| x < 0.0) {
            bad.push(format!("tasks.{name}.cpu_ms is negative"));
        }
    }
    if let Some(j) = run["fairness"]["jain"].as_f64() {
        if !(0.0..=1.0 + 1e-6).contains(&j) {
            bad.push(format!("fairness.jain = {j}"));
        }
    }
    bad
}

#[test]
fn thousands_of_short_runs_of_mutated_scenarios_stay_sane() {
    let lib = library();
    let mut rng = ChaCha8Rng::seed_from_u64(18);
    let (mut runs, mut refused, mut tries) = (0, 0, 0);
    let started = std::time::Instant::now();
    while runs < RUNS {
        tries += 1;
        assert!(tries < RUNS * 20, "too few mutants validate ({runs} runs from {tries} tries)");
        let (name, original) = &lib[(rng.next_u32() as usize) % lib.len()];
        let mut doc = original.clone();
        let mut what = Vec::new();
        for _ in 0..1 + rng.next_u32() % 3 {
            what.push(mutate(&mut doc, &mut rng));
        }
        let ms = 2 + u64::from(rng.next_u32() % 8);
        doc["duration_ms"] = ms.into();
        doc["warmup_ms"] = 0.into();
        let sc = match Scenario::from_value(doc) {
            Ok(sc) => sc,
            Err(e) => {
                assert!(!e.problems.is_empty() && e.problems.iter().all(|p| !p.is_empty()), "{name} {what:?}");
                refused += 1;
                continue;
            }
        };
        let policy = sc.policies[(rng.next_u32() as usize) % sc.policies.len()].id.clone();
        let mut sim = match Simulation::new(&sc, &policy) {
            Ok(sim) => sim,
            // A policy may refuse its parameters for the mutated host (the message names the field).
            Err(e) => {
                assert!(!e.to_string().is_empty());
                refused += 1;
                continue;
            }
        };
        match sim.run() {
            Ok(()) => {}
            // A script policy stops its own run with one message when a mutated var gives it something it cannot
            // do (a negative slice): a clear error naming the policy, not a crash.
            Err(SimError::Policy(msg)) if msg.starts_with(&format!("script policy '{policy}'")) => {
                refused += 1;
                continue;
            }
            Err(e) => panic!("{name} {what:?} {policy}: {e}"),
        }
        let report = sim.report(&RunOptions { deterministic: true, ..RunOptions::default() });
        let bad = insane(&report);
        assert!(bad.is_empty(), "{name} {what:?} {policy}: {bad:?}");
        runs += 1;
    }
    eprintln!("{runs} runs of mutants, {refused} mutants refused, {:.1} s", started.elapsed().as_secs_f64());
}
