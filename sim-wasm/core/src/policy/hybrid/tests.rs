//! Tests of `hybrid`, beside it.

use crate::scenario::Scenario;
use crate::sim::test_support::*;

use proptest::prelude::*;
use serde_json::{json, Value};
/// The parameters come from the declaration: a bad value names the field and what it may be, flat
/// `domain_type.NAME` keys and a `domain_type` map read alike.
#[test]
fn params_are_checked_against_the_declaration() {
    let e = HybridParams::from_value(&serde_json::json!({"slot_ms": 0})).unwrap_err();
    assert!(e.contains("slot_ms") && e.contains("1") && e.contains("1000"), "{e}");
    let e = HybridParams::from_value(&serde_json::json!({"slots": 3})).unwrap_err();
    assert!(e.contains("unknown") && e.contains("slots") && e.contains("alloc_slots"), "{e}");
    let e = HybridParams::default().set("domain_type.web", &Value::from("fast")).unwrap_err();
    assert_eq!(e, r#"domain_type.web: expected "throughput" or "concurrent", got "fast""#);
    let flat = HybridParams::from_value(&serde_json::json!({"domain_type.web": "concurrent"})).unwrap();
    let map = HybridParams::from_value(&serde_json::json!({"domain_type": {"web": "concurrent"}})).unwrap();
    assert_eq!(flat, map);
    assert_eq!(flat.domain_type["web"], TypeName::Concurrent);
}

use super::*;

fn doms(spec: &[usize]) -> Vec<DomainInfo> {
    let mut next = 0;
    spec.iter()
        .enumerate()
        .map(|(i, &n)| {
            let vcpus = (next..next + n).map(VcpuId).collect();
            next += n;
            DomainInfo {
                name: format!("d{i}"),
                weight: 256,
                cap_pct: 0,
                vcpus,
                is_driver: false,
                backend_for: Vec::new(),
            }
        })
        .collect()
}

/// Weighted portions, with a domain that cannot use its portion held at its bound and the rest re-split.
#[test]
fn share_by_weight_water_fills() {
    assert_eq!(share_by_weight(1000, &[1, 2, 1], &[1000, 1000, 1000]), vec![250, 500, 250]);
    // The heavy domain can use 100 at most: the other two split the remaining 900 equally.
    assert_eq!(share_by_weight(1000, &[1, 8, 1], &[1000, 100, 1000]), vec![450, 100, 450]);
}

/// The initial mapping never puts two vCPUs of a CON domain on one pCPU, even when a HIT domain filled
/// some pCPUs first; and a CON domain needs a pCPU per vCPU.
#[test]
fn initial_mapping_spreads_con_siblings() {
    let info = doms(&[3, 4]);
    let types = [DomainType::Throughput, DomainType::Concurrent];
    let mut h = Hybrid::new(&Value::Null, 4, &info, &types).unwrap();
    let (running, dom, names) = (vec![None; 4], vec![DomId(0); 7], vec![String::new(); 7]);
    let (mut actions, mut notes) = (Vec::new(), crate::policy::Notes::default());
    let mut ctx = Ctx {
        now: Nanos::ZERO,
        host: super::super::HostView { pcpus: 4, running: &running, vcpu_dom: &dom, vcpu_name: &names, domains: &info },
        actions: &mut actions,
        notes: &mut notes,
        explain: false,
        keep_marks: false,
    };
    let placed: Vec<usize> = (0..7).map(|v| h.init_vcpu(VcpuId(v), &mut ctx).0).collect();
    let mut con: Vec<usize> = placed[3..].to_vec();
    con.sort_unstable();
    assert_eq!(con, vec![0, 1, 2, 3]);
    assert!(Hybrid::new(&Value::Null, 3, &info, &types).err().is_some_and(|e| e.contains("domains[1].type")));
}

/// Run-time type changes name an existing domain and a known type; the gang scheduler has no types.
#[test]
fn domain_type_params_are_checked() {
    let mut p = HybridParams::default();
    assert!(p.set("domain_type.web", &json!("concurrent")).is_ok());
    assert!(p.set("domain_type.web", &json!("gang")).unwrap_err().contains("domain_type.web"));
    assert!(p.set("slot_ms", &json!(0)).is_err());
    let info = doms(&[2]);
    let mut h = Hybrid::new(&Value::Null, 2, &info, &[DomainType::Throughput]).unwrap();
    assert!(h.set_param("domain_type.nope", &json!("concurrent")).unwrap_err().contains("no domain 'nope'"));
    h.set_param("domain_type.d0", &json!("concurrent")).unwrap();
    assert!(h.is_concurrent(DomId(0)));
    assert!(crate::policy::registry::check_param("gang", "domain_type.d0", &json!("concurrent")).is_err());
}

proptest! {
    #![proptest_config(crate::sim::test_support::proptest_config(16))]

    /// The same invariants under the co-scheduling policies: hybrid with every other guest domain CON (where it
    /// fits the host) and strict gang (where every domain fits).
    #[test]
    fn invariants_hold_under_co_scheduling(v in arb_scenario(), slot in 1u64..=12, l in 1u64..=5) {
        let mut v = v;
        let pcpus = v["host"]["pcpus"].as_u64().unwrap_or(1);
        let fits = v["domains"].as_array().is_some_and(|ds| ds.iter().all(|d| d["vcpus"].as_u64().unwrap_or(1) <= pcpus));
        for (i, d) in v["domains"].as_array_mut().into_iter().flatten().enumerate() {
            if i % 2 == 1 && d["vcpus"].as_u64().unwrap_or(1) <= pcpus {
                d["type"] = json!("concurrent");
            }
        }
        let params = json!({ "slot_ms": slot, "alloc_slots": l });
        let mut policies = vec![json!({ "id": "h", "scheduler": "hybrid", "params": params })];
        if fits {
            policies.push(json!({ "id": "g", "scheduler": "gang", "params": params }));
        }
        v["policies"] = Value::Array(policies);
        let sc = scenario(v);
        for id in ["h", "g"] {
            if sc.policy(id).is_none() {
                continue;
            }
            let sim = run(&sc, id);
            assert_cpu_conserved(&sim);
            assert_no_double_running(&sim);
            assert_io_conserved(&sim);
        }
    }
}

/// Potential energy keeps weights: with every domain busy, each domain's CPU from the start up to every
/// allocation boundary (L = 3 slots of 10 ms) stays within one allocation interval plus one slot per vCPU of its
/// weighted share, co-scheduled or not: what a domain misses in one interval it gets back in the next ones.
/// (Strict gangs give no such promise: pCPUs left after packing go to whichever domain fits.)
#[test]
fn hybrid_honours_weights_per_allocation_interval() {
    for scheduler in ["hybrid"] {
        // Without the type change: three CON domains would need gangs more than 100% of the time (one
        // co-scheduling at a time, as in the paper), and no scheduler could then give each its share.
        let sc = cosched_scenario(scheduler, false);
        let sim = run(&sc, "p");
        let interval = 30_000_000u64;
        let pcpus = sc.host.pcpus as f64;
        let weights: Vec<u32> = sc.domains.iter().map(|d| d.weight).collect();
        let bounds: Vec<f64> = sc.domains.iter().map(|d| f64::from(d.vcpus)).collect();
        let fair = crate::metrics::fair_shares(pcpus, &weights, &bounds);
        let mut checked = 0;
        for k in 1..=(sim.end.0 / interval) {
            let b = k * interval;
            for (d, dom) in sc.domains.iter().enumerate() {
                let used = dom_cpu_in(&sim, d, 0, b) as f64;
                let want = fair[d] * pcpus * b as f64;
                let slack = (interval + 10_000_000) as f64 * f64::from(dom.vcpus);
                assert!((used - want).abs() <= slack, "{scheduler} {} used {used} in [0, {b}), want {want}", dom.name);
                checked += 1;
            }
        }
        assert!(checked > 40, "{scheduler}: only {checked} intervals checked");
    }
}

/// A run-time type change names its domain; a bad one is rejected with the field path, before any run.
#[test]
fn domain_type_changes_are_validated() {
    let mut v = serde_json::to_value(json!({
        "schema": 1, "id": "t", "title": "t", "seed": 1, "duration_ms": 100, "warmup_ms": 0, "host": { "pcpus": 2 },
        "domains": [{ "name": "a", "vcpus": 2, "tasks": [cpu_task("burn")] }],
        "policies": [{ "id": "h", "scheduler": "hybrid" }],
        "changes": [{ "at_ms": 50, "policy": "h", "param": "domain_type.b", "value": "concurrent" }]
    }))
    .unwrap();
    let err = Scenario::from_value(v.clone()).unwrap_err().to_string();
    assert!(err.contains("changes[0].param") && err.contains("'b'"), "{err}");
    v["changes"][0]["param"] = json!("domain_type.a");
    v["changes"][0]["value"] = json!("gang");
    let err = Scenario::from_value(v.clone()).unwrap_err().to_string();
    assert!(err.contains("changes[0]") && err.contains("throughput"), "{err}");
    v["changes"][0]["value"] = json!("concurrent");
    let sim = run(&scenario(v.clone()), "h");
    assert_cpu_conserved(&sim);
    // Initial types are checked the same way, and co-scheduled domains must fit the host.
    v["policies"][0]["params"] = json!({ "domain_type.x": "concurrent" });
    let err = Scenario::from_value(v.clone()).unwrap_err().to_string();
    assert!(err.contains("policies[0].params.domain_type.x"), "{err}");
    v["policies"][0]["params"] = json!({ "domain_type.a": "concurrent" });
    v["host"]["pcpus"] = json!(1);
    let err = Scenario::from_value(v).unwrap_err().to_string();
    assert!(err.contains("domains[0].vcpus") && err.contains("'h'"), "{err}");
}
