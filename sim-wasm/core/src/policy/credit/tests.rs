//! Credit's tests: its accounting and decisions on hand-made hosts, then whole runs (fair shares, the credit
//! ceiling, caps).

use super::*;
use crate::policy::BackendWork;
use crate::report::RunOptions;
use crate::scenario::Scenario;
use crate::sim::test_support::*;
use crate::sim::Simulation;
use proptest::prelude::*;
use serde_json::{json, Value};

pub(super) fn doms(spec: &[(u32, u32, usize)]) -> Vec<DomainInfo> {
    let mut next = 0;
    spec.iter()
        .enumerate()
        .map(|(i, &(weight, cap_pct, n))| {
            let vcpus = (next..next + n).map(VcpuId).collect();
            next += n;
            DomainInfo { name: format!("d{i}"), weight, cap_pct, vcpus, is_driver: false, backend_for: Vec::new() }
        })
        .collect()
}

/// A Credit policy with `params` on `pcpus` pCPUs over domains `spec` (see `doms`), and a harness for its context.
pub(super) fn credit_on(spec: &[(u32, u32, usize)], pcpus: usize, params: &Value) -> (Harness, Credit) {
    let info = doms(spec);
    let credit = Credit::new(params, pcpus, &info).unwrap();
    (Harness::new(info, pcpus), credit)
}

pub(super) struct Harness {
    pub(super) running: Vec<Option<VcpuId>>,
    vcpu_dom: Vec<DomId>,
    names: Vec<String>,
    domains: Vec<DomainInfo>,
    pub(super) actions: Vec<Action>,
    notes: crate::policy::Notes,
}

impl Harness {
    pub(super) fn new(domains: Vec<DomainInfo>, pcpus: usize) -> Harness {
        let mut vcpu_dom = Vec::new();
        for (d, info) in domains.iter().enumerate() {
            vcpu_dom.extend(info.vcpus.iter().map(|_| DomId(d)));
        }
        let names = (0..vcpu_dom.len()).map(|i| format!("v{i}")).collect();
        Harness {
            running: vec![None; pcpus],
            vcpu_dom,
            names,
            domains,
            actions: vec![],
            notes: crate::policy::Notes::default(),
        }
    }
    pub(super) fn ctx(&mut self, now: Nanos) -> Ctx<'_> {
        Ctx {
            now,
            host: super::super::HostView {
                pcpus: self.running.len(),
                running: &self.running,
                vcpu_dom: &self.vcpu_dom,
                vcpu_name: &self.names,
                domains: &self.domains,
            },
            actions: &mut self.actions,
            notes: &mut self.notes,
            explain: true,
            keep_marks: true,
        }
    }

    /// The last `do_schedule`'s reason, worded from the facts it gave.
    fn pick_text(&mut self) -> String {
        self.notes.take_pick().expect("do_schedule explained its pick").text(&self.names)
    }
}

/// Hand-worked accounting: three active vCPUs of weights 256/512/256 on one pCPU share 300 credits 75/150/75.
#[test]
fn accounting_divides_credits_by_weight() {
    let (mut h, mut c) = credit_on(&[(256, 0, 1), (512, 0, 1), (256, 0, 1)], 1, &Value::Null);
    for v in 0..3 {
        c.acct_start(VcpuId(v));
    }
    c.account(&mut h.ctx(Nanos::from_ms(30)));
    assert_eq!((c.credit(VcpuId(0)), c.credit(VcpuId(1)), c.credit(VcpuId(2))), (75, 150, 75));
    assert!(c.vcpus.iter().all(|v| v.pri == PRI_UNDER));
}

/// Hand-worked share rules: equal weights, one domain of 1 vCPU and one of 3, on 2 pCPUs (600 credits). 3.x
/// weighs domains: 300 each, the 3-vCPU domain's split 100/100/100. 4.x weighs vCPUs: 150 for every vCPU.
#[test]
fn share_rule_follows_the_release() {
    for (version, want) in [("3.2", [300, 100, 100, 100]), ("3.0.3", [300, 100, 100, 100]), ("4.x", [150; 4])] {
        let params = serde_json::json!({ "version": version });
        let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 3)], 2, &params);
        for v in 0..4 {
            c.acct_start(VcpuId(v));
        }
        c.account(&mut h.ctx(Nanos::from_ms(30)));
        let got: Vec<i64> = (0..4).map(|v| c.credit(VcpuId(v))).collect();
        assert_eq!(got, want, "version {version}");
    }
    // No version is the default 3.2.
    let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 3)], 2, &Value::Null);
    for v in 0..4 {
        c.acct_start(VcpuId(v));
    }
    c.account(&mut h.ctx(Nanos::from_ms(30)));
    assert_eq!(c.credit(VcpuId(1)), 100);
}

/// A cap of 20% gives at most 60 credits per 30 ms and parks the vCPU once it is 60 credits in debt.
#[test]
fn cap_limits_credit_and_parks() {
    let (mut h, mut c) = credit_on(&[(256, 20, 1), (256, 0, 1)], 1, &Value::Null);
    c.acct_start(VcpuId(0));
    c.acct_start(VcpuId(1));
    c.account(&mut h.ctx(Nanos::from_ms(30)));
    assert_eq!(c.credit(VcpuId(0)), 60);
    // The uncapped domain gets its fair half plus what the cap left over.
    assert_eq!(c.credit(VcpuId(1)), 240);
    c.vcpus[0].credit = -200;
    c.account(&mut h.ctx(Nanos::from_ms(60)));
    assert_eq!(c.credit(VcpuId(0)), -140);
    assert!(h.actions.contains(&Action::Pause(VcpuId(0))));
    assert_eq!(c.vcpu_sched(VcpuId(0)).pri, Pri::new(PriClass::Parked, "PARKED"));
}

/// Version presets apply first and explicit keys override them.
#[test]
fn version_presets() {
    let p = CreditParams::from_value(&serde_json::json!({"boost": true, "version": "3.0.3"})).unwrap();
    assert_eq!((p.boost, p.accounting), (true, Accounting::Tick));
    let p = CreditParams::from_value(&serde_json::json!({"version": "4.x"})).unwrap();
    assert_eq!((p.ratelimit_us, p.halve_on_deactivate, p.accounting), (1000, true, Accounting::Exact));
    assert!(CreditParams::from_value(&serde_json::json!({"version": "2.0"})).is_err());
}

/// Burning is exact: 3.35 ms of CPU costs 33 credits and carries 0.5 credit of residual.
#[test]
fn burn_carries_residual() {
    let info = doms(&[(256, 0, 1)]);
    let mut c = Credit::new(&Value::Null, 1, &info).unwrap();
    c.burn(VcpuId(0), Nanos(3_350_000));
    assert_eq!(c.credit(VcpuId(0)), -33);
    c.burn(VcpuId(0), Nanos(3_400_000));
    assert_eq!(c.credit(VcpuId(0)), -34);
}

/// A woken UNDER vCPU is boosted and preempts a running UNDER one; without BOOST it queues behind it.
#[test]
fn boost_preempts_only_when_enabled() {
    for (boost, preempts) in [(true, true), (false, false)] {
        let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 1)], 1, &serde_json::json!({ "boost": boost }));
        // The running vCPU is UNDER: only a BOOSTed waker outranks it.
        c.vcpus[0].pri = PRI_UNDER;
        h.running[0] = Some(VcpuId(0));
        c.wake(VcpuId(1), WakeCause::NetRx { port: 0 }, &mut h.ctx(Nanos(1)));
        assert_eq!(h.actions.contains(&Action::Resched(PcpuId(0))), preempts);
        assert_eq!(c.pri(VcpuId(1)) == PRI_BOOST, boost);
    }
}

/// An idle pCPU steals a queued UNDER vCPU from a busy peer.
#[test]
fn idle_pcpu_steals() {
    let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 1), (256, 0, 1)], 2, &Value::Null);
    h.running[0] = Some(VcpuId(0));
    c.runq_insert(PcpuId(0), VcpuId(1));
    let d = c.do_schedule(PcpuId(1), None, false, &mut h.ctx(Nanos(5)));
    assert_eq!(d.next, Some(VcpuId(1)));
    let why = h.pick_text();
    assert_eq!(why, "idle; runs v1 (UNDER, 0 cr): stolen from pCPU0 (IDLE here)");
    assert!(c.runqueue(PcpuId(0)).is_empty());
}

/// Load balancing visits the peers from the immediate neighbour on (3.x-4.8 `csched_load_balance`).
#[test]
fn steal_starts_at_the_next_pcpu() {
    let (mut h, mut c) = credit_on(&[(256, 0, 1); 5], 3, &Value::Null);
    h.running[0] = Some(VcpuId(0));
    h.running[2] = Some(VcpuId(2));
    c.runq_insert(PcpuId(0), VcpuId(3));
    c.runq_insert(PcpuId(2), VcpuId(4));
    let d = c.do_schedule(PcpuId(1), None, false, &mut h.ctx(Nanos(5)));
    let why = h.pick_text();
    assert_eq!(d.next, Some(VcpuId(4)), "{why}");
    assert!(why.contains("stolen from pCPU2"), "{why}");
}

/// 3.x accounts in the master's every third tick (`csched_tick`); 4.x on its own master timer, with ticks that
/// stop while idle.
#[test]
fn accounting_runs_on_the_master() {
    let info = doms(&[(256, 0, 1), (256, 0, 1)]);
    let mut h = Harness::new(info.clone(), 2);
    let mut c = Credit::new(&Value::Null, 2, &info).unwrap();
    let t = c.timers();
    assert!(t.account.is_none() && !t.tick_stops_idle && t.tick == Some(Nanos::from_ms(10)));
    h.running[0] = Some(VcpuId(0));
    for k in 1..=6 {
        c.tick(PcpuId(1), &mut h.ctx(Nanos::from_ms(10 * k)));
    }
    assert_eq!(c.epoch, 0, "a pCPU other than the master never accounts");
    for k in 1..=6 {
        c.tick(PcpuId(0), &mut h.ctx(Nanos::from_ms(10 * k)));
        assert_eq!(c.epoch, k / 3, "after {k} master ticks");
    }
    let c4 = Credit::new(&serde_json::json!({ "version": "4.x" }), 2, &info).unwrap();
    let t = c4.timers();
    assert_eq!(t.account, Some(Nanos::from_ms(30)));
    assert!(t.tick_stops_idle);
}

/// An I/O vCPU off the active list (it parked its credit) runs into debt unseen and comes back OVER, as Xen
/// does. Exact accounting (credit.c `burn_credits`, called from `csched_schedule` for whatever vCPU ran; paper
/// 000's modified 3.2 and Xen from 2009) charges it on every deschedule, while `csched_acct` walks only the
/// active list, so it keeps its UNDER priority and keeps being BOOSTed when woken. Once a tick finds it running,
/// `csched_vcpu_acct` puts it back on the active list; the next accounting sees the debt and makes it OVER, and
/// `csched_vcpu_wake` boosts only UNDER, so woken it queues behind a running UNDER vCPU. Stock 3.2's tick
/// sampling gets there too: the tick charges it a whole tick (100 credits). This is Table 1's dom0 stall.
#[test]
fn inactive_vcpu_runs_into_debt_and_comes_back_over() {
    for (accounting, debt) in [("exact", -200), ("tick", -100)] {
        // The I/O vCPU and five CPU-bound ones of equal weight: its fair share is 300 / 6 = 50 per period.
        let (mut h, mut c) = credit_on(
            &[(256, 0, 1), (256, 0, 1), (256, 0, 1), (256, 0, 1), (256, 0, 1), (256, 0, 1)],
            1,
            &serde_json::json!({ "accounting": accounting }),
        );
        let (io, busy, p) = (VcpuId(0), VcpuId(1), PcpuId(0));
        for v in 1..6 {
            c.acct_start(VcpuId(v));
        }
        h.running[0] = Some(busy);
        let mut t = Nanos::from_ms(1);
        // 100 wake-ups of 200 us each (20 ms of CPU), none of them caught by a tick.
        for k in 0..100 {
            h.actions.clear();
            c.wake(io, WakeCause::Backend(BackendWork::NetRx), &mut h.ctx(t));
            assert_eq!(c.pri(io), PRI_BOOST, "woken {k}: still UNDER, so boosted");
            assert!(h.actions.contains(&Action::Resched(p)));
            assert_eq!(c.do_schedule(p, Some(busy), true, &mut h.ctx(t)).next, Some(io));
            h.running[0] = Some(io);
            t += Nanos::from_us(200);
            assert_eq!(c.do_schedule(p, Some(io), false, &mut h.ctx(t)).next, Some(busy));
            h.running[0] = Some(busy);
            if k == 50 {
                let before = c.credit(io);
                c.account(&mut h.ctx(t));
                assert_eq!(c.credit(io), before, "accounting does not credit an inactive vCPU");
            }
            t += Nanos::from_ms(1);
        }
        let expect_burnt = if accounting == "exact" { -200 } else { 0 };
        assert_eq!(c.credit(io), expect_burnt, "{accounting}");
        // The next wake-up is caught by a tick: back on the active list.
        c.wake(io, WakeCause::Backend(BackendWork::NetRx), &mut h.ctx(t));
        c.do_schedule(p, Some(busy), true, &mut h.ctx(t));
        h.running[0] = Some(io);
        c.tick(p, &mut h.ctx(t));
        assert!(c.vcpus[io.0].active);
        assert_eq!((c.credit(io), c.pri(io)), (debt, PRI_UNDER), "{accounting}");
        c.do_schedule(p, Some(io), false, &mut h.ctx(t));
        c.account(&mut h.ctx(t));
        assert!(c.credit(io) < 0 && c.pri(io) == PRI_OVER, "{accounting}: {}", c.credit(io));
        // Woken OVER: not boosted, it queues behind an UNDER vCPU instead of preempting it.
        let under = VcpuId(2);
        assert_eq!(c.pri(under), PRI_UNDER);
        h.running[0] = Some(under);
        h.actions.clear();
        c.wake(io, WakeCause::Backend(BackendWork::NetRx), &mut h.ctx(t + Nanos::from_ms(1)));
        assert_eq!(c.pri(io), PRI_OVER);
        assert!(!h.actions.contains(&Action::Resched(p)), "{accounting}");
    }
}

/// Priority inheritance is paper 000's Algorithm 2 and nothing more: an event from a guest to a driver-domain
/// vCPU of lower priority gives the driver the guest's priority and reinserts it (SendEvent); it gets its own
/// back when descheduled (VCPUSchedule). A guest at UNDER lifts nothing; a driver domain woken from blocking is
/// BOOSTed by Credit's wake rule and preempts the UNDER guest, which goes to the tail of UNDER (4.1.2's
/// anomaly, Fig. 14's receiver); KeepOnRunQ (4.2) puts it at the head instead.
#[test]
fn priority_inheritance_follows_algorithm_2() {
    for keep in [false, true] {
        let mut info = doms(&[(256, 0, 1), (256, 0, 1), (256, 0, 1), (256, 0, 1)]);
        info[0].is_driver = true;
        let (dom0, guest, busy, other, p) = (VcpuId(0), VcpuId(1), VcpuId(2), VcpuId(3), PcpuId(0));
        let mut h = Harness::new(info.clone(), 1);
        let params = serde_json::json!({"idd": {"priority_inheritance": true, "keep_on_runq": keep}});
        let mut c = Credit::new(&params, 1, &info).unwrap();
        let t = Nanos::from_ms(1);
        // dom0 waits at UNDER behind another UNDER vCPU; the guest, woken BOOST, runs and sends dom0 a request.
        c.runq_insert(p, other);
        c.runq_insert(p, dom0);
        h.running[0] = Some(busy);
        c.wake(guest, WakeCause::NetRx { port: 5001 }, &mut h.ctx(t));
        assert_eq!(c.do_schedule(p, Some(busy), true, &mut h.ctx(t)).next, Some(guest));
        h.running[0] = Some(guest);
        assert_eq!(c.runqueue(p), vec![other, dom0, busy]);
        h.actions.clear();
        c.event_sent(guest, dom0, &mut h.ctx(t));
        assert_eq!(c.pri(dom0), PRI_BOOST, "inherits BOOST");
        assert_eq!(c.runqueue(p), vec![dom0, other, busy], "reinserted at its inherited priority");
        assert!(!h.actions.contains(&Action::Resched(p)), "equal priority: the guest keeps running");
        // The guest blocks; dom0 runs next and blocks in turn: its own UNDER is back.
        assert_eq!(c.do_schedule(p, Some(guest), false, &mut h.ctx(t)).next, Some(dom0));
        h.running[0] = Some(dom0);
        assert_eq!(c.do_schedule(p, Some(dom0), false, &mut h.ctx(t)).next, Some(other));
        assert_eq!(c.pri(dom0), PRI_UNDER);
        h.running[0] = Some(other);
        // The guest wakes BOOSTed, preempts, and a tick demotes it while it still runs.
        c.wake(guest, WakeCause::NetRx { port: 5001 }, &mut h.ctx(t));
        assert_eq!(c.do_schedule(p, Some(other), true, &mut h.ctx(t)).next, Some(guest));
        h.running[0] = Some(guest);
        c.tick(p, &mut h.ctx(t + Nanos::from_us(10)));
        assert_eq!(c.pri(guest), PRI_UNDER);
        // Its next request finds dom0 no lower than itself: nothing is inherited. Woken, dom0 is BOOSTed by
        // the wake rule and preempts the guest.
        h.actions.clear();
        let t2 = t + Nanos::from_us(20);
        c.event_sent(guest, dom0, &mut h.ctx(t2));
        assert_eq!(c.pri(dom0), PRI_UNDER);
        c.wake(dom0, WakeCause::Backend(BackendWork::NetTx), &mut h.ctx(t2));
        assert_eq!(c.pri(dom0), PRI_BOOST);
        assert!(h.actions.contains(&Action::Resched(p)));
        assert_eq!(c.do_schedule(p, Some(guest), true, &mut h.ctx(t2)).next, Some(dom0));
        let queue = if keep { vec![guest, busy, other] } else { vec![busy, other, guest] };
        assert_eq!(c.runqueue(p), queue, "keep_on_runq {keep}");
    }
}

/// Credit enforces caps at accounting: over any run of whole accounting periods starting at a boundary, a
/// capped domain uses at most its cap plus the one slice it may overrun before accounting parks it
/// (credit.c parks only in `csched_acct`).
fn assert_cap_respected(sim: &Simulation, sc: &Scenario) {
    let period = 30_000_000u64;
    let end = sim.end.0;
    for (d, dom) in sc.domains.iter().enumerate() {
        if dom.cap_pct == 0 {
            continue;
        }
        let cap = dom.cap_pct as f64 / 100.0;
        let slack = (period * u64::from(dom.vcpus)) as f64;
        let mut k = 0;
        while (k + 1) * period <= end {
            let a = k * period;
            let used = dom_cpu_in(sim, d, a, end - (end - a) % period) as f64;
            let span = ((end - a) - (end - a) % period) as f64;
            assert!(used <= cap * span + slack, "{} used {used} ns in {span} ns from {a}", dom.name);
            k += 1;
        }
    }
}

/// A host of CPU-bound domains for the fairness properties: `(vcpus, weight, cap per vCPU [%] or 0)` each, Credit
/// with `params`. Returns each domain's CPU share and Credit's entitlement for it: `csched_acct`'s, by the rule of
/// the release `params.version` names (4.x: weight times active vCPUs, `prv->weight += sdom->weight` per active
/// vCPU; 3.x and the default: the domain's weight once), water-filled, bounded by the vCPUs and the cap (under 4.x
/// it differs from the report's per-domain `fair_share` when domains have different vCPU counts).
fn credit_shares(pcpus: u64, doms: &[CpuDomain], seed: u64, params: Value) -> Vec<(f64, f64)> {
    let domains = hog_domains(doms.iter().map(|&(n, weight, cap)| (n, weight, cap * n)));
    let sc = scenario(json!({
        "schema": 1, "id": "fair", "title": "fair", "seed": seed, "duration_ms": 5000, "warmup_ms": 1000,
        "host": { "pcpus": pcpus }, "domains": domains,
        "policies": [{ "id": "p", "scheduler": "credit", "params": params.clone() }]
    }));
    let report = crate::report::run_scenario(&sc, &[], &RunOptions::default()).unwrap();
    let per_vcpu = crate::policy::credit::ShareRule::of(&params) == crate::policy::credit::ShareRule::VcpuWeight;
    let weights: Vec<u32> = doms.iter().map(|&(n, w, _)| if per_vcpu { w * n } else { w } as u32).collect();
    let bounds: Vec<f64> =
        doms.iter().map(|&(n, _, cap)| if cap == 0 { n as f64 } else { (cap * n) as f64 / 100.0 }).collect();
    let entitled = crate::metrics::fair_shares(pcpus as f64, &weights, &bounds);
    (0..doms.len())
        .map(|i| (report.runs[0]["domains"][format!("d{i}")]["cpu_share"].as_f64().unwrap(), entitled[i]))
        .collect()
}

proptest! {
    #![proptest_config(crate::sim::test_support::proptest_config(12))]

    /// Weights and caps, ceiling off (see `credit_ceiling_is_what_misses_weighted_shares` for weights alone).
    /// Finding: this does not hold on about 3 hosts in 100 (worst 0.17 when
    /// written): a capped domain's vCPUs are parked together once their debt passes the cap and unparked together
    /// with positive credit, so they come back as UNDER bursts that round-robin with uncapped UNDER vCPUs, and
    /// `csched_acct` hands the credit a capped domain cannot use only to the domains after it in its list (one
    /// pass; the reorder rotates it over periods). Both are Xen's code (credit.c `csched_acct`), not timing: the
    /// same hosts miss in lockstep. Kept, ignored, to run on demand (`cargo test -- --ignored`).
    #[test]
    #[ignore = "finding: with caps, Credit misses its entitlement by more than 0.05 on about 3 random hosts in 100"]
    fn credit_shares_fair_with_caps_without_the_ceiling(
        pcpus in 1u64..=8,
        doms in proptest::collection::vec((1u64..=4, 1u64..=1024, prop_oneof![Just(0u64), 10u64..=100]), 2..=4),
        seed in 0u64..1_000_000,
    ) {
        for (i, (share, fair)) in credit_shares(pcpus, &doms, seed, json!({ "credit_ceiling": false })).into_iter().enumerate() {
            prop_assert!((share - fair).abs() <= 0.05, "d{i}: cpu_share {share} against entitlement {fair} ({doms:?} on {pcpus} pCPUs)");
        }
    }
}

/// A CPU-bound domain of the fairness properties: (vCPUs, weight, cap per vCPU [%] or 0).
type CpuDomain = (u64, u64, u64);

/// `n` random hosts of CPU-bound domains, `(pcpus, [(vcpus, weight, cap per vCPU [%] or 0)], seed)`, drawn from a
/// fixed stream so that every run judges the same sample (the rates below are findings about that sample).
fn sample_hosts(n: usize, caps: bool) -> Vec<(u64, Vec<CpuDomain>, u64)> {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let cap = if caps { prop_oneof![Just(0u64), 10u64..=100].boxed() } else { Just(0u64).boxed() };
    let host = (1u64..=8, proptest::collection::vec((1u64..=4, 1u64..=1024, cap), 2..=4), 0u64..1_000_000);
    (0..n).map(|_| host.new_tree(&mut runner).unwrap().current()).collect()
}

/// Weights give their shares with pCPUs on their own clocks, except for what Credit's upper bound on credits
/// takes. On 200 random hosts of uncapped CPU-bound domains (1-8 pCPUs, 1-4 vCPUs each, weights 1-1024; 3.x and
/// 4.x rules in turn; Xen-like timing), a domain "misses" when its share is off its entitlement by more than 0.05
/// of the host over 4 s. With the bound switched off, misses are rare and small: two residual effects of Credit's
/// design remain (per-pCPU run queues: with one vCPU more than pCPUs, which vCPUs share a pCPU is placement, not
/// weight; the lower bound on credits: with tiny weights every vCPU sits at -1 slice, OVER, round-robin), 1-2 hosts
/// in 1,000 when measured (worst 0.078; in this sample one host, by 0.105: 8 vCPUs on 7 pCPUs). With the bound
/// (every Xen release) many more hosts miss, by up to half the host. The test fails if the ablated scheduler misses
/// on more than 1 host in 100, or if the bound stops mattering (with it, fewer than 5x the misses).
#[test]
fn credit_ceiling_is_what_misses_weighted_shares() {
    let (mut with, mut without, mut worst) = (0, 0, 0f64);
    for (k, (pcpus, doms, seed)) in sample_hosts(200, false).into_iter().enumerate() {
        let version = if k % 2 == 0 { "default" } else { "4.x" };
        // The default is 3.2 as paper 000 ran it (exact accounting); "3.2" would be stock 3.2's tick sampling.
        let rules = |ceiling: bool| {
            let mut p = json!({ "credit_ceiling": ceiling });
            if version != "default" {
                p["version"] = json!(version);
            }
            p
        };
        let miss = |params: Value| {
            credit_shares(pcpus, &doms, seed, params)
                .iter()
                .map(|&(share, fair)| (share - fair).abs())
                .fold(0f64, f64::max)
        };
        if miss(rules(true)) > 0.05 {
            with += 1;
        }
        let off = miss(rules(false));
        worst = worst.max(off);
        if off > 0.05 {
            without += 1;
            eprintln!("ceiling off, {version}: misses by {off:.3} on {doms:?}, {pcpus} pCPUs, seed {seed}");
        }
    }
    eprintln!("{with} of 200 hosts miss with the ceiling, {without} without it (worst {worst:.3})");
    assert!(without <= 2, "without the ceiling: {without} of 200 hosts miss, worst {worst}");
    assert!(with >= 5 * without.max(1), "with the ceiling only {with} of 200 hosts miss (without: {without})");
}

/// What the upper bound on credits costs (the finding behind the property above): one vCPU of weight 1024 beside
/// six of weight 64 on one pCPU is entitled to 1024/1088 = 0.941 of it under 3.x's rule (domain weights) and
/// 1024/1408 = 0.727 under 4.x's (weight x vCPUs). Under Xen's rules it waits in UNDER's round-robin behind the
/// crowd, which the negative balance keeps UNDER; its credit passes a slice, it leaves the active list (its weight
/// with it) and its credit is cut, so the next periods' credit goes to the crowd. It gets about two thirds under
/// 3.x (0.67 when written) and a quarter under 4.x, short of its entitlement by more than a fifth of the host;
/// without the bound, its entitlement.
#[test]
fn credit_ceiling_costs_weighted_shares() {
    let doms = [(1, 1024, 0), (6, 64, 0)];
    for (version, entitled) in [("3.2", 0.941), ("4.x", 0.727)] {
        let with = credit_shares(1, &doms, 1, json!({ "version": version }));
        let without = credit_shares(1, &doms, 1, json!({ "version": version, "credit_ceiling": false }));
        assert!((with[0].1 - entitled).abs() < 0.001, "entitlement {}", with[0].1);
        assert!(with[0].1 - with[0].0 > 0.2, "{version}: with the ceiling the heavy vCPU gets {}", with[0].0);
        assert!(
            // 0.02: under 3.x's rule the crowd's six vCPUs share 18 credits a period, less than their floor
            // of -1 slice lets them owe, and get 0.045 of the 0.059 entitled (0.955 for the heavy one).
            (without[0].0 - without[0].1).abs() < 0.02,
            "{version}: without it {} of {}",
            without[0].0,
            without[0].1
        );
    }
}

#[test]
fn caps_hold_over_accounting_windows() {
    for pcpus in [1, 2] {
        let sc = scenario(json!({
            "schema": 1, "id": "cap", "title": "cap", "seed": 3, "duration_ms": 6000,
            "host": { "pcpus": pcpus },
            "domains": [
                { "name": "c20", "cap_pct": 20, "tasks": [cpu_task("a")] },
                { "name": "c50", "cap_pct": 50, "vcpus": 2, "tasks": [cpu_task("a"), cpu_task("b")] },
                { "name": "free", "tasks": [cpu_task("a")] }
            ],
            "policies": [{ "id": "p", "scheduler": "credit" }]
        }));
        let sim = run(&sc, "p");
        assert_cpu_conserved(&sim);
        assert_no_double_running(&sim);
        assert_cap_respected(&sim, &sc);
    }
}
