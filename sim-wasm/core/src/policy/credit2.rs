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
//!
//! Caps (Xen 4.10+): a domain with `cap_pct` has a budget pool of `cap_pct`% of a 10 ms period
//! (CSCHED2_BDGT_REPL_PERIOD), refilled at most to that every period by the domain's own timer
//! (`replenish_domain_budget`). A capped vCPU about to run takes a quota from the pool, its share of the budget
//! (`unit_grab_budget`), burns it as it runs, runs no longer than it holds (`csched2_runtime`), and puts back what
//! is left when it stops (`unit_return_budget`). One that finds the pool empty is parked (paused) until a
//! replenishment or a returned quota unparks it (`park_unit`, `unpark_parked_units`).

use super::common::{EarliestTimer, Versions};
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
/// Period of a capped domain's budget replenishment (CSCHED2_BDGT_REPL_PERIOD, `credit2_cap_period_ms` 10) [ns].
pub const BDGT_REPL_PERIOD: u64 = 10_000_000;

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
    /// Scheduling granularity (Xen's `sched-gran`, 4.13+): "cpu" schedules each hardware thread on its own; "core"
    /// (or "socket") makes all threads of a core (socket) one unit that only runs vCPUs of one domain at a time,
    /// leaving threads idle when that domain has too few runnable vCPUs. Needs host.threads_per_core above 1 to
    /// matter. Fixed at boot.
    #[serde(skip_serializing_if = "super::gran::Gran::is_cpu")]
    pub sched_gran: super::gran::Gran,
}

impl Default for Credit2Params {
    /// Current Xen's.
    fn default() -> Credit2Params {
        Credit2Params {
            ratelimit_us: 1000,
            max_timer_us: 10_000,
            migrate_resist_us: 500,
            runqueue_pcpus: 0,
            sched_gran: Default::default(),
        }
    }
}

impl Params for Credit2Params {
    const SCHEDULER: &'static str = "credit2";
    const DEF: &'static str = "credit2_params";
    const FIXED: &'static [&'static str] = &["sched_gran"];
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
    /// Budget taken from its domain's pool and not yet used, when the domain is capped [ns].
    budget: i64,
    /// What it takes from the pool at a time: the domain's budget over its vCPUs, at least MIN_TIMER [ns].
    budget_quota: i64,
    /// Paused for want of budget.
    parked: bool,
}

/// A capped domain's budget pool (`struct csched2_dom`).
#[derive(Debug, Clone)]
struct CapPool {
    /// Budget per period: `cap_pct`% of BDGT_REPL_PERIOD [ns].
    tot_budget: i64,
    /// Budget left in the pool [ns].
    budget: i64,
    /// When the next replenishment is due [ns].
    next_repl: u64,
    /// Its vCPUs parked for want of budget, most recent first.
    parked: Vec<VcpuId>,
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
    /// Each domain's budget pool; None = uncapped.
    caps: Vec<Option<CapPool>>,
    dom_of: Vec<usize>,
    /// The replenishment timer.
    timer: EarliestTimer,
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
        let mut dom_of = Vec::with_capacity(nv);
        let mut caps = Vec::with_capacity(domains.len());
        for (i, d) in domains.iter().enumerate() {
            // `csched2_dom_cntl`: the pool starts full, its first replenishment one period after the cap is set.
            let tot_budget = (BDGT_REPL_PERIOD * u64::from(d.cap_pct) / 100) as i64;
            let quota = (tot_budget / d.vcpus.len().max(1) as i64).max(MIN_TIMER.0 as i64);
            caps.push((d.cap_pct > 0).then(|| CapPool {
                tot_budget,
                budget: tot_budget,
                next_repl: BDGT_REPL_PERIOD,
                parked: Vec::new(),
            }));
            for _ in &d.vcpus {
                dom_of.push(i);
                vcpus.push(C2Vcpu {
                    weight: u64::from(d.weight.max(1)),
                    credit: CREDIT_INIT,
                    rq: 0,
                    processor: PcpuId(0),
                    on_runq: false,
                    last_burn: Nanos::ZERO,
                    run_start: Nanos::ZERO,
                    budget: 0,
                    budget_quota: quota,
                    parked: false,
                });
            }
        }
        Ok(Credit2 {
            params,
            vcpus,
            rqs,
            rq_of,
            versions: Versions::new(pcpus),
            resets: 0,
            caps,
            dom_of,
            timer: EarliestTimer::default(),
        })
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
        let capped = self.capped(v);
        let c = &mut self.vcpus[v.0];
        c.credit = (c.credit - cost).max(CREDIT_MIN);
        c.last_burn = now;
        if capped {
            c.budget -= dt;
        }
    }

    fn capped(&self, v: VcpuId) -> bool {
        self.caps[self.dom_of[v.0]].is_some()
    }

    /// Budget a capped vCPU has left, as the views show it [ns] (tests).
    pub fn budget(&self, v: VcpuId) -> Option<i64> {
        self.capped(v).then(|| self.vcpus[v.0].budget)
    }

    /// `unit_grab_budget`: a capped vCPU without budget pays its overrun to its domain's pool and takes its quota
    /// (or what is left) from it; with none left it is parked. Whether it may run.
    fn grab_budget(&mut self, v: VcpuId, ctx: &mut Ctx) -> bool {
        let d = self.dom_of[v.0];
        let Some(pool) = self.caps[d].as_mut() else { return true };
        let c = &mut self.vcpus[v.0];
        if c.budget > 0 {
            return true;
        }
        pool.budget += c.budget;
        if pool.budget > 0 {
            let take = c.budget_quota.min(pool.budget);
            c.budget = take;
            pool.budget -= take;
            return true;
        }
        c.budget = 0;
        // `park_unit`: off the run queue, paused until a replenishment or a returned quota unparks it.
        c.parked = true;
        pool.parked.insert(0, v);
        if self.vcpus[v.0].on_runq {
            self.runq_remove(v);
        }
        ctx.pause(v);
        let name = &ctx.host.vcpu_name[v.0];
        ctx.note(self.vcpus[v.0].processor, |w| write!(w, "{name} parked: its domain's cap budget is used up"));
        false
    }

    /// `unit_return_budget`: a capped vCPU leaving its pCPU puts back the budget it did not use; if the pool then
    /// has some, the domain's parked vCPUs are unparked to compete for it.
    fn return_budget(&mut self, v: VcpuId, ctx: &mut Ctx) {
        let d = self.dom_of[v.0];
        let Some(pool) = self.caps[d].as_mut() else { return };
        let c = &mut self.vcpus[v.0];
        if c.budget <= 0 {
            return;
        }
        pool.budget += c.budget;
        c.budget = 0;
        if pool.budget > 0 {
            self.unpark(d, ctx);
        }
    }

    /// `unpark_parked_units`: every parked vCPU of the domain is unpaused (the engine wakes those with work).
    fn unpark(&mut self, d: usize, ctx: &mut Ctx) {
        let Some(pool) = self.caps[d].as_mut() else { return };
        for v in std::mem::take(&mut pool.parked) {
            self.vcpus[v.0].parked = false;
            ctx.unpause(v);
        }
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
        if self.capped(v) {
            self.timer.arm(BDGT_REPL_PERIOD, ctx);
        }
        p
    }

    fn wake(&mut self, v: VcpuId, _cause: WakeCause, ctx: &mut Ctx) {
        if self.vcpus[v.0].on_runq || self.vcpus[v.0].parked || ctx.host.running.contains(&Some(v)) {
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
        let mut cur_runnable = cur_runnable;
        if let Some(c) = cur {
            self.burn(c, now);
            // A capped vCPU that has used what it took needs more from the pool, or is parked.
            if cur_runnable && !self.grab_budget(c, ctx) {
                cur_runnable = false;
            }
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
        // A capped one must also get budget, the last test as in Xen since taking it has effects; one that gets
        // none is parked and leaves the queue.
        let mut pick = None;
        let mut i = 0;
        while let Some(&u) = self.rqs[rq].queue.get(i) {
            let credit = self.vcpus[u.0].credit;
            if kc.is_some_and(|k| self.vcpus[u.0].processor != p && credit <= k + resist) {
                i += 1;
                continue;
            }
            if kc.is_some_and(|k| credit <= k) {
                break;
            }
            if self.grab_budget(u, ctx) {
                pick = Some(u);
                break;
            }
        }
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
            next = self.pull(rq, ctx).filter(|&u| self.grab_budget(u, ctx));
            if let Some(u) = next {
                self.runq_remove(u);
                how = "pulled from a busier run queue";
            }
        }
        if let Some(c) = cur.filter(|&c| next != Some(c)) {
            // `csched2_context_saved`: what it took and did not use goes back to the pool.
            self.return_budget(c, ctx);
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
        let mut time = if rt_credit <= 0 { 0 } else { self.credit_to_time(n, rt_credit) };
        if let Some(b) = self.budget(n) {
            // Capped: never longer than the budget it holds.
            time = time.min(b.max(0) as u64);
        }
        let mut slice = Nanos(time).max(MIN_TIMER).min(max_timer);
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

    /// `replenish_domain_budget` of every capped domain whose period is over: the pool gets a period's budget
    /// (more if replenishments were missed), at most that much, and if it has some its parked vCPUs are unparked.
    fn timer(&mut self, ctx: &mut Ctx) {
        let now = ctx.now.0;
        self.timer.fired(now);
        let mut next = None::<u64>;
        for d in 0..self.caps.len() {
            let Some(pool) = self.caps[d].as_mut() else { continue };
            if pool.next_repl <= now {
                while pool.next_repl <= now {
                    pool.next_repl += BDGT_REPL_PERIOD;
                    pool.budget += pool.tot_budget;
                }
                if pool.budget > 0 {
                    pool.budget = pool.budget.min(pool.tot_budget);
                    self.unpark(d, ctx);
                }
            }
            let at = self.caps[d].as_ref().map_or(u64::MAX, |c| c.next_repl);
            next = Some(next.map_or(at, |n| n.min(at)));
        }
        if let Some(at) = next {
            self.timer.arm(at, ctx);
        }
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        if param == "runqueue_pcpus" {
            return Err("credit2.runqueue_pcpus: the run-queue topology is fixed at boot".into());
        }
        self.params.set(param, value)
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let pri = if self.vcpus[v.0].parked {
            Pri::new(PriClass::Parked, "PARKED")
        } else {
            Pri::new(PriClass::Other, "CREDIT")
        };
        VcpuSched { pri, credit: Some(self.vcpus[v.0].credit / 1000) }
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
crate::size::heap_size!(CapPool { parked });
crate::size::heap_size!(RunQueue { pcpus, queue, members });
crate::size::heap_size!(Credit2 { vcpus, rqs, rq_of, versions, caps, dom_of });

/// Credit2's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "credit2",
    caps: Caps::PLAIN,
    build: |s| super::gran::wrap(s, registry::boxed(Credit2::new(s.params, s.pcpus, s.domains))),
    check_param: |k, v| params::change(&mut Credit2Params::default(), k, v),
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

    /// A cap is a budget of cap_pct% of 10 ms refilled every 10 ms: a CPU-bound domain at cap 30 gets 0.30 of the
    /// pCPU beside a busy neighbour (0.5 without the cap); a two-vCPU domain at cap 60 on two pCPUs gets 0.6 of a
    /// pCPU in all, its vCPUs parked in turn once the pool is empty, and the neighbour the rest.
    #[test]
    fn credit2_caps_hold() {
        let sc = |n: u64, cap: u64, pcpus: u32| {
            scenario(json!({
                "schema": 1, "id": "cap", "title": "cap", "seed": 1, "duration_ms": 3000, "warmup_ms": 500,
                "host": { "pcpus": pcpus },
                "domains": hog_domains([(n, 256, cap), (n, 256, 0)].into_iter()),
                "policies": [{ "id": "p", "scheduler": "credit2" }]
            }))
        };
        let sim = run(&sc(1, 30, 1), "p");
        assert_invariants(&sim);
        let s = shares(&sim);
        assert!((s[0] - 0.30).abs() < 0.01 && (s[1] - 0.70).abs() < 0.01, "cap 30: {s:?}");
        let s = shares(&run(&sc(1, 0, 1), "p"));
        assert!((s[0] - 0.5).abs() < 0.01, "no cap: {s:?}");
        let sim = run(&sc(2, 60, 2), "p");
        assert_invariants(&sim);
        let s = shares(&sim);
        // Shares of the two-pCPU host: 0.3 is 0.6 of a pCPU.
        assert!((s[0] - 0.30).abs() < 0.01 && (s[1] - 0.70).abs() < 0.01, "cap 60 over two vCPUs: {s:?}");
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
