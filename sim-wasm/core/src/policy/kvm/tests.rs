//! The KVM host's scheduler against what Linux's documentation and source say it does: weights, nice levels,
//! tick-sized turns, bandwidth throttling, wake-up placement, balancing, and the CFS variant.

use super::*;
use crate::sim::test_support::*;
use serde_json::json;

fn two_hogs(params: Value, doms: [(&str, u64); 2], pcpus: u32) -> Scenario {
    scenario(json!({
        "schema": 1, "id": "k", "title": "k", "seed": 1, "duration_ms": 4000, "warmup_ms": 500,
        "host": { "pcpus": pcpus },
        "domains": [
            { "name": doms[0].0, "weight": doms[0].1, "tasks": [cpu_task("x")] },
            { "name": doms[1].0, "weight": doms[1].1, "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "p", "scheduler": "kvm", "params": params }]
    }))
}

use crate::scenario::Scenario;

#[test]
fn params_parse_and_reject() {
    let p =
        KvmParams::from_value(&json!({"kernel": "cfs", "hz": 1000, "domains": {"a": {"cpu_weight": 300}}})).unwrap();
    assert_eq!((p.kernel, p.hz, p.domains["a"].cpu_weight), (Kernel::Cfs, 1000, Some(300)));
    assert!(KvmParams::from_value(&json!({"kernel": "bfs"})).is_err());
    assert!(KvmParams::from_value(&json!({"domains": {"a": {"cpu_weight": 0}}})).is_err());
    let e = KvmParams::from_value(&json!({"domains": {"a": {"cpu_max_us": [10, 100_000]}}})).unwrap_err();
    assert!(e.contains("quota"), "{e}");
    let e = KvmParams::check_change("kernel", &json!("cfs")).unwrap_err();
    assert!(e.contains("fixed at boot"), "{e}");
    assert!(KvmParams::check_change("domains.a.cpu_max_us", &json!([30_000, 100_000])).is_ok());
    // 1 + log2(CPUs), CPUs counted up to 8.
    let d = KvmParams::default();
    assert_eq!((d.factor(1), d.factor(2), d.factor(4), d.factor(64)), (1, 2, 3, 4));
}

/// Two busy VMs at cpu.weight 1:3 on one pCPU share it 0.25 / 0.75, under EEVDF and under CFS; each turn is a
/// whole tick (the 1.4 ms request ends between two 4 ms ticks), so the heavier runs three ticks to the lighter's
/// one and the pCPU switches twice every 16 ms: 125 switches a second.
#[test]
fn cgroup_weights_split_one_pcpu() {
    for kernel in ["eevdf", "cfs"] {
        let params = json!({"kernel": kernel, "domains": {"lo": {"cpu_weight": 100}, "hi": {"cpu_weight": 300}}});
        let sim = run(&two_hogs(params, [("lo", 256), ("hi", 256)], 1), "p");
        assert_invariants(&sim);
        let s = shares(&sim);
        assert!((s[0] - 0.25).abs() < 0.01 && (s[1] - 0.75).abs() < 0.01, "{kernel}: {s:?}");
        let switches: u64 = sim.measure.dom_metrics.iter().map(|m| m.context_switches).sum();
        let per_s = switches as f64 / 3.5;
        if kernel == "eevdf" {
            assert!((110.0..=140.0).contains(&per_s), "eevdf: {per_s} switches/s");
        }
    }
    // Without per-domain settings the weight comes from the domain's own (256 = cpu.weight 100).
    let sim = run(&two_hogs(json!({}), [("lo", 256), ("hi", 768)], 1), "p");
    let s = shares(&sim);
    assert!((s[1] - 0.75).abs() < 0.01, "{s:?}");
}

/// Nice levels weigh threads that share a group: nice 0 against nice 5 is 1024 : 335, and in separate cgroups of
/// equal weight nice does nothing between them.
#[test]
fn nice_weighs_threads_in_one_group() {
    let shared = json!({"domains": {"a": {"cgroup": "/", "nice": 0}, "b": {"cgroup": "/", "nice": 5}}});
    let s = shares(&run(&two_hogs(shared, [("a", 256), ("b", 256)], 1), "p"));
    let want = 1024.0 / (1024.0 + 335.0);
    assert!((s[0] - want).abs() < 0.01, "{s:?} vs {want}");
    let apart = json!({"domains": {"a": {"nice": 0}, "b": {"nice": 5}}});
    let s = shares(&run(&two_hogs(apart, [("a", 256), ("b", 256)], 1), "p"));
    assert!((s[0] - 0.5).abs() < 0.01, "{s:?}");
}

/// cpu.max 30 ms every 100 ms holds a busy VM to 30% of a pCPU it has to itself; without it the VM takes the
/// whole pCPU. The group is throttled once a period, for about 70 ms of it.
#[test]
fn bandwidth_quota_throttles_until_the_period_ends() {
    let quota = json!({"domains": {"a": {"cpu_max_us": [30_000, 100_000]}}});
    let sc = scenario(json!({
        "schema": 1, "id": "q", "title": "q", "seed": 1, "duration_ms": 3000, "warmup_ms": 0,
        "host": { "pcpus": 1 },
        "domains": [{ "name": "a", "tasks": [cpu_task("x")] }],
        "policies": [{ "id": "q", "scheduler": "kvm", "params": quota }, { "id": "free", "scheduler": "kvm" }]
    }));
    let sim = run(&sc, "q");
    assert_invariants(&sim);
    let s = shares(&sim);
    assert!((s[0] - 0.30).abs() < 0.015, "{s:?}");
    let free = shares(&run(&sc, "free"));
    assert!(free[0] > 0.99, "{free:?}");
}

/// A burst allowance lets a group that idled use more than its quota in a later period, never more than
/// quota + burst in one.
#[test]
fn burst_is_bounded_by_quota_plus_burst() {
    let mut k = Kvm::new(
        &json!({"domains": {"a": {"cpu_max_us": [20_000, 100_000], "cpu_max_burst_us": 10_000}}}),
        1,
        &[DomainInfo {
            name: "a".into(),
            weight: 256,
            cap_pct: 0,
            vcpus: vec![VcpuId(0)],
            is_driver: false,
            backend_for: Vec::new(),
        }],
    )
    .unwrap();
    let (mut actions, mut notes) = (Vec::new(), crate::policy::Notes::default());
    let running = [None];
    let mut ctx = Ctx {
        now: Nanos::from_ms(500),
        host: crate::policy::HostView {
            pcpus: 1,
            running: &running,
            vcpu_dom: &[crate::model::DomId(0)],
            vcpu_name: &["a.v0".to_string()],
            domains: &[],
        },
        actions: &mut actions,
        notes: &mut notes,
        explain: false,
        keep_marks: false,
    };
    // Five idle periods keep at most quota + burst.
    k.refill(Nanos::from_ms(500), &mut ctx);
    assert_eq!(k.groups[0].runtime, 30_000_000);
}

/// An interactive VM beside a busy one: each keystroke wakes it with positive lag, and once the busy loop's
/// protected request is over the wake-up preempts it, so the median response is well under the tick that
/// without wake-up preemption every response waits for.
#[test]
fn a_sleeper_preempts_a_busy_loop_on_wakeup() {
    let sc = scenario(json!({
        "schema": 1, "id": "s", "title": "s", "seed": 1, "duration_ms": 3000, "warmup_ms": 500,
        "host": { "pcpus": 1 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "tick", "tasks": [{ "name": "t", "workload": { "type": "interactive", "cpu_us": 1000, "think_ms": [9, 9] } }] },
            { "name": "burn", "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "p", "scheduler": "kvm" }, { "id": "nowp", "scheduler": "kvm", "params": { "wakeup_preemption": false } }]
    }));
    let sim = run(&sc, "p");
    assert_invariants(&sim);
    let s = shares(&sim);
    assert!((s[1] - 0.1).abs() < 0.02, "the sleeper gets its 1 ms in 10: {s:?}");
    let p50 = |sim: &crate::sim::Simulation| {
        let r = sim.report(&crate::report::RunOptions::default());
        r["domains"]["tick"]["response_ms"]["p50"].as_f64().expect("the sleeper's responses")
    };
    let (a, b) = (p50(&sim), p50(&run(&sc, "nowp")));
    assert!(b > a + 1.0, "median response with wake-up preemption {a} ms, without {b} ms");
}

/// Two busy VMs that boot on one pCPU of two end up one a pCPU: the waking one is placed on the idle pCPU.
#[test]
fn wakeups_and_balancing_spread_threads() {
    let sc = scenario(json!({
        "schema": 1, "id": "b", "title": "b", "seed": 1, "duration_ms": 2000, "warmup_ms": 200,
        "host": { "pcpus": 2 },
        "domains": [
            { "name": "a", "tasks": [cpu_task("x")] }, { "name": "idle" }, { "name": "c", "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "p", "scheduler": "kvm" }]
    }));
    let sim = run(&sc, "p");
    assert_invariants(&sim);
    let s = shares(&sim);
    assert!((s[0] - 0.5).abs() < 0.01 && (s[2] - 0.5).abs() < 0.01, "shares of the host {s:?}");
    // Three busy VMs on two pCPUs: every pCPU stays busy.
    let sc = two_hogs(json!({}), [("a", 256), ("b", 256)], 2);
    let s = shares(&run(&sc, "p"));
    assert!((s[0] + s[1] - 1.0).abs() < 0.01, "{s:?}");
}

/// A vCPU's poll interval follows `kvm_vcpu_halt`: it starts at 0 (the first halt never polls), grows from
/// `grow_start` by `grow` after halts shorter than `halt_poll_ns`, stays when a halt ends within it, halves after a
/// halt longer than `halt_poll_ns`, and never passes it.
#[test]
fn the_halt_poll_interval_grows_and_shrinks_as_kvm_does() {
    let dom = DomainInfo {
        name: "a".into(),
        weight: 256,
        cap_pct: 0,
        vcpus: vec![VcpuId(0)],
        is_driver: false,
        backend_for: Vec::new(),
    };
    let mut k = Kvm::new(&json!({}), 1, &[dom]).unwrap();
    let halt = |k: &mut Kvm, ns: u64| {
        k.threads[0].halted_at = Some(Nanos(1_000_000));
        k.halt_ended(0, Nanos(1_000_000 + ns));
        k.threads[0].poll_ns
    };
    assert_eq!(k.threads[0].poll_ns, 0);
    let grown: Vec<u64> = (0..6).map(|_| halt(&mut k, 190_000)).collect();
    assert_eq!(grown, [10_000, 20_000, 40_000, 80_000, 160_000, 200_000]);
    assert_eq!(halt(&mut k, 50_000), 200_000, "a halt within the interval keeps it");
    assert_eq!(halt(&mut k, 300_000), 100_000, "a halt past halt_poll_ns halves it");
    let mut off = Kvm::new(
        &json!({ "halt_poll_ns": 0 }),
        1,
        &[DomainInfo {
            name: "a".into(),
            weight: 256,
            cap_pct: 0,
            vcpus: vec![VcpuId(0)],
            is_driver: false,
            backend_for: Vec::new(),
        }],
    )
    .unwrap();
    assert_eq!(halt(&mut off, 50_000), 0, "off, it never polls");
}
