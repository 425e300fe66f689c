//! Tests of `tavs`, beside it.

use super::super::tests::{credit_on, doms, Harness};
use super::super::PRI_UNDER;
use super::*;
use crate::model::PcpuId;
use crate::policy::{Action, Policy};
use crate::report::RunOptions;

use crate::sim::test_support::*;

use serde_json::json;

/// Fig. 2 of the paper: after an event, T2 preempts T1 and runs briefly (positive); a long run is negative;
/// T1's short run before the preemption is ambiguous.
#[test]
fn evidence_follows_algorithm_1() {
    let mut inf = Inference::new(vec![Evidence::default()], Evidence::default());
    let v = VcpuId(0);
    let (t1, t2, t4) = (TaskId(1), TaskId(2), TaskId(4));
    inf.task_switch(v, None, Some(t1), Nanos(0));
    inf.vcpu_scheduled(v, true, Nanos::from_ms(100));
    // T2 preempts T1 at once: ambiguity for T1.
    inf.task_switch(v, Some(t1), Some(t2), Nanos::from_ms(100) + Nanos::from_us(10));
    assert_eq!(inf.belief(t1), 0);
    // T2 runs 200 us, below IOthreshold: positive.
    inf.task_switch(v, Some(t2), Some(t4), Nanos::from_ms(100) + Nanos::from_us(210));
    assert_eq!(inf.belief(t2), 5);
    // T4 runs 30 ms: negative.
    inf.task_switch(v, Some(t4), Some(t2), Nanos::from_ms(130) + Nanos::from_us(210));
    assert_eq!(inf.belief(t4), -20);
    // Without a pending event, T2's short run proves nothing.
    inf.task_switch(v, Some(t2), Some(t4), Nanos::from_ms(130) + Nanos::from_us(300));
    assert_eq!(inf.belief(t2), 5);
}

#[test]
fn belief_is_clamped_and_thresholded() {
    let mut inf = Inference::new(vec![Evidence::default()], Evidence::default());
    let v = VcpuId(0);
    let (io, cpu) = (TaskId(0), TaskId(1));
    let mut now = Nanos(0);
    inf.task_switch(v, None, Some(cpu), now);
    for _ in 0..200 {
        inf.vcpu_scheduled(v, true, now);
        now += Nanos::from_us(1);
        inf.task_switch(v, Some(cpu), Some(io), now);
        now += Nanos::from_us(100);
        inf.task_switch(v, Some(io), Some(cpu), now);
        now += Nanos::from_ms(20);
        inf.task_switch(v, Some(cpu), Some(cpu), now);
    }
    assert_eq!(inf.belief(io), 300);
    assert_eq!(inf.belief(cpu), -100);
    assert!(inf.is_io_bound(io) && !inf.is_io_bound(cpu));
    assert!(inf.has_io_bound_task(v));
}

/// Fig. 4: a 2-bit counter predicts I/O after two hits and keeps predicting through one miss.
#[test]
fn portmap_counter_saturates() {
    let mut m = Portmap::default();
    assert!(!m.predicts_io(2, 0, 7));
    m.update(2, 0, 7, true);
    assert!(!m.predicts_io(2, 0, 7));
    m.update(2, 0, 7, true);
    assert!(m.predicts_io(2, 0, 7));
    m.update(2, 0, 7, true);
    m.update(2, 0, 7, true);
    m.update(2, 0, 7, false);
    assert!(m.predicts_io(2, 0, 7), "one miss does not undo a saturated history");
    m.update(2, 0, 7, false);
    assert!(!m.predicts_io(2, 0, 7));
    assert!(!m.predicts_io(2, 1, 7), "ports are per domain");
    let mut one = Portmap::default();
    one.update(1, 0, 9, true);
    assert!(one.predicts_io(1, 0, 9));
    one.update(1, 0, 9, false);
    assert!(!one.predicts_io(1, 0, 9), "a 1-bit counter forgets at once");
}

/// Task-aware tunables as a Credit policy's `tavs` gives them.
fn tavs(v: serde_json::Value) -> Result<TavsParams, String> {
    super::super::CreditParams::from_value(&serde_json::json!({ "tavs": v })).map(|p| p.tavs.unwrap())
}

#[test]
fn params_are_checked() {
    assert_eq!(
        tavs(serde_json::json!({"pb_ratio": 2})).unwrap_err(),
        "tavs.pb_ratio: expected a number in 0..=1, got 2"
    );
    assert!(tavs(serde_json::json!({"belief_min": 10, "belief_max": 5})).is_err());
    let p = tavs(serde_json::json!({"io_threshold_us": 2000})).unwrap();
    assert_eq!(p.evidence.io_threshold, Nanos::from_ms(2));
    let bad_key = serde_json::json!({"domains": {"d1": {"pb_ratio": 0.5}}});
    assert!(tavs(bad_key).unwrap_err().contains("tavs.domains.d1: unknown parameter 'pb_ratio'"));
    let bad_clamp = serde_json::json!({"belief_max": 50, "domains": {"d1": {"belief_min": 60}}});
    assert_eq!(tavs(bad_clamp).unwrap_err(), "tavs.domains.d1: belief_min 60 is above belief_max 50");
    // Counter bits imply portmap correlation; portmap alone counts with 2 bits.
    assert_eq!(tavs(serde_json::json!({"portmap_bits": 4})).unwrap().portmap_bits, Some(4));
    assert_eq!(tavs(serde_json::json!({"correlation": "portmap"})).unwrap().portmap_bits, Some(2));
    assert_eq!(tavs(serde_json::json!({})).unwrap().portmap_bits, None);
}

/// A domain's overrides are checked with the same ranges as the policy-wide keys they override.
#[test]
fn per_domain_ranges_are_the_policy_wide_ones() {
    let schema = crate::policy::params::generate::<TavsSpec>();
    let each = schema.pointer("/properties/domains/additionalProperties/properties").unwrap();
    for (k, o) in each.as_object().unwrap() {
        let wide = &schema["properties"][k];
        assert_eq!(
            (&o["minimum"], &o["maximum"], &o["type"]),
            (&wide["minimum"], &wide["maximum"], &wide["type"]),
            "{k}"
        );
    }
    assert_eq!(each.as_object().unwrap().len(), 6);
}

fn two_domains() -> Vec<DomainInfo> {
    (0..2)
        .map(|i| DomainInfo {
            name: format!("d{i}"),
            weight: 256,
            cap_pct: 0,
            vcpus: vec![VcpuId(i)],
            is_driver: false,
            backend_for: Vec::new(),
        })
        .collect()
}

/// The same observations on two domains: the one whose PositiveEv, BelThreshold and IOthreshold are
/// overridden infers differently; the other keeps the policy-wide tunables.
#[test]
fn per_domain_evidence_changes_only_that_domain() {
    let params = serde_json::json!({"positive_ev": 4, "domains": {"d1": {"positive_ev": 10, "bel_threshold": 25}}});
    let p = tavs(params.clone()).unwrap();
    let doms = two_domains();
    let mut inf = Inference::new(p.per_vcpu(&doms).unwrap(), p.evidence.clone());
    // Tasks 0 and 1 are I/O loops in d0 and d1; 2 and 3 their domains' busy loops.
    let mut now = Nanos(0);
    for (v, cpu) in [(VcpuId(0), TaskId(2)), (VcpuId(1), TaskId(3))] {
        inf.task_switch(v, None, Some(cpu), now);
    }
    for _ in 0..3 {
        for (v, io, cpu) in [(VcpuId(0), TaskId(0), TaskId(2)), (VcpuId(1), TaskId(1), TaskId(3))] {
            inf.vcpu_scheduled(v, true, now);
            inf.task_switch(v, Some(cpu), Some(io), now + Nanos::from_us(1));
            inf.task_switch(v, Some(io), Some(cpu), now + Nanos::from_us(301));
        }
        now += Nanos::from_ms(30);
    }
    assert_eq!(inf.belief(TaskId(0)), 12, "d0 keeps the policy-wide PositiveEv 4");
    assert_eq!(inf.belief(TaskId(1)), 30, "d1 adds its own PositiveEv 10");
    assert!(!inf.is_io_bound(TaskId(0)), "12 is below d0's BelThreshold 20");
    assert!(inf.is_io_bound(TaskId(1)), "30 is above d1's BelThreshold 25");
    // A change of d0's IOthreshold below the 300 us runs turns d0's next observation negative, not d1's.
    let mut spec: super::super::CreditSpec =
        crate::policy::params::from_value(&serde_json::json!({ "tavs": params })).unwrap();
    crate::policy::params::set(&mut spec, "tavs.domains.d0.io_threshold_us", &serde_json::json!(100)).unwrap();
    let p2 = spec.resolve().unwrap().tavs.unwrap();
    inf.set_evidence(p2.per_vcpu(&doms).unwrap(), p2.evidence.clone());
    for (v, io, cpu) in [(VcpuId(0), TaskId(0), TaskId(2)), (VcpuId(1), TaskId(1), TaskId(3))] {
        inf.vcpu_scheduled(v, true, now);
        inf.task_switch(v, Some(cpu), Some(io), now + Nanos::from_us(1));
        inf.task_switch(v, Some(io), Some(cpu), now + Nanos::from_us(301));
    }
    assert_eq!(inf.belief(TaskId(0)), 12 - 20);
    assert_eq!(inf.belief(TaskId(1)), 40);
    let unknown = tavs(serde_json::json!({"domains": {"nope": {}}})).unwrap();
    assert!(unknown.per_vcpu(&doms).unwrap_err().contains("tavs.domains.nope"));
}

/// Task-aware scheduling with PBratio 0 infers but never boosts: the schedule and every domain metric are
/// exactly plain Credit's (paper 000 3.4: "if PBratio is zero, our scheduler runs in the same manner"). Tracking's
/// own hypervisor cost (5.5, `track_cost_ns`) is a separate overhead and is zeroed here.
#[test]
fn pb_ratio_zero_is_plain_credit() {
    let sc = scenario(json!({
        "schema": 1, "id": "pb0", "title": "pb0", "seed": 9, "duration_ms": 8000, "warmup_ms": 3000,
        "host": { "pcpus": 2 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "mixed", "tasks": [server_task("srv", 7, [5, 50]), cpu_task("burn")] },
            { "name": "io", "tasks": [server_task("srv", 7, [5, 50])] },
            { "name": "a", "tasks": [cpu_task("burn")] }, { "name": "b", "tasks": [cpu_task("burn")] },
            { "name": "c", "tasks": [cpu_task("burn")] }
        ],
        "policies": [
            { "id": "credit", "scheduler": "credit" },
            { "id": "pb0", "scheduler": "credit", "params": { "tavs": { "pb_ratio": 0, "track_cost_ns": 0 } } },
            { "id": "pb", "scheduler": "credit", "params": { "tavs": { "pb_ratio": 0.125 } } }
        ]
    }));
    let (plain, zero, on) = (run(&sc, "credit"), run(&sc, "pb0"), run(&sc, "pb"));
    assert_eq!(plain.trace().segments(), zero.trace().segments());
    let opts = RunOptions { deterministic: true, ..RunOptions::default() };
    let (a, b) = (plain.report(&opts), zero.report(&opts));
    assert_eq!(a["domains"], b["domains"]);
    assert_eq!(a["fairness"], b["fairness"]);
    assert_eq!(b["partial_boosts"]["count"], 0);
    assert!(b["partial_boosts"].get("pbhr").is_none(), "no boost, no hit ratio (not 0)");
    // The inference did run, and with an allowance the same host is scheduled differently.
    assert!(b["tasks"]["mixed/srv"]["belief"].as_i64().unwrap() > 20);
    // The trace's belief history ends where the report's belief is.
    let srv = zero.meta().tasks.iter().position(|t| t.path == "mixed/srv").unwrap() as u32;
    let history = zero.trace().beliefs(Some(srv));
    assert_eq!(history.last().map(|r| r.belief), b["tasks"]["mixed/srv"]["belief"].as_i64());
    assert_ne!(plain.trace().segments(), on.trace().segments());
    // The trace marks every partial boost (the belief view draws them); the report counts those of the measured
    // window, as every other metric. Only TAVS has a BelThreshold to draw.
    let given = |from: u64| on.trace().boosts().iter().filter(|r| r.kind == "boost" && r.t_ns >= from).count();
    assert!(given(0) > given(Nanos::from_ms(3000).0), "some boosts fall in the warm-up");
    let measured = on.report(&opts)["partial_boosts"]["count"].as_u64();
    assert_eq!(Some(given(Nanos::from_ms(3000).0) as u64), measured);
    assert!(on.trace().boosts().windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
    assert!(zero.trace().boosts().is_empty() && plain.trace().boosts().is_empty());
    assert_eq!((plain.belief_threshold(), on.belief_threshold()), (None, Some(20)));
}

/// Task tracking's hypervisor cost is charged to the running vCPU: the domain's CPU time is unchanged, its tasks
/// get that much less of it. At 1 us per observed switch and 9 us per message, a message takes 10 us.
#[test]
fn tracking_cost_is_charged_to_the_vcpu() {
    let sc = pipe_scenario(1, 1, 4, 4, 9.0, json!({ "track_cost_ns": 1000 }));
    let (off, on) = (run(&sc, "credit"), run(&sc, "tavs"));
    assert_eq!(off.measure.dom_metrics[0].cpu_ns, on.measure.dom_metrics[0].cpu_ns, "the vCPU's CPU time is the same");
    assert_eq!(off.measure.dom_metrics[0].tracking_ns, 0);
    assert_eq!(off.measure.dom_metrics[0].messages, 11_111);
    assert_eq!(on.measure.dom_metrics[0].messages, 10_000);
    // One observed switch per message, and the first task's at boot.
    assert_eq!(on.measure.dom_metrics[0].tracking_ns, (10_000 + 1) * 1000);
    let r = on.report(&RunOptions::default());
    assert_eq!(r["domains"]["hack"]["tracking_ms"], 10.001);
    assert!(off.report(&RunOptions::default())["domains"]["hack"].get("tracking_ms").is_none());
    // A busy loop's progress does not count the hypervisor's tracking time as its own work.
    let sc = scenario(json!({
        "schema": 1, "id": "c", "title": "c", "seed": 1, "duration_ms": 100, "host": { "pcpus": 1 },
        "domains": [{ "name": "d", "tasks": [cpu_task("a"), cpu_task("b")] }],
        "policies": [{ "id": "tavs", "scheduler": "credit", "params": { "tavs": { "track_cost_ns": 1000000 } } }]
    }));
    let sim = run(&sc, "tavs");
    let r = sim.report(&RunOptions::default());
    let tracking = sim.measure.dom_metrics[0].tracking_ns as f64 / 1e6;
    assert!(tracking > 0.0);
    let progress = r["domains"]["d"]["throughput"]["progress_per_s"].as_f64().unwrap();
    assert!((progress - (100.0 - tracking) * 10.0).abs() < 1e-6, "{progress} vs {tracking}");
}

/// A scenario change of IOthreshold reaches the inference through `set_param`: it is in the decision log, a task
/// that was below BelThreshold climbs above it afterwards, and the report times that from the change.
#[test]
fn io_threshold_change_takes_effect() {
    let sc = scenario(json!({
        "schema": 1, "id": "thr", "title": "thr", "seed": 1, "duration_ms": 3000, "warmup_ms": 0,
        "host": { "pcpus": 1 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "text", "tasks": [
                { "name": "wget", "workload": { "type": "io_loop", "io": "net", "cpu_us": 250 } }, cpu_task("bzip2")] },
            { "name": "a", "tasks": [cpu_task("burn")] }, { "name": "b", "tasks": [cpu_task("burn")] }
        ],
        "policies": [
            { "id": "keep", "scheduler": "credit", "params": { "tavs": { "io_threshold_us": 100 } } },
            { "id": "raise", "scheduler": "credit", "params": { "tavs": { "io_threshold_us": 100 } } }
        ],
        "changes": [{ "at_ms": 1500, "policy": "raise", "param": "tavs.io_threshold_us", "value": 500 }]
    }));
    let (keep, raise) = (run(&sc, "keep"), run(&sc, "raise"));
    let log: Vec<String> =
        raise.trace().decisions(0, u64::MAX, usize::MAX).iter().map(|d| d.text.to_string()).collect();
    assert!(log.iter().any(|t| t == "change: tavs.io_threshold_us = 500"), "the change is logged");
    let opts = RunOptions::default();
    let (k, r) = (keep.report(&opts), raise.report(&opts));
    assert_eq!(k["tasks"]["text/wget"]["belief"], -100);
    assert!(k["tasks"]["text/wget"].get("io_bound_after_ms").is_none());
    assert!(r["tasks"]["text/wget"]["belief"].as_i64().unwrap() > 20);
    assert_eq!(r["tasks"]["text/wget"]["io_bound"], true);
    // Not before the change: from -100 it takes 25 positive observations.
    let after = r["tasks"]["text/wget"]["io_bound_after_ms"].as_f64().unwrap();
    assert!(after > 0.0 && after < 1500.0, "{after}");
    let wget = raise.meta().tasks.iter().position(|t| t.path == "text/wget").unwrap() as u32;
    let crossed = raise.trace().beliefs(Some(wget)).into_iter().find(|b| b.belief > 20).unwrap();
    assert_eq!(crossed.t_ns, 1_500_000_000 + (after * 1e6).round() as u64);
}

/// Five observations of `io` running 50 us right after an event on `v` make it I/O-bound (belief 25); the
/// guest is back in `burn` afterwards. Returns the time after them.
fn make_io_bound(c: &mut Credit, v: VcpuId, io: TaskId, burn: TaskId) -> Nanos {
    let mut t = Nanos::from_ms(1);
    c.tavs.inf.task_switch(v, None, Some(burn), t);
    for _ in 0..5 {
        c.tavs.inf.vcpu_scheduled(v, true, t);
        c.tavs.inf.task_switch(v, Some(burn), Some(io), t + Nanos::from_us(10));
        c.tavs.inf.task_switch(v, Some(io), Some(burn), t + Nanos::from_us(60));
        t += Nanos::from_ms(1);
    }
    assert!(c.tavs.inf.is_io_bound(io));
    t
}

/// A revoked partial boost sends the vCPU back to the place it left in the run queue (its turn is not lost),
/// and the boosted run counts against its PBratio allowance. The vCPU the boost preempted goes back to the
/// head of its class (`preempted_keeps_place`) and runs next; with that off, to the tail.
#[test]
fn revoked_partial_boost_keeps_the_place_and_is_charged() {
    for keeps in [true, false] {
        let params = serde_json::json!({"tavs": {"pb_ratio": 1.0, "preempted_keeps_place": keeps}});
        let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 1), (256, 0, 1), (256, 0, 1)], 1, &params);
        let (io, burn, v2) = (TaskId(0), TaskId(1), VcpuId(2));
        let t = make_io_bound(&mut c, v2, io, burn);
        c.tavs.cpu_used[2] = 10_000_000;
        h.running[0] = Some(VcpuId(0));
        for v in 1..4 {
            c.runq_insert(PcpuId(0), VcpuId(v));
        }
        c.event_pending(v2, Some(7), &mut h.ctx(t));
        assert_eq!(c.runqueue(PcpuId(0)), vec![v2, VcpuId(1), VcpuId(3)], "the boost jumps the queue");
        let d = c.do_schedule(PcpuId(0), Some(VcpuId(0)), true, &mut h.ctx(t));
        assert_eq!(d.next, Some(v2));
        h.running[0] = Some(v2);
        // The guest runs the I/O task for 40 us, then goes back to its busy loop: the boost is revoked.
        c.guest_task_switch(v2, Some(burn), Some(io), &mut h.ctx(t));
        c.guest_task_switch(v2, Some(io), Some(burn), &mut h.ctx(t + Nanos::from_us(40)));
        assert_eq!(c.tavs.pb_used[2], 40_000);
        let d = c.do_schedule(PcpuId(0), Some(v2), true, &mut h.ctx(t + Nanos::from_us(40)));
        if keeps {
            assert_eq!(d.next, Some(VcpuId(0)), "the preempted vCPU resumes first");
            assert_eq!(c.runqueue(PcpuId(0)), vec![VcpuId(1), v2, VcpuId(3)], "v2 is back before v3");
        } else {
            assert_eq!(d.next, Some(VcpuId(1)));
            assert_eq!(c.runqueue(PcpuId(0)), vec![v2, VcpuId(3), VcpuId(0)], "v2 before v3, v0 at the tail");
        }
    }
}

/// A partial boost whose event woke no task (a pure TCP ACK) ends when the guest, the event handled, returns to
/// its busy loop; with `revoke_on_resume` off it lasts until the 10 ms cap.
#[test]
fn partial_boost_ends_when_the_guest_resumes_a_cpu_task() {
    for revoke in [true, false] {
        let params = serde_json::json!({"tavs": {"pb_ratio": 1.0, "revoke_on_resume": revoke}});
        let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 1)], 1, &params);
        let (io, burn, v1) = (TaskId(0), TaskId(1), VcpuId(1));
        let t = make_io_bound(&mut c, v1, io, burn);
        c.tavs.cpu_used[1] = 10_000_000;
        h.running[0] = Some(VcpuId(0));
        c.runq_insert(PcpuId(0), v1);
        c.event_pending(v1, Some(7), &mut h.ctx(t));
        let d = c.do_schedule(PcpuId(0), Some(VcpuId(0)), true, &mut h.ctx(t));
        assert_eq!(d.next, Some(v1));
        assert_eq!(d.slice, Nanos::from_ms(10), "a partial boost is capped at a tick");
        h.running[0] = Some(v1);
        h.actions.clear();
        c.guest_resumed(v1, burn, &mut h.ctx(t + Nanos::from_us(5)));
        assert_eq!(c.tavs.pboost[1].is_none(), revoke);
        assert_eq!(h.actions.contains(&Action::Resched(PcpuId(0))), revoke);
        if !revoke {
            continue;
        }
        // Returning to an I/O-bound task keeps the boost.
        let t2 = t + Nanos::from_ms(1);
        c.runq_insert(PcpuId(0), VcpuId(0));
        assert_eq!(c.do_schedule(PcpuId(0), Some(v1), true, &mut h.ctx(t2)).next, Some(VcpuId(0)));
        h.running[0] = Some(VcpuId(0));
        c.event_pending(v1, Some(7), &mut h.ctx(t2));
        assert_eq!(c.do_schedule(PcpuId(0), Some(VcpuId(0)), true, &mut h.ctx(t2)).next, Some(v1));
        c.tavs.inf.task_switch(v1, Some(burn), Some(io), t2);
        c.guest_resumed(v1, io, &mut h.ctx(t2 + Nanos::from_us(5)));
        assert!(c.tavs.pboost[1].is_some(), "the I/O-bound task keeps its boost");
    }
}

/// PBHR (000 5.2) counts boosts, h = 1 per boost during which an I/O-bound task ran: a boost that runs two
/// I/O-bound tasks in a row is one hit, and one whose guest goes straight to its busy loop is a miss.
#[test]
fn pbhr_counts_each_boost_once() {
    let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 1)], 1, &serde_json::json!({"tavs": {"pb_ratio": 1.0}}));
    let (io1, io2, burn, v1) = (TaskId(0), TaskId(1), TaskId(2), VcpuId(1));
    make_io_bound(&mut c, v1, io1, burn);
    let mut t = make_io_bound(&mut c, v1, io2, burn);
    c.tavs.cpu_used[1] = 10_000_000;
    for (tasks, hits) in [(&[io1, io2, burn][..], 1), (&[burn][..], 1), (&[io2, burn][..], 2)] {
        h.running[0] = Some(VcpuId(0));
        c.runq_insert(PcpuId(0), v1);
        c.event_pending(v1, Some(7), &mut h.ctx(t));
        assert_eq!(c.do_schedule(PcpuId(0), Some(VcpuId(0)), true, &mut h.ctx(t)).next, Some(v1));
        h.running[0] = Some(v1);
        let mut prev = burn;
        for &next in tasks {
            t += Nanos::from_us(20);
            c.guest_task_switch(v1, Some(prev), Some(next), &mut h.ctx(t));
            prev = next;
        }
        t += Nanos::from_us(20);
        c.do_schedule(PcpuId(0), Some(v1), true, &mut h.ctx(t));
        // Back to a queue of v1 alone for the next round.
        c.runq_remove(VcpuId(0));
        c.runq_remove(v1);
        assert_eq!(c.partial_boosts(), Some((c.tavs.boosts, hits)), "after {tasks:?}");
    }
    assert_eq!(c.tavs.boosts, 3);
}

/// Block correlation (000 3.5.1): a completion boosts only if an I/O-bound task was among the last N tasks
/// scheduled on the vCPU when its request reached the driver; other completions and timers never boost.
#[test]
fn inspection_window_decides_which_completions_boost() {
    let info = doms(&[(256, 0, 1), (256, 0, 1)]);
    for (window, boosts) in [(1usize, false), (2, true)] {
        let mut h = Harness::new(info.clone(), 1);
        let params = serde_json::json!({"tavs": {"pb_ratio": 1.0, "inspection_window": window}});
        let mut c = Credit::new(&params, 1, &info).unwrap();
        let (io, burn, v1) = (TaskId(0), TaskId(1), VcpuId(1));
        let t = make_io_bound(&mut c, v1, io, burn);
        c.tavs.cpu_used[1] = 10_000_000;
        // The I/O task's read reaches the driver after the guest has switched back to its busy loop.
        c.block_request(v1, io, t);
        h.running[0] = Some(VcpuId(0));
        c.runq_insert(PcpuId(0), v1);
        // A guest timer pending for v1 never boosts it.
        c.event_pending(v1, None, &mut h.ctx(t));
        assert_eq!(c.pri(v1), PRI_UNDER);
        c.block_done(v1, io, t, true);
        c.event_pending(v1, None, &mut h.ctx(t + Nanos::from_ms(1)));
        assert_eq!(c.pri(v1) == PRI_BOOST, boosts, "window {window}");
        assert!(c.tavs.block_marks.is_empty(), "the request's mark is dropped once it completed");
    }
}
