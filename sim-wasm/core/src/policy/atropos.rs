//! Atropos (Nemesis; Xen 2.0 `sched_atropos.c`; thesis 003, 3.2.2): each vCPU is guaranteed `slice` of CPU in
//! every `period`, scheduled earliest deadline first; one with no guaranteed time left waits for its next period
//! on a wait queue. Time nobody is guaranteed goes as slack in 5 ms best-effort quanta, round robin, to waiting
//! vCPUs that accept extra time (`xtratime`), those that blocked briefly with time left first. A vCPU that wakes
//! after a long block gets its period shortened to its latency hint (and the slice scaled alike), so it runs
//! within `latency`; the period and slice then double back to their natural values at each new period.
//!
//! Defaults as Xen set them: the driver domain 15 ms every 20 ms with a 5 ms latency hint; other domains
//! best effort (10 ms every 10 s, latency 10 s), all accepting extra time. A vCPU woken onto the run queue with a
//! deadline earlier than the running one's, or while the running one only has slack, preempts it (so the latency
//! hint bounds its wait). One queue pair per pCPU, no load balancing.

use super::common::{self, Versions};
use super::params::{self, Params};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, Timers, VcpuSched, WakeCause};
use crate::model::{PcpuId, VcpuId};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::time::Nanos;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;

/// Shortest allocation and the slack quantum (BESTEFFORT_QUANTUM) [ns].
pub const BESTEFFORT_QUANTUM: Nanos = Nanos::from_ms(5);
/// How long an idle pCPU with nothing waiting sleeps before looking again [ns].
const IDLE_RECHECK: Nanos = Nanos::from_ms(100);

/// A domain's reservation.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Reservation {
    /// Guaranteed CPU per period [ns].
    pub slice: Nanos,
    pub period: Nanos,
    /// Latency hint: the period used after a long block [ns].
    pub latency: Nanos,
    /// Accepts slack time.
    pub xtratime: bool,
}

impl Reservation {
    fn default_for(driver: bool) -> Reservation {
        if driver {
            Reservation {
                slice: Nanos::from_ms(15),
                period: Nanos::from_ms(20),
                latency: Nanos::from_ms(5),
                xtratime: true,
            }
        } else {
            Reservation {
                slice: Nanos::from_ms(10),
                period: Nanos::from_ms(10_000),
                latency: Nanos::from_ms(10_000),
                xtratime: true,
            }
        }
    }

    fn from(driver: bool, s: Option<&AtroposDomain>, name: &str) -> Result<Reservation, String> {
        let mut r = Reservation::default_for(driver);
        if let Some(s) = s {
            r.slice = s.slice_us.map_or(r.slice, Nanos::from_us);
            r.period = s.period_us.map_or(r.period, Nanos::from_us);
            r.latency = s.latency_us.map_or(r.latency, Nanos::from_us);
            r.xtratime = s.xtratime.unwrap_or(r.xtratime);
        }
        // at_adjdom's checks.
        if r.slice > r.period {
            return Err(format!("atropos.domains.{name}.slice_us: longer than the period"));
        }
        if r.latency > r.period {
            return Err(format!("atropos.domains.{name}.latency_us: longer than the period"));
        }
        Ok(r)
    }
}

/// Atropos (thesis 003 3.2.2; Xen 2.0 sched_atropos.c): slice per period by earliest deadline; slack in 5 ms
/// quanta round robin to domains with xtratime; after a long block the period shrinks to the latency hint.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct AtroposParams {
    /// Per-domain reservations by domain name.
    pub domains: IndexMap<String, AtroposDomain>,
}

impl Params for AtroposParams {
    const SCHEDULER: &'static str = "atropos";
    const DEF: &'static str = "atropos_params";
}

/// One domain's reservation; a key left out takes the default of its kind of domain.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(inline)]
pub struct AtroposDomain {
    /// Guaranteed CPU per period [us]. Defaults: driver domain 15000, others 10000.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 0, max = 3_600_000_000u64), extend("default" = 10000))]
    pub slice_us: Option<u64>,
    /// Period [us]. Defaults: driver domain 20000, others 10000000 (best effort).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 100, max = 3_600_000_000u64), extend("default" = 10_000_000))]
    pub period_us: Option<u64>,
    /// Latency hint [us]: after a long block the domain runs within this. Defaults: driver domain 5000, others
    /// 10000000.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 100, max = 3_600_000_000u64), extend("default" = 10_000_000))]
    pub latency_us: Option<u64>,
    /// Accepts slack (extra) time beyond its slice.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("default" = true))]
    pub xtratime: Option<bool>,
}

/// Checks a run-time change: Atropos has none besides the per-domain table fixed at boot.
pub fn check_param(param: &str, _v: &Value) -> Result<(), String> {
    Err(format!("atropos: '{param}' cannot change at run time (reservations are fixed at boot)"))
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum St {
    /// Guaranteed time left: on the run queue.
    Run,
    /// No guaranteed time left: on the wait queue until its deadline.
    Wait,
    /// Woke from a short block with time left: on the wait queue, first for slack.
    Unblocked,
    Blocked,
}

#[derive(Debug, Clone)]
struct AVcpu {
    res: Reservation,
    st: St,
    deadline: Nanos,
    prevddln: Nanos,
    /// Guaranteed time left this period [ns]; negative after an overrun.
    remain: i64,
    period: Nanos,
    slice: Nanos,
    processor: PcpuId,
    last_sched: Nanos,
    /// Chosen for slack (no deduction from `remain`).
    extra: bool,
}

#[derive(Clone)]
pub struct Atropos {
    vcpus: Vec<AVcpu>,
    runq: Vec<Vec<VcpuId>>,
    waitq: Vec<Vec<VcpuId>>,
    rrobin: Vec<usize>,
    versions: Versions,
}

impl Atropos {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Atropos, String> {
        let p: AtroposParams = params::from_value(params)?;
        if let Some(name) = p.domains.keys().find(|n| !domains.iter().any(|d| &&d.name == n)) {
            return Err(format!("atropos.domains.{name}: no domain named '{name}'"));
        }
        let place = common::spread(domains.iter().map(|d| d.vcpus.len()).sum(), pcpus);
        let mut vcpus = Vec::new();
        for info in domains {
            let res = Reservation::from(info.is_driver, p.domains.get(&info.name), &info.name)?;
            for v in &info.vcpus {
                vcpus.push(AVcpu {
                    res,
                    st: St::Blocked,
                    // Xen starts dom0 at once and other domains a period later.
                    deadline: if info.is_driver { Nanos::ZERO } else { res.period },
                    prevddln: Nanos::ZERO,
                    remain: if info.is_driver { res.slice.0 as i64 } else { 0 },
                    period: res.period,
                    slice: res.slice,
                    processor: place[v.0],
                    last_sched: Nanos::ZERO,
                    extra: false,
                });
            }
        }
        Ok(Atropos {
            vcpus,
            runq: vec![Vec::new(); pcpus],
            waitq: vec![Vec::new(); pcpus],
            rrobin: vec![0; pcpus],
            versions: Versions::new(pcpus),
        })
    }

    /// The reservation of a vCPU (tests).
    pub fn reservation(&self, v: VcpuId) -> Reservation {
        self.vcpus[v.0].res
    }

    fn dequeue(&mut self, v: VcpuId) {
        let p = self.vcpus[v.0].processor;
        self.runq[p.0].retain(|&u| u != v);
        self.waitq[p.0].retain(|&u| u != v);
        self.versions.touch(p);
    }

    /// Onto the queue its state says, in deadline order (FIFO among equal deadlines).
    fn requeue(&mut self, v: VcpuId) {
        let p = self.vcpus[v.0].processor;
        let d = self.vcpus[v.0].deadline;
        let q = match self.vcpus[v.0].st {
            St::Run => &mut self.runq[p.0],
            St::Wait | St::Unblocked => &mut self.waitq[p.0],
            St::Blocked => return,
        };
        let pos = q.iter().position(|u| self.vcpus[u.0].deadline > d).unwrap_or(q.len());
        q.insert(pos, v);
        self.versions.touch(p);
    }

    /// Waiting vCPUs whose deadline has passed start a new period with a new slice.
    fn refill(&mut self, p: PcpuId, now: Nanos) {
        while let Some(&v) = self.waitq[p.0].first() {
            if self.vcpus[v.0].deadline > now {
                break;
            }
            self.waitq[p.0].remove(0);
            let c = &mut self.vcpus[v.0];
            if c.period != c.res.period {
                // Parameters shortened by the latency hint double back towards the natural ones.
                c.slice = Nanos(c.slice.0 * 2);
                c.period = Nanos(c.period.0 * 2);
                if c.period > c.res.period {
                    c.period = c.res.period;
                    c.slice = c.res.slice;
                }
            }
            // Time left from a block cannot be trusted: a fresh slice; a debt is paid from the new one.
            c.remain = if c.remain > 0 { c.slice.0 as i64 } else { c.remain + c.slice.0 as i64 };
            c.prevddln = c.deadline;
            c.deadline += c.period;
            c.st = if c.remain > 0 { St::Run } else { St::Wait };
            self.requeue(v);
        }
    }
}

impl Policy for Atropos {
    fn timers(&self) -> Timers {
        Timers { timer_slop: true, ..Timers::default() }
    }

    fn init_vcpu(&mut self, v: VcpuId, _ctx: &mut Ctx) -> PcpuId {
        self.vcpus[v.0].processor
    }

    fn wake(&mut self, v: VcpuId, _cause: WakeCause, ctx: &mut Ctx) {
        let now = ctx.now;
        if self.vcpus[v.0].st != St::Blocked {
            return;
        }
        self.dequeue(v);
        let c = &mut self.vcpus[v.0];
        if c.deadline < now {
            // Long block: the period shrinks to the latency hint and the slice in proportion.
            c.prevddln = now;
            c.deadline = now + c.res.latency;
            let ratio = (c.res.period.0 / c.res.latency.0.max(1)).max(1);
            c.slice = Nanos(c.res.slice.0 / ratio);
            c.period = c.res.latency;
            c.remain = c.slice.0 as i64;
            c.st = if c.remain > 0 { St::Run } else { St::Wait };
        } else {
            c.st = if c.remain > 0 { St::Unblocked } else { St::Wait };
        }
        self.requeue(v);
        let p = self.vcpus[v.0].processor;
        match ctx.host.running[p.0] {
            None => ctx.resched(p),
            Some(cur) => {
                let (me, them) = (&self.vcpus[v.0], &self.vcpus[cur.0]);
                if me.st == St::Run && (them.extra || me.deadline < them.deadline) {
                    let (a, b) = (&ctx.host.vcpu_name[v.0], &ctx.host.vcpu_name[cur.0]);
                    ctx.note(p, |w| write!(w, "{a} wakes with guaranteed time before {b}'s deadline"));
                    ctx.resched(p);
                }
            }
        }
    }

    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        if ctx.host.running.contains(&Some(v)) {
            // Accounting happens in do_schedule, which the engine runs next.
            return;
        }
        self.dequeue(v);
        self.vcpus[v.0].st = St::Blocked;
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now;
        self.versions.touch(p);
        if let Some(c) = cur {
            self.dequeue(c);
            let s = &mut self.vcpus[c.0];
            let ran = now.saturating_sub(s.last_sched).0 as i64;
            if !s.extra {
                s.remain -= ran;
            }
            s.st = if !cur_runnable {
                St::Blocked
            } else if s.remain <= 0 {
                St::Wait
            } else {
                s.st
            };
            self.requeue(c);
        }
        self.refill(p, now);
        let mut pick = None;
        if let Some(&v) = self.runq[p.0].first() {
            pick = Some((v, Nanos(self.vcpus[v.0].remain.max(0) as u64), false, "earliest deadline"));
        } else if let Some(&v) = self.waitq[p.0].iter().find(|u| self.vcpus[u.0].st == St::Unblocked) {
            pick = Some((v, Nanos(self.vcpus[v.0].remain.max(0) as u64), false, "unblocked with time left"));
        } else {
            let n = self.waitq[p.0].len();
            if self.rrobin[p.0] >= n {
                self.rrobin[p.0] = 0;
            }
            let start = self.rrobin[p.0];
            let found = self.waitq[p.0].iter().enumerate().skip(start).find(|(_, u)| self.vcpus[u.0].res.xtratime);
            if let Some((i, &v)) = found {
                self.rrobin[p.0] = i + 1;
                pick = Some((v, BESTEFFORT_QUANTUM, true, "slack (extra time)"));
            }
        }
        let head_deadline = self.waitq[p.0].first().map(|u| self.vcpus[u.0].deadline);
        let Some((n, run, extra, how)) = pick else {
            let slice = head_deadline.map_or(IDLE_RECHECK, |d| d.saturating_sub(now)).max(Nanos(1));
            let reason = if ctx.explain { format!("pCPU{} idles until the next period", p.0) } else { String::new() };
            return Pick { next: None, slice, reason };
        };
        if !extra {
            // Taking an unblocked vCPU from the wait queue: it runs on its guaranteed time.
            self.waitq[p.0].retain(|&u| u != n);
            self.runq[p.0].retain(|&u| u != n);
        } else {
            self.waitq[p.0].retain(|&u| u != n);
        }
        let mut newtime = now + run;
        if let Some(d) = head_deadline {
            newtime = newtime.min(d);
        }
        newtime = newtime.max(now + BESTEFFORT_QUANTUM);
        let s = &mut self.vcpus[n.0];
        s.extra = extra;
        s.last_sched = now;
        let reason = if ctx.explain {
            format!("runs {}: {how} (deadline {} us)", ctx.name(n), self.vcpus[n.0].deadline.0 / 1000)
        } else {
            String::new()
        };
        Pick { next: Some(n), slice: newtime - now, reason }
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        check_param(param, value)
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let c = &self.vcpus[v.0];
        let pri = match c.st {
            St::Run => Pri::new(PriClass::Reserved, "RUN"),
            St::Wait => Pri::new(PriClass::Waiting, "WAIT"),
            St::Unblocked => Pri::new(PriClass::Waiting, "UNBLOCKED"),
            St::Blocked => Pri::new(PriClass::Blocked, "BLOCKED"),
        };
        VcpuSched { pri, credit: Some(c.remain / 1000) }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        self.runq[p.0].iter().chain(&self.waitq[p.0]).copied().collect()
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }

    fn timed_idle(&self) -> bool {
        true
    }
}

crate::size::no_heap!(AVcpu);
crate::size::heap_size!(Atropos { vcpus, runq, waitq, rrobin, versions });

/// Atropos's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "atropos",
    caps: Caps::PLAIN,
    build: |s| registry::boxed(Atropos::new(s.params, s.pcpus, s.domains)),
    check_param,
    check_scenario: registry::no_scenario_check,
    params: params::declared::<AtroposParams>(),
};

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sim::test_support::*;
    use crate::sim::timing::TIMER_SLOP;

    use serde_json::{json, Value};

    /// A file's reservations are checked against AtroposParams' declaration, then against the period.
    #[test]
    fn params_are_checked_by_their_declaration() {
        let doms = [DomainInfo {
            name: "a".into(),
            weight: 256,
            cap_pct: 0,
            vcpus: vec![VcpuId(0)],
            is_driver: true,
            backend_for: Vec::new(),
        }];
        let slice = |v: Value| Atropos::new(&v, 1, &doms).map(|a| a.vcpus[0].res.slice);
        assert_eq!(slice(json!({})).unwrap(), Nanos::from_ms(15));
        assert_eq!(slice(json!({"domains": {"a": {"slice_us": 2000}}})).unwrap(), Nanos::from_ms(2));
        assert_eq!(slice(json!({"domains": {"b": {}}})).unwrap_err(), "atropos.domains.b: no domain named 'b'");
        let long = json!({"domains": {"a": {"slice_us": 30000}}});
        assert_eq!(slice(long).unwrap_err(), "atropos.domains.a.slice_us: longer than the period");
        let e = slice(json!({"domains": {"a": {"period_us": 10}}})).unwrap_err();
        assert_eq!(e, "domains.a.period_us: expected an integer in 100..=3600000000, got 10");
        assert!(slice(json!({"quantum": 1})).unwrap_err().starts_with("unknown atropos parameter 'quantum'"));
    }

    /// Atropos meets reservations: a CPU-bound domain reserved 6 ms every 20 ms without extra time gets at least
    /// its slice in every period (its periods start at its first deadline, 20 ms), and no more than the 5 ms
    /// minimum allocation beyond it, beside CPU-bound domains that take the slack.
    #[test]
    fn atropos_reservation_met() {
        for (timing, slop) in [("lockstep", 0), ("xen", TIMER_SLOP.0)] {
            atropos_reservation_met_with(timing, slop);
        }
    }

    /// As Atropos' guarantee under one host timing: late timers move up to one slop of a slice across a period edge.
    fn atropos_reservation_met_with(timing: &str, slop: u64) {
        let sc = scenario(json!({
            "schema": 1, "id": "res", "title": "res", "seed": 2, "duration_ms": 2000,
            "host": { "pcpus": 1, "timing": timing },
            "domains": [
                { "name": "rt", "tasks": [cpu_task("x")] },
                { "name": "h1", "tasks": [cpu_task("x")] }, { "name": "h2", "tasks": [cpu_task("x")] }
            ],
            "policies": [{ "id": "p", "scheduler": "atropos", "params": { "domains": {
                "rt": { "slice_us": 6000, "period_us": 20000, "latency_us": 5000, "xtratime": false } } } }]
        }));
        let sim = run(&sc, "p");
        assert_invariants(&sim);
        let period = 20_000_000;
        for k in 1..(sim.end.0 / period) {
            let used = dom_cpu_in(&sim, 0, k * period, (k + 1) * period);
            assert!((6_000_000 - slop..=11_000_000 + slop).contains(&used), "{timing}: period {k}: {used} ns");
        }
        // The hogs share the slack.
        assert!(sim.measure.dom_metrics[1].cpu_ns > 500_000_000 && sim.measure.dom_metrics[2].cpu_ns > 500_000_000);
    }

    /// Atropos latency hint: a server domain that blocks for long wakes with its period cut to its latency hint and
    /// preempts the best-effort hogs, so it is served within about the hint (plus the driver's own turn).
    #[test]
    fn atropos_latency_hint_bounds_response() {
        let sc = scenario(json!({
            "schema": 1, "id": "lat", "title": "lat", "seed": 3, "duration_ms": 4000, "warmup_ms": 200,
            "host": { "pcpus": 1, "net": { "latency_us": 50, "mbps": 1000 } },
            "domains": [
                { "name": "dom0", "role": "driver", "costs": { "packet_us": 10 } },
                { "name": "web", "tasks": [server_task("srv", 80, [20, 60])] },
                { "name": "h1", "tasks": [cpu_task("x")] }, { "name": "h2", "tasks": [cpu_task("x")] }
            ],
            "policies": [{ "id": "p", "scheduler": "atropos", "params": { "domains": {
                "web": { "slice_us": 2000, "period_us": 20000, "latency_us": 2000 } } } }]
        }));
        let sim = run(&sc, "p");
        assert_invariants(&sim);
        let r = &sim.measure.dom_metrics[1].responses_ns;
        assert!(r.len() > 50);
        // Each request needs dom0 (latency 5 ms) twice and the server once (latency 2 ms).
        let p90 = crate::metrics::Summary::of(r).unwrap().p90;
        assert!(p90 < 20.0, "p90 {p90} ms");
    }
}
