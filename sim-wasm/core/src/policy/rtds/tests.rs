//! RTDS against what `rt.c` and Xen's RTDS feature document (`docs/features/sched_rtds.pandoc`) say it does:
//! each vCPU gets its budget every period when the utilisation fits, extratime shares what is left, a vCPU
//! without extratime stops at its budget, a blocked vCPU keeps its budget, and the run queue is global.

use super::*;
use crate::metrics::Summary;
use crate::scenario::Scenario;
use crate::sim::test_support::*;
use serde_json::json;

/// One pCPU: `rt` and four CPU-bound neighbours, with the given RTDS params.
fn rt_host(params: Value) -> Scenario {
    scenario(json!({
        "schema": 1, "id": "rt", "title": "rt", "seed": 1, "duration_ms": 3000, "warmup_ms": 500,
        "host": { "pcpus": 1 },
        "domains": [
            { "name": "rt", "tasks": [cpu_task("x")] },
            { "name": "h1", "tasks": [cpu_task("x")] }, { "name": "h2", "tasks": [cpu_task("x")] },
            { "name": "h3", "tasks": [cpu_task("x")] }, { "name": "h4", "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "p", "scheduler": "rtds", "params": params }]
    }))
}

fn neighbours_at(budget_us: u64, rt: Value) -> Value {
    let h = json!({ "period_us": 10_000, "budget_us": budget_us });
    json!({ "domains": { "rt": rt, "h1": h, "h2": h, "h3": h, "h4": h } })
}

#[test]
fn params_parse_and_reject() {
    let p = RtdsParams::from_value(&json!({"domains": {"a": {"budget_us": 2000}}})).unwrap();
    assert_eq!(p.domains["a"], RtdsDomain { period_us: 10_000, budget_us: 2000, extratime: true });
    let e = RtdsParams::from_value(&json!({"domains": {"a": {"budget_us": 20_000}}})).unwrap_err();
    assert!(e.contains("longer than the period"), "{e}");
    let e = RtdsParams::from_value(&json!({"domains": {"a": {"period_us": 5}}})).unwrap_err();
    assert!(e.contains("period_us"), "{e}");
    assert!(RtdsParams::from_value(&json!({"slice_ms": 3})).is_err());
    assert!(RtdsParams::check_change("domains.a.extratime", &json!(false)).is_ok());
    let e = Scenario::from_value(json!({"schema":1,"id":"t","title":"t","seed":1,"duration_ms":100,"host":{"pcpus":1},
        "domains":[{"name":"a"}],"policies":[{"id":"p","scheduler":"rtds","params":{"domains":{"b":{}}}}]}))
    .unwrap_err()
    .to_string();
    assert!(e.contains("policies[0].params.domains.b"), "{e}");
}

/// 4 ms of every 10 ms against four CPU-bound neighbours at 1 ms each (0.8 reserved in all): the reservation
/// holds, and the neighbours get theirs. At the neighbours' 1 ms the same domain gets a fifth of the pCPU.
#[test]
fn the_budget_is_given_every_period_when_it_fits() {
    let sim = run(&rt_host(neighbours_at(1000, json!({ "budget_us": 4000 }))), "p");
    assert_invariants(&sim);
    let s = shares(&sim);
    assert!(s[0] >= 0.4, "rt {s:?}");
    assert!(s[1..].iter().all(|&x| x >= 0.1), "neighbours {s:?}");
    let sim = run(&rt_host(neighbours_at(1000, json!({ "budget_us": 1000 }))), "p");
    let s = shares(&sim);
    assert!((s[0] - 0.2).abs() < 0.02, "every domain at 1 ms: {s:?}");
}

/// Without extratime a CPU-bound vCPU stops at its budget and the pCPU idles for the rest of the period.
#[test]
fn without_extratime_a_vcpu_stops_at_its_budget() {
    let sc = scenario(json!({
        "schema": 1, "id": "rt", "title": "rt", "seed": 1, "duration_ms": 2000, "warmup_ms": 0,
        "host": { "pcpus": 1 },
        "domains": [{ "name": "a", "tasks": [cpu_task("x")] }],
        "policies": [{ "id": "p", "scheduler": "rtds", "params": { "domains": { "a": { "extratime": false } } } },
                     { "id": "x", "scheduler": "rtds" }]
    }));
    let s = shares(&run(&sc, "p"));
    assert!((s[0] - 0.4).abs() < 0.005, "{s:?}");
    let s = shares(&run(&sc, "x"));
    assert!(s[0] > 0.99, "with extratime it runs on: {s:?}");
}

/// Two CPU-bound vCPUs at 2 ms of 10 with extratime: the six spare milliseconds go by priority level, one budget
/// at a time each, so they end up even.
#[test]
fn extratime_shares_the_spare_time() {
    let sc = scenario(json!({
        "schema": 1, "id": "rt", "title": "rt", "seed": 1, "duration_ms": 3000, "warmup_ms": 500,
        "host": { "pcpus": 1 },
        "domains": [{ "name": "a", "tasks": [cpu_task("x")] }, { "name": "b", "tasks": [cpu_task("x")] }],
        "policies": [{ "id": "p", "scheduler": "rtds", "params": { "domains": {
            "a": { "budget_us": 2000 }, "b": { "budget_us": 2000 } } } }]
    }));
    let s = shares(&run(&sc, "p"));
    assert!((s[0] - 0.5).abs() < 0.05 && (s[0] + s[1]) > 0.99, "{s:?}");
}

/// A deferrable server keeps its budget while blocked: a vCPU without extratime whose short bursts come at any
/// time in the period runs each within a couple of milliseconds (at most behind the neighbour's 1 ms budget when
/// their deadlines tie), never waiting for the next period as it would had its budget gone while it slept.
#[test]
fn a_blocked_vcpu_keeps_its_budget() {
    let sc = scenario(json!({
        "schema": 1, "id": "rt", "title": "rt", "seed": 3, "duration_ms": 4000, "warmup_ms": 500,
        "host": { "pcpus": 1 },
        "domains": [
            { "name": "ui", "tasks": [{ "name": "k", "workload": { "type": "interactive", "cpu_us": 500, "think_ms": [5, 15] } }] },
            { "name": "hog", "tasks": [cpu_task("x")] },
            { "name": "dom0", "role": "driver" }
        ],
        "policies": [{ "id": "p", "scheduler": "rtds", "params": { "domains": {
            "ui": { "budget_us": 4000, "extratime": false }, "hog": { "budget_us": 1000 } } } }]
    }));
    let sim = run(&sc, "p");
    assert_invariants(&sim);
    let r = Summary::of(&sim.measure.dom_metrics[0].responses_ns).unwrap();
    assert!(r.count > 100 && r.p50 < 1.0 && r.max < 2.0, "response {r:?}");
}

/// One global run queue: three CPU-bound domains at the default 4 ms of 10 on two pCPUs (1.2 pCPUs reserved)
/// each get their budget, and a vCPU runs on whichever pCPU is free.
#[test]
fn the_run_queue_is_global() {
    let sc = scenario(json!({
        "schema": 1, "id": "rt", "title": "rt", "seed": 1, "duration_ms": 3000, "warmup_ms": 500,
        "host": { "pcpus": 2 },
        "domains": [{ "name": "a", "tasks": [cpu_task("x")] }, { "name": "b", "tasks": [cpu_task("x")] },
                    { "name": "c", "tasks": [cpu_task("x")] }],
        "policies": [{ "id": "p", "scheduler": "rtds" }]
    }));
    let sim = run(&sc, "p");
    assert_invariants(&sim);
    let s = shares(&sim);
    // Shares of the host: 0.2 is 0.4 of a pCPU.
    assert!(s.iter().all(|&x| x >= 0.2) && s.iter().sum::<f64>() > 0.99, "{s:?}");
    let migrations: u64 = sim.measure.dom_metrics.iter().map(|m| m.migrations).sum();
    assert!(migrations > 0, "no vCPU changed pCPU");
}
