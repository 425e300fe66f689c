//! The null scheduler against `null.c`'s header: one vCPU per pCPU, never moved, the rest waiting.

use super::*;
use crate::sim::test_support::*;
use serde_json::json;

/// Four vCPUs on three pCPUs: the first three own a pCPU each and never move, the fourth waits for a pCPU that
/// never frees and does not run; an assigned vCPU's pCPU idles while it sleeps rather than run the waiter.
#[test]
fn one_vcpu_per_pcpu_and_the_rest_wait() {
    let sc = scenario(json!({
        "schema": 1, "id": "null", "title": "null", "seed": 1, "duration_ms": 2000, "warmup_ms": 0,
        "host": { "pcpus": 3 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "ui", "tasks": [{ "name": "k", "workload": { "type": "interactive", "cpu_us": 500, "think_ms": [5, 15] } }] },
            { "name": "a", "tasks": [cpu_task("x")] },
            { "name": "late", "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "p", "scheduler": "null" }]
    }));
    let sim = run(&sc, "p");
    assert_invariants(&sim);
    let s = shares(&sim);
    assert!(s[1] > 0.0 && s[1] < 0.05, "ui runs its bursts on its own pCPU: {s:?}");
    assert!((s[2] - 1.0 / 3.0).abs() < 1e-9, "a owns a pCPU: {s:?}");
    assert_eq!(s[3], 0.0, "late waits: {s:?}");
    assert!(sim.measure.dom_metrics.iter().all(|m| m.migrations == 0));
}

#[test]
fn init_assigns_free_pcpus_in_order() {
    let doms: Vec<DomainInfo> = (0..3)
        .map(|i| DomainInfo {
            name: format!("d{i}"),
            weight: 256,
            cap_pct: 0,
            vcpus: vec![VcpuId(i)],
            is_driver: false,
            backend_for: Vec::new(),
        })
        .collect();
    let mut n = Null::new(&Value::Null, 2, &doms).unwrap();
    let names: Vec<String> = doms.iter().map(|d| d.name.clone()).collect();
    let (running, vcpu_dom) = (vec![None; 2], vec![DomId(0), DomId(1), DomId(2)]);
    let (mut actions, mut notes) = (Vec::new(), crate::policy::Notes::default());
    let mut ctx = Ctx {
        now: Nanos::ZERO,
        host: crate::policy::HostView {
            pcpus: 2,
            running: &running,
            vcpu_dom: &vcpu_dom,
            vcpu_name: &names,
            domains: &doms,
        },
        actions: &mut actions,
        notes: &mut notes,
        explain: false,
        keep_marks: false,
    };
    for v in 0..3 {
        n.init_vcpu(VcpuId(v), &mut ctx);
    }
    assert_eq!((n.assigned_to(VcpuId(0)), n.assigned_to(VcpuId(1))), (Some(PcpuId(0)), Some(PcpuId(1))));
    assert_eq!((n.assigned_to(VcpuId(2)), n.waiting()), (None, &[VcpuId(2)][..]));
    assert!(Null::new(&json!({"x": 1}), 2, &doms).is_err());
}
