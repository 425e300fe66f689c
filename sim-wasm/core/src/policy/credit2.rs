//! Xen's Credit2 scheduler (`xen/common/sched/credit2.c`; thesis 003, 3.2.6): credit burnt at a rate scaled by
//! weight, run queues sorted by credit, a credit reset when the best candidate has none left, wake-up tickling
//! of the pCPU running the lowest-credit vCPU, a rate limit, and load balancing between run queues.
//!
//! Credit is kept in nanoseconds of CPU. A vCPU burns `elapsed x max_weight / weight` of it (the heaviest vCPU of
//! its run queue burns at wall-clock rate), so between resets a vCPU of twice the weight runs twice as long:
//! shares are proportional to weight. There is no BOOST: a waking vCPU keeps the credit it has, and since an
//! I/O-bound vCPU burns little it usually has more than the CPU-bound ones and preempts them.
//!
//! Topology: one run queue per `runqueue_pcpus` consecutive pCPUs (0 = one for the whole host, Xen's one per
//! socket on a single-socket machine). A waking vCPU joins the least loaded run queue (`csched2_cpu_pick`).
//! Between run queues, at each credit reset the queue compares its load
//! (runnable vCPUs) with the lightest one and, if it has two or more more, hands its lowest-credit waiting vCPU
//! over (credit2.c's `balance_load`, simplified to counts instead of decaying load averages); an idle pCPU whose
//! own queue is empty also pulls the best waiting vCPU of the longest other queue.

use super::common::Versions;
use super::params::{self, Params};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, ShareBasis, Timers, VcpuSched, WakeCause};
use crate::model::{PcpuId, VcpuId};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::time::Nanos;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;

/// Credit given at each reset (CSCHED2_CREDIT_INIT) [ns].
pub const CREDIT_INIT: i64 = 10_000_000;
/// Lowest credit a vCPU can fall to (CSCHED2_CREDIT_MIN) [ns].
pub const CREDIT_MIN: i64 = -10_000_000;
/// Credit kept over a reset beyond CREDIT_INIT (CSCHED2_CARRYOVER_MAX) [ns].
pub const CARRYOVER_MAX: i64 = 500_000;
/// Shortest slice (CSCHED2_MIN_TIMER) [ns].
pub const MIN_TIMER: Nanos = Nanos::from_us(500);

/// Xen Credit2 (thesis 003 3.2.6; xen/common/sched/credit2.c). Credit in ns of CPU, burnt at max_weight/weight
/// of wall time; reset to +10 ms when the best candidate has none left; no BOOST; a woken vCPU preempts the pCPU
/// running the vCPU with the least credit.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Credit2Params {
    /// A running vCPU keeps its pCPU at least this long [us]; 0 = off (Xen 4.8+: 1000; Credit2 had none in Xen
    /// 4.4).
    #[schemars(range(min = 0, max = 500_000))]
    pub ratelimit_us: u64,
    /// Longest slice [us] (CSCHED2_MAX_TIMER): 10000 since Xen 4.8, 2000 before (the thesis ran Xen 4.4.1).
    #[schemars(range(min = 500, max = 1_000_000))]
    pub max_timer_us: u64,
    /// Credit lead a vCPU that last ran on another pCPU needs to be taken or to preempt there [us]
    /// (CSCHED2_MIGRATE_RESIST).
    #[schemars(range(min = 0, max = 100_000))]
    pub migrate_resist_us: u64,
    /// pCPUs per run queue; 0 = one run queue for the host (Xen's one per socket on one socket). A waking vCPU
    /// joins the least loaded run queue. Between run queues: at each credit reset a queue with two or more
    /// runnable vCPUs more than the lightest hands it its lowest-credit waiting vCPU; an idle pCPU with an empty
    /// queue pulls the best waiting vCPU of the longest other queue.
    #[schemars(range(min = 0, max = 256))]
    pub runqueue_pcpus: u64,
}

impl Default for Credit2Params {
    /// Current Xen's.
    fn default() -> Credit2Params {
        Credit2Params { ratelimit_us: 1000, max_timer_us: 10_000, migrate_resist_us: 500, runqueue_pcpus: 0 }
    }
}

impl Params for Credit2Params {
    const SCHEDULER: &'static str = "credit2";
    const DEF: &'static str = "credit2_params";
}

impl Credit2Params {
    pub fn from_value(v: &Value) -> Result<Credit2Params, String> {
        params::from_value(v)
    }

    pub fn set(&mut self, param: &str, v: &Value) -> Result<(), String> {
        params::set(self, param, v)
    }
}

#[derive(Debug, Clone)]
struct C2Vcpu {
    weight: u64,
    /// Remaining credit [ns].
    credit: i64,
    rq: usize,
    processor: PcpuId,
    on_runq: bool,
    last_burn: Nanos,
    run_start: Nanos,
}

#[derive(Debug, Clone, Default)]
struct RunQueue {
    pcpus: Vec<PcpuId>,
    /// Waiting vCPUs, most credit first, FIFO among equals.
    queue: Vec<VcpuId>,
    /// Every vCPU assigned to this run queue (running, waiting or blocked): all take part in a reset.
    members: Vec<VcpuId>,
    max_weight: u64,
}

#[derive(Clone)]
pub struct Credit2 {
    params: Credit2Params,
    vcpus: Vec<C2Vcpu>,
    rqs: Vec<RunQueue>,
    rq_of: Vec<usize>,
    versions: Versions,
    resets: u64,
}

impl Credit2 {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Credit2, String> {
        let params = Credit2Params::from_value(params)?;
        let per = if params.runqueue_pcpus == 0 { pcpus } else { (params.runqueue_pcpus as usize).min(pcpus) };
        let nrq = pcpus.div_ceil(per.max(1));
        let mut rqs = vec![RunQueue::default(); nrq];
        let rq_of: Vec<usize> = (0..pcpus).map(|p| p / per.max(1)).collect();
        for p in 0..pcpus {
            rqs[rq_of[p]].pcpus.push(PcpuId(p));
        }
        let nv: usize = domains.iter().map(|d| d.vcpus.len()).sum();
        let mut vcpus = Vec::with_capacity(nv);
        for d in domains {
            for _ in &d.vcpus {
                vcpus.push(C2Vcpu {
                    weight: u64::from(d.weight.max(1)),
                    credit: CREDIT_INIT,
                    rq: 0,
                    processor: PcpuId(0),
                    on_runq: false,
                    last_burn: Nanos::ZERO,
                    run_start: Nanos::ZERO,
                });
            }
        }
        Ok(Credit2 { params, vcpus, rqs, rq_of, versions: Versions::new(pcpus), resets: 0 })
    }

    /// Credit of a vCPU [ns] (tests).
    pub fn credit(&self, v: VcpuId) -> i64 {
        self.vcpus[v.0].credit
    }

    /// Credit resets so far.
    pub fn resets(&self) -> u64 {
        self.resets
    }

    fn touch_rq(&mut self, rq: usize) {
        for i in 0..self.rqs[rq].pcpus.len() {
            let p = self.rqs[rq].pcpus[i];
            self.versions.touch(p);
        }
    }

    fn recompute_max_weight(&mut self, rq: usize) {
        self.rqs[rq].max_weight = self.rqs[rq].members.iter().map(|v| self.vcpus[v.0].weight).max().unwrap_or(1);
    }

    /// Charges the CPU used since the last burn, scaled by weight (credit.c's `burn_credits` / `t2c_update`).
    fn burn(&mut self, v: VcpuId, now: Nanos) {
        let c = &self.vcpus[v.0];
        let dt = now.saturating_sub(c.last_burn).0 as i64;
        let max_w = self.rqs[c.rq].max_weight as i64;
        let cost = dt * max_w / c.weight as i64;
        let c = &mut self.vcpus[v.0];
        c.credit = (c.credit - cost).max(CREDIT_MIN);
        c.last_burn = now;
    }

    /// Credit in time this vCPU can run for (`c2t`) [ns].
    fn credit_to_time(&self, v: VcpuId, credit: i64) -> u64 {
        let c = &self.vcpus[v.0];
        (credit.max(0) as u64).saturating_mul(c.weight) / self.rqs[c.rq].max_weight.max(1)
    }

    fn runq_insert(&mut self, v: VcpuId) {
        let rq = self.vcpus[v.0].rq;
        let credit = self.vcpus[v.0].credit;
        let q = &self.rqs[rq].queue;
        let pos = q.iter().position(|u| self.vcpus[u.0].credit < credit).unwrap_or(q.len());
        self.rqs[rq].queue.insert(pos, v);
        self.vcpus[v.0].on_runq = true;
        self.touch_rq(rq);
    }

    fn runq_remove(&mut self, v: VcpuId) {
        let rq = self.vcpus[v.0].rq;
        self.rqs[rq].queue.retain(|&u| u != v);
        self.vcpus[v.0].on_runq = false;
        self.touch_rq(rq);
    }

    /// Wake-up tickle (credit2.c `runq_tickle`): an idle pCPU of the run queue if there is one (the vCPU's own
    /// first), else the pCPU running the vCPU with the least credit, if the new one has more.
    fn tickle(&mut self, v: VcpuId, ctx: &mut Ctx) {
        let rq = self.vcpus[v.0].rq;
        let own = self.vcpus[v.0].processor;
        let pcpus = self.rqs[rq].pcpus.clone();
        let idle = std::iter::once(own)
            .filter(|p| pcpus.contains(p))
            .chain(pcpus.iter().copied())
            .find(|p| ctx.host.running[p.0].is_none());
        if let Some(p) = idle {
            ctx.resched(p);
            return;
        }
        let resist = Nanos::from_us(self.params.migrate_resist_us).0 as i64;
        let mut lowest: Option<(i64, PcpuId)> = None;
        for &p in &pcpus {
            let Some(cur) = ctx.host.running[p.0] else { continue };
            self.burn(cur, ctx.now);
            // Another pCPU than the vCPU's own must be worth the migration.
            let score = self.vcpus[cur.0].credit + if p == own { 0 } else { resist };
            if lowest.is_none_or(|(s, _)| score < s) {
                lowest = Some((score, p));
            }
        }
        if let Some((score, p)) = lowest {
            if self.vcpus[v.0].credit > score {
                let (a, b) =
                    (&ctx.host.vcpu_name[v.0], ctx.host.running[p.0].map(|c| ctx.host.vcpu_name[c.0].as_str()));
                ctx.note(p, |w| write!(w, "tickle: {a} has more credit than {}", b.unwrap_or_default()));
                ctx.resched(p);
            }
        }
    }

    /// Every member of the run queue gets CREDIT_INIT more (more than once if the chosen vCPU is deep in debt),
    /// clipped to CREDIT_INIT + CARRYOVER_MAX (credit2.c `reset_credit`).
    fn reset_credit(&mut self, rq: usize, snext: VcpuId) {
        let mut m = 1;
        if self.vcpus[snext.0].credit < -CREDIT_INIT {
            m += -self.vcpus[snext.0].credit / CREDIT_INIT;
        }
        for i in 0..self.rqs[rq].members.len() {
            let v = self.rqs[rq].members[i];
            let c = &mut self.vcpus[v.0];
            c.credit = (c.credit + m * CREDIT_INIT).min(CREDIT_INIT + CARRYOVER_MAX);
        }
        // The queue order is by credit: a uniform raise keeps it except where the clip equalised credits.
        let mut q = std::mem::take(&mut self.rqs[rq].queue);
        q.sort_by_key(|u| std::cmp::Reverse(self.vcpus[u.0].credit));
        self.rqs[rq].queue = q;
        self.resets += 1;
        self.touch_rq(rq);
    }

    fn load(&self, rq: usize, running: &[Option<VcpuId>]) -> usize {
        let r = &self.rqs[rq];
        r.queue.len() + r.pcpus.iter().filter(|p| running[p.0].is_some()).count()
    }

    /// Makes a vCPU that is on no queue a member of another run queue.
    fn move_member(&mut self, v: VcpuId, to: usize) {
        let from = self.vcpus[v.0].rq;
        self.rqs[from].members.retain(|&u| u != v);
        self.recompute_max_weight(from);
        self.vcpus[v.0].rq = to;
        self.vcpus[v.0].processor = self.rqs[to].pcpus[0];
        self.rqs[to].members.push(v);
        self.recompute_max_weight(to);
    }

    /// Moves a waiting vCPU to another run queue.
    fn migrate(&mut self, v: VcpuId, to: usize, ctx: &mut Ctx) {
        self.runq_remove(v);
        self.move_member(v, to);
        self.runq_insert(v);
        let name = &ctx.host.vcpu_name[v.0];
        ctx.note(self.rqs[to].pcpus[0], |w| write!(w, "balance: {name} moves to run queue {to}"));
    }

    /// credit2.c `balance_load`, on loads counted in runnable vCPUs: push one waiting vCPU to the lightest queue
    /// when this one has at least two more.
    fn balance_load(&mut self, rq: usize, ctx: &mut Ctx) {
        if self.rqs.len() < 2 {
            return;
        }
        let mine = self.load(rq, ctx.host.running);
        let Some((other, theirs)) =
            (0..self.rqs.len()).filter(|&o| o != rq).map(|o| (o, self.load(o, ctx.host.running))).min_by_key(|x| x.1)
        else {
            return;
        };
        if mine >= theirs + 2 {
            if let Some(&v) = self.rqs[rq].queue.last() {
                self.migrate(v, other, ctx);
                self.tickle(v, ctx);
            }
        }
    }

    /// An idle pCPU with an empty queue pulls the best waiting vCPU of the longest other run queue.
    fn pull(&mut self, rq: usize, ctx: &mut Ctx) -> Option<VcpuId> {
        let src = (0..self.rqs.len())
            .filter(|&o| o != rq && !self.rqs[o].queue.is_empty())
            .max_by_key(|&o| (self.rqs[o].queue.len(), std::cmp::Reverse(o)))?;
        let v = self.rqs[src].queue[0];
        self.migrate(v, rq, ctx);
        Some(v)
    }

    fn describe(&self, v: VcpuId, ctx: &Ctx) -> String {
        format!("{} (credit {} us)", ctx.name(v), self.vcpus[v.0].credit / 1000)
    }
}

impl Policy for Credit2 {
    fn timers(&self) -> Timers {
        Timers { timer_slop: true, ..Timers::default() }
    }

    fn init_vcpu(&mut self, v: VcpuId, ctx: &mut Ctx) -> PcpuId {
        let p = PcpuId(v.0 % ctx.host.pcpus.max(1));
        let rq = self.rq_of[p.0];
        self.vcpus[v.0].rq = rq;
        self.vcpus[v.0].processor = p;
        self.rqs[rq].members.push(v);
        self.recompute_max_weight(rq);
        p
    }

    fn wake(&mut self, v: VcpuId, _cause: WakeCause, ctx: &mut Ctx) {
        if self.vcpus[v.0].on_runq || ctx.host.running.contains(&Some(v)) {
            return;
        }
        // csched2_cpu_pick: a waking vCPU goes to the least loaded run queue (its own unless another is lighter).
        let own = self.vcpus[v.0].rq;
        let own_load = self.load(own, ctx.host.running);
        if let Some((best, load)) =
            (0..self.rqs.len()).filter(|&o| o != own).map(|o| (o, self.load(o, ctx.host.running))).min_by_key(|x| x.1)
        {
            if load < own_load {
                self.move_member(v, best);
                let name = &ctx.host.vcpu_name[v.0];
                ctx.note(self.rqs[best].pcpus[0], |w| write!(w, "{name} wakes on the lighter run queue {best}"));
            }
        }
        self.runq_insert(v);
        self.tickle(v, ctx);
    }

    fn sleep(&mut self, v: VcpuId, _ctx: &mut Ctx) {
        if self.vcpus[v.0].on_runq {
            self.runq_remove(v);
        }
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now;
        let rq = self.rq_of[p.0];
        self.touch_rq(rq);
        let ratelimit = Nanos::from_us(self.params.ratelimit_us);
        if let Some(c) = cur {
            self.burn(c, now);
            let ran = now.saturating_sub(self.vcpus[c.0].run_start);
            // A vCPU that migrated run queues while running goes on where it runs now.
            if cur_runnable && ratelimit > Nanos::ZERO && ran < ratelimit && self.vcpus[c.0].rq == rq {
                let reason = if ctx.explain {
                    format!("{} keeps pCPU{} (ratelimit: ran {} us)", self.describe(c, ctx), p.0, ran.0 / 1000)
                } else {
                    String::new()
                };
                return Pick { next: Some(c), slice: (ratelimit - ran).max(MIN_TIMER), reason };
            }
        }
        let keep = cur.filter(|&c| cur_runnable && self.vcpus[c.0].rq == rq);
        let resist = Nanos::from_us(self.params.migrate_resist_us).0 as i64;
        // runq_candidate: the first waiting vCPU with more credit than the current one; one that last ran on
        // another pCPU must lead by the migration resistance.
        let kc = keep.map(|c| self.vcpus[c.0].credit);
        let resisted =
            |u: &VcpuId| kc.is_some_and(|k| self.vcpus[u.0].processor != p && self.vcpus[u.0].credit <= k + resist);
        let pick = self.rqs[rq]
            .queue
            .iter()
            .copied()
            .find(|u| !resisted(u))
            .filter(|u| kc.is_none_or(|k| self.vcpus[u.0].credit > k));
        if let Some(c) = cur.filter(|_| cur_runnable) {
            if pick.is_some() || keep.is_none() {
                // The current vCPU waits again; an idle pCPU of its queue may take it.
                self.runq_insert(c);
                if self.vcpus[c.0].rq != rq || pick.is_some() {
                    let pcpus = self.rqs[self.vcpus[c.0].rq].pcpus.clone();
                    if let Some(&q) = pcpus.iter().find(|q| **q != p && ctx.host.running[q.0].is_none()) {
                        ctx.resched(q);
                    }
                }
            }
        }
        let mut next = match pick {
            Some(u) => {
                self.runq_remove(u);
                Some(u)
            }
            None => keep,
        };
        let mut how = "most credit in its run queue";
        if next.is_none() {
            next = self.pull(rq, ctx);
            if let Some(u) = next {
                self.runq_remove(u);
                how = "pulled from a busier run queue";
            }
        }
        let Some(n) = next else {
            let reason = if ctx.explain { format!("pCPU{} goes idle", p.0) } else { String::new() };
            return Pick { next: None, slice: Nanos::ZERO, reason };
        };
        let mut reset = false;
        if self.vcpus[n.0].credit <= 0 {
            self.reset_credit(rq, n);
            self.balance_load(rq, ctx);
            reset = true;
        }
        self.vcpus[n.0].processor = p;
        self.vcpus[n.0].last_burn = now;
        if cur != Some(n) {
            self.vcpus[n.0].run_start = now;
        }
        // csched2_runtime: run until the credit would fall to the next waiting vCPU's, within the timer bounds.
        let mut rt_credit = self.vcpus[n.0].credit;
        if let Some(&w) = self.rqs[rq].queue.first() {
            if self.vcpus[w.0].credit > 0 {
                rt_credit -= self.vcpus[w.0].credit;
            }
        }
        let max_timer = Nanos::from_us(self.params.max_timer_us);
        let mut slice = if rt_credit <= 0 {
            MIN_TIMER
        } else {
            Nanos(self.credit_to_time(n, rt_credit)).max(MIN_TIMER).min(max_timer)
        };
        if ratelimit > Nanos::ZERO {
            let ran = now.saturating_sub(self.vcpus[n.0].run_start);
            slice = slice.max(ratelimit.saturating_sub(ran));
        }
        let reason = if ctx.explain {
            let r = if reset { "; credit reset" } else { "" };
            format!("runs {}: {how}{r}", self.describe(n, ctx))
        } else {
            String::new()
        };
        Pick { next: Some(n), slice, reason }
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        if param == "runqueue_pcpus" {
            return Err("credit2.runqueue_pcpus: the run-queue topology is fixed at boot".into());
        }
        self.params.set(param, value)
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        VcpuSched { pri: Pri::new(PriClass::Other, "CREDIT"), credit: Some(self.vcpus[v.0].credit / 1000) }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        // A shared run queue is shown under its first pCPU.
        let rq = &self.rqs[self.rq_of[p.0]];
        if rq.pcpus.first() == Some(&p) {
            rq.queue.clone()
        } else {
            Vec::new()
        }
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }

    fn share_rule(&self) -> ShareBasis {
        // Each vCPU burns credit at max_weight / weight: weights count per vCPU.
        ShareBasis::VcpuWeight
    }
}

crate::size::no_heap!(C2Vcpu);
crate::size::heap_size!(RunQueue { pcpus, queue, members });
crate::size::heap_size!(Credit2 { vcpus, rqs, rq_of, versions });

/// Credit2's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "credit2",
    caps: Caps::PLAIN,
    build: |s| registry::boxed(Credit2::new(s.params, s.pcpus, s.domains)),
    check_param: |k, v| Credit2Params::default().set(k, v),
    check_scenario: registry::no_scenario_check,
    params: params::declared::<Credit2Params>(),
};

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sim::test_support::*;

    use serde_json::json;

    #[test]
    fn params_parse_and_reject() {
        let p = Credit2Params::from_value(&serde_json::json!({"max_timer_us": 2000, "ratelimit_us": 0})).unwrap();
        assert_eq!((p.max_timer_us, p.ratelimit_us), (2000, 0));
        let e = Credit2Params::from_value(&serde_json::json!({"tslice_ms": 5})).unwrap_err();
        assert!(e.contains("tslice_ms"), "{e}");
        let e = Credit2Params::from_value(&serde_json::json!({"max_timer_us": 1})).unwrap_err();
        assert!(e.contains("max_timer_us"), "{e}");
    }

    /// Credit2 honours weights: CPU-bound domains of weights 1:2:1:4 share one pCPU in proportion within 1.5
    /// points; on two pCPUs in one run queue within 3 points (the reset clips the credit of the vCPU running on the
    /// other pCPU to CREDIT_INIT + CARRYOVER_MAX, so the heaviest loses a little, as in Xen).
    #[test]
    fn credit2_weights_honoured() {
        for (pcpus, tol) in [(1, 0.015), (2, 0.03)] {
            let sim = run(&weighted_hogs("credit2", pcpus, json!({})), "p");
            assert_invariants(&sim);
            let s = shares(&sim);
            for (got, want) in s.iter().zip([0.125, 0.25, 0.125, 0.5]) {
                assert!((got - want).abs() < tol, "{pcpus} pCPU(s): shares {s:?}");
            }
        }
    }

    /// Credit2 with one run queue per pCPU: of two CPU-bound domains placed on pCPU0, the second wakes while
    /// pCPU1's queue is empty (the idle domain placed there never runs) and joins that lighter queue, so each gets a
    /// whole pCPU instead of half of pCPU0; the engine invariants hold.
    #[test]
    fn credit2_balances_between_run_queues() {
        let sc = scenario(json!({
            "schema": 1, "id": "rq", "title": "rq", "seed": 1, "duration_ms": 3000, "warmup_ms": 500,
            "host": { "pcpus": 2 },
            "domains": [
                { "name": "a", "tasks": [cpu_task("x")] }, { "name": "idle" }, { "name": "c", "tasks": [cpu_task("x")] }
            ],
            "policies": [{ "id": "p", "scheduler": "credit2", "params": { "runqueue_pcpus": 1 } }]
        }));
        let sim = run(&sc, "p");
        assert_invariants(&sim);
        let s = shares(&sim);
        assert!((s[0] - 0.5).abs() < 0.01 && (s[2] - 0.5).abs() < 0.01, "shares of the host {s:?}");
    }
}
