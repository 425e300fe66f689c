//! Xen's RTDS scheduler (`xen/common/sched/rt.c`, Xen 4.5 and later; it replaced SEDF): preemptive global
//! earliest deadline first over per-vCPU (period, budget) servers.
//!
//! Each vCPU is a deferrable server: its budget is replenished to the full `budget` at the start of every period
//! (`rt_update_deadline`, run by one host-wide replenishment timer, `repl_timer_handler`) and its deadline is the
//! end of that period. It burns budget only while it runs (`burn_budget`); while it is blocked the budget is kept,
//! and a vCPU that wakes after its deadline passed starts the period the wake-up falls in with a full budget
//! (`rt_unit_wake`). One global run queue holds every waiting vCPU with budget, ordered by priority level, then
//! deadline (`compare_unit_priority`); a depleted queue holds those without. A pCPU runs the head of the run queue
//! unless what it runs has a higher priority (`rt_schedule`), for at most the budget left. A vCPU that wakes, or
//! that was preempted, kicks an idle pCPU, its own first, else the pCPU running the lowest-priority vCPU if it
//! outranks that one (`runq_tickle`).
//!
//! Extratime (`RTDS_extratime`, on by default): a vCPU that has used its budget gets a fresh one at the next
//! priority level down, so it runs only when no vCPU of a higher level wants the pCPU; a vCPU without extratime
//! waits on the depleted queue until its next period. Priority levels reset to 0 at each replenishment.
//!
//! Simplified, and why: every pCPU is in one pool and vCPUs have no hard affinity, so the `cpumask` tests of
//! `runq_pick` and `runq_tickle` always pass; the context switch is immediate here, so what `rt_context_saved`
//! does after it (requeue the previous vCPU and tickle for it) happens inside `do_schedule`.

use super::common::{EarliestTimer, Versions};
use super::params::{self, Params};
use super::registry::{self, Caps, Scheduler};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, ShareBasis, Timers, VcpuSched, WakeCause};
use crate::model::{DomId, PcpuId, VcpuId};
use crate::time::Nanos;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cmp::Ordering;
use std::fmt::Write;

/// Period of a vCPU not given one (RTDS_DEFAULT_PERIOD) [us].
pub const DEFAULT_PERIOD_US: u64 = 10_000;
/// Budget of a vCPU not given one (RTDS_DEFAULT_BUDGET) [us].
pub const DEFAULT_BUDGET_US: u64 = 4_000;

/// One domain's RTDS server, applied to each of its vCPUs (`xl sched-rtds -d NAME -p PERIOD -b BUDGET -e 0|1`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "rtds_domain")]
pub struct RtdsDomain {
    /// Period: the budget is replenished at each period boundary, and the boundary is the deadline [us]
    /// (Xen: at least 10 us, RTDS_MIN_PERIOD).
    #[schemars(range(min = 10, max = 3_600_000_000u64))]
    pub period_us: u64,
    /// CPU each vCPU may use in each period at its full priority [us] (Xen: at least 10 us, RTDS_MIN_BUDGET, and
    /// at most the period).
    #[schemars(range(min = 10, max = 3_600_000_000u64))]
    pub budget_us: u64,
    /// Once the budget is used, run on in time no reservation wants, at a lower priority level.
    pub extratime: bool,
}

impl Default for RtdsDomain {
    /// Xen's (`rt_alloc_udata`).
    fn default() -> RtdsDomain {
        RtdsDomain { period_us: DEFAULT_PERIOD_US, budget_us: DEFAULT_BUDGET_US, extratime: true }
    }
}

/// Xen's RTDS: global EDF over per-vCPU deferrable servers. Domains not named get Xen's defaults: 4 ms of budget
/// every 10 ms, with extratime. No admission control, as in Xen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RtdsParams {
    /// Servers by domain name.
    pub domains: IndexMap<String, RtdsDomain>,
    /// Scheduling granularity (Xen's `sched-gran`, 4.13+): "cpu" schedules each hardware thread on its own; "core"
    /// (or "socket") makes all threads of a core (socket) one unit that only runs vCPUs of one domain at a time,
    /// leaving threads idle when that domain has too few runnable vCPUs. Needs host.threads_per_core above 1 to
    /// matter. Fixed at boot.
    #[serde(skip_serializing_if = "super::gran::Gran::is_cpu")]
    pub sched_gran: super::gran::Gran,
}

impl Params for RtdsParams {
    const SCHEDULER: &'static str = "rtds";
    const DEF: &'static str = "rtds_params";
    const FIXED: &'static [&'static str] = &["sched_gran"];

    fn check(&self) -> Result<(), String> {
        for (name, d) in &self.domains {
            if d.budget_us > d.period_us {
                return Err(format!("domains.{name}.budget_us: the budget is longer than the period"));
            }
        }
        Ok(())
    }
}

impl RtdsParams {
    pub fn from_value(v: &Value) -> Result<RtdsParams, String> {
        params::from_value(v)
    }

    /// Checks a run-time change of `param` to `value`.
    pub fn check_change(param: &str, value: &Value) -> Result<(), String> {
        params::change(&mut RtdsParams::default(), param, value)
    }
}

/// Checks `params` against the scenario's domain names.
pub fn check_params(v: &Value, names: &[&str]) -> Result<(), String> {
    super::common::known_domains(RtdsParams::from_value(v)?.domains.keys(), names)
}

/// Which queue a vCPU waits on.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnQ {
    None,
    Run,
    Depleted,
}

/// Per-vCPU server (`struct rt_unit`); times are absolute or spans [ns].
#[derive(Debug, Clone)]
struct RtVcpu {
    dom: DomId,
    period: u64,
    budget: u64,
    extratime: bool,
    /// Budget left in this period at this priority level [ns].
    cur_budget: i64,
    /// End of the current period [ns].
    cur_deadline: u64,
    /// 0 while within the budget; one more for each budget used in extratime.
    level: u32,
    /// When it last started running or was last charged [ns].
    last_start: u64,
    /// Its pCPU (`sched_unit_master`): where it runs or last ran.
    processor: PcpuId,
    q: OnQ,
    /// Waiting for a replenishment (`replq`): runnable or running.
    on_replq: bool,
    /// Used its budget without extratime (`RTDS_depleted`).
    depleted: bool,
}

#[derive(Clone)]
pub struct Rtds {
    params: RtdsParams,
    vcpus: Vec<RtVcpu>,
    /// Waiting vCPUs with budget, highest priority first (`rt_priv->runq`).
    runq: Vec<VcpuId>,
    /// Waiting vCPUs without budget, unordered (`rt_priv->depletedq`).
    depletedq: Vec<VcpuId>,
    /// vCPUs due a replenishment, earliest deadline first (`rt_priv->replq`).
    replq: Vec<VcpuId>,
    /// pCPUs told to reschedule that have not yet (`rt_priv->tickled`).
    tickled: Vec<bool>,
    /// The replenishment timer.
    timer: EarliestTimer,
    versions: Versions,
    domains: Vec<DomainInfo>,
}

impl Rtds {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Rtds, String> {
        let params = RtdsParams::from_value(params)?;
        let nv: usize = domains.iter().map(|d| d.vcpus.len()).sum();
        let blank = RtVcpu {
            dom: DomId(0),
            period: 0,
            budget: 0,
            extratime: true,
            cur_budget: 0,
            cur_deadline: 0,
            level: 0,
            last_start: 0,
            processor: PcpuId(0),
            q: OnQ::None,
            on_replq: false,
            depleted: false,
        };
        let mut s = Rtds {
            params,
            vcpus: vec![blank; nv],
            runq: Vec::new(),
            depletedq: Vec::new(),
            replq: Vec::new(),
            tickled: vec![false; pcpus],
            timer: EarliestTimer::default(),
            versions: Versions::new(pcpus),
            domains: domains.to_vec(),
        };
        for (d, info) in domains.iter().enumerate() {
            for v in &info.vcpus {
                s.vcpus[v.0].dom = DomId(d);
            }
        }
        s.apply_params()?;
        Ok(s)
    }

    /// Installs each domain's server in its vCPUs (`rt_dom_cntl`'s putvcpuinfo): the new period and budget apply
    /// from the next replenishment; turning extratime on gives a depleted vCPU a budget at the next level.
    fn apply_params(&mut self) -> Result<(), String> {
        for name in self.params.domains.keys() {
            if !self.domains.iter().any(|d| &d.name == name) {
                return Err(format!("domains.{name}: no domain named '{name}' in this scenario"));
            }
        }
        for v in 0..self.vcpus.len() {
            let spec = self.params.domains.get(&self.domains[self.vcpus[v].dom.0].name).cloned().unwrap_or_default();
            let c = &mut self.vcpus[v];
            c.period = spec.period_us * 1000;
            c.budget = spec.budget_us * 1000;
            let gains = spec.extratime && !c.extratime && c.depleted;
            c.extratime = spec.extratime;
            if gains {
                c.level = c.level.saturating_add(1);
                c.cur_budget = c.budget as i64;
                c.depleted = false;
                if c.q != OnQ::None {
                    self.q_remove(VcpuId(v));
                    self.runq_insert(VcpuId(v));
                }
            }
        }
        self.versions.touch_all();
        Ok(())
    }

    /// Budget left in this period at this level [ns] (tests).
    pub fn budget_left(&self, v: VcpuId) -> i64 {
        self.vcpus[v.0].cur_budget
    }

    /// Priority level: 0 within the budget, one more per budget used in extratime (tests).
    pub fn level(&self, v: VcpuId) -> u32 {
        self.vcpus[v.0].level
    }

    /// `compare_unit_priority`: a lower level first, then an earlier deadline; `Greater` means `a` outranks `b`.
    fn compare(&self, a: VcpuId, b: VcpuId) -> Ordering {
        let (x, y) = (&self.vcpus[a.0], &self.vcpus[b.0]);
        y.level.cmp(&x.level).then(y.cur_deadline.cmp(&x.cur_deadline))
    }

    /// `rt_update_deadline`: the first period boundary after `now` becomes the deadline, with a full budget at
    /// level 0. Time run before `now` in the old period is not charged to the new one.
    fn update_deadline(&mut self, now: u64, v: VcpuId) {
        let c = &mut self.vcpus[v.0];
        let period = c.period.max(1);
        if c.cur_deadline <= now {
            c.cur_deadline += ((now - c.cur_deadline) / period + 1) * period;
        }
        c.last_start = now;
        c.cur_budget = c.budget as i64;
        c.level = 0;
    }

    /// `burn_budget`: charges what ran since `last_start`; a used-up budget starts the next extratime level, or
    /// marks the vCPU depleted.
    fn burn(&mut self, v: VcpuId, now: u64) {
        let c = &mut self.vcpus[v.0];
        c.cur_budget -= now.saturating_sub(c.last_start) as i64;
        c.last_start = now;
        if c.cur_budget <= 0 {
            if c.extratime {
                c.level = c.level.saturating_add(1);
                c.cur_budget = c.budget as i64;
            } else {
                c.cur_budget = 0;
                c.depleted = true;
            }
        }
    }

    /// `runq_insert`: with budget (or extratime) into the run queue by priority, after its equals; else onto the
    /// depleted queue.
    fn runq_insert(&mut self, v: VcpuId) {
        let c = &self.vcpus[v.0];
        if c.cur_budget > 0 || c.extratime {
            let pos =
                self.runq.iter().position(|&u| self.compare(v, u) == Ordering::Greater).unwrap_or(self.runq.len());
            self.runq.insert(pos, v);
            self.vcpus[v.0].q = OnQ::Run;
        } else {
            self.depletedq.push(v);
            self.vcpus[v.0].q = OnQ::Depleted;
        }
        self.versions.touch_all();
    }

    fn q_remove(&mut self, v: VcpuId) {
        match self.vcpus[v.0].q {
            OnQ::Run => self.runq.retain(|&u| u != v),
            OnQ::Depleted => self.depletedq.retain(|&u| u != v),
            OnQ::None => {}
        }
        self.vcpus[v.0].q = OnQ::None;
        self.versions.touch_all();
    }

    /// `replq_insert`: by deadline, after its equals; the timer follows the head.
    fn replq_insert(&mut self, v: VcpuId, ctx: &mut Ctx) {
        let d = self.vcpus[v.0].cur_deadline;
        let pos = self.replq.iter().position(|&u| self.vcpus[u.0].cur_deadline > d).unwrap_or(self.replq.len());
        self.replq.insert(pos, v);
        self.vcpus[v.0].on_replq = true;
        if pos == 0 {
            self.timer.arm(d, ctx);
        }
    }

    /// `replq_remove`. A timer left set for a removed head fires and finds nothing due, so it is not cancelled.
    fn replq_remove(&mut self, v: VcpuId) {
        if self.vcpus[v.0].on_replq {
            self.replq.retain(|&u| u != v);
            self.vcpus[v.0].on_replq = false;
        }
    }

    /// `runq_tickle`: kick an idle pCPU not yet tickled (the vCPU's own first), else the pCPU running the
    /// lowest-priority vCPU if `v` outranks it. `moving` is a decision being made: the pCPU and what it will run
    /// (the engine's view still shows what it ran).
    fn tickle(&mut self, v: VcpuId, moving: Option<(PcpuId, Option<VcpuId>)>, ctx: &mut Ctx) {
        let n = ctx.host.pcpus;
        let own = self.vcpus[v.0].processor.0;
        let running = |q: usize| match moving {
            Some((p, next)) if p.0 == q => next,
            _ => ctx.host.running[q],
        };
        let mut lowest: Option<(VcpuId, usize)> = None;
        for q in (0..n).map(|i| (own + i) % n).filter(|&q| !self.tickled[q]) {
            match running(q) {
                None => {
                    self.kick(q, v, "an idle pCPU", ctx);
                    return;
                }
                Some(u) if lowest.is_none_or(|(l, _)| self.compare(u, l) == Ordering::Less) => lowest = Some((u, q)),
                Some(_) => {}
            }
        }
        if let Some((u, q)) = lowest {
            if self.compare(u, v) == Ordering::Less {
                self.kick(q, v, "the lowest-priority pCPU", ctx);
            }
        }
    }

    fn kick(&mut self, q: usize, v: VcpuId, which: &str, ctx: &mut Ctx) {
        self.tickled[q] = true;
        ctx.resched(PcpuId(q));
        let name = &ctx.host.vcpu_name[v.0];
        ctx.note(PcpuId(q), |w| write!(w, "tickle: {name} kicks {which}"));
    }

    /// The vCPU running on its pCPU right now, as the engine shows it.
    fn is_running(&self, v: VcpuId, ctx: &Ctx) -> bool {
        ctx.host.running[self.vcpus[v.0].processor.0] == Some(v)
    }

    fn label(&self, v: VcpuId) -> Pri {
        let c = &self.vcpus[v.0];
        match c.q {
            OnQ::Depleted => Pri::new(PriClass::Waiting, "DEPLETED"),
            _ if !c.on_replq && c.q == OnQ::None => Pri::new(PriClass::Blocked, "ASLEEP"),
            _ if c.level == 0 => Pri::new(PriClass::Reserved, "EDF"),
            _ => Pri::new(PriClass::Extra, "EXTRA"),
        }
    }
}

impl Policy for Rtds {
    fn timers(&self) -> Timers {
        Timers { timer_slop: true, ..Timers::default() }
    }

    fn init_vcpu(&mut self, v: VcpuId, ctx: &mut Ctx) -> PcpuId {
        let p = PcpuId(v.0 % ctx.host.pcpus.max(1));
        self.vcpus[v.0].processor = p;
        p
    }

    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        if self.is_running(v, ctx) || self.vcpus[v.0].q != OnQ::None {
            return;
        }
        let now = ctx.now.0;
        if now >= self.vcpus[v.0].cur_deadline {
            // The deadline passed while it slept: a new period with a full budget.
            self.update_deadline(now, v);
        }
        self.replq_remove(v);
        self.replq_insert(v, ctx);
        self.runq_insert(v);
        let (name, c) = (&ctx.host.vcpu_name[v.0], &self.vcpus[v.0]);
        let (left, dl) = (c.cur_budget / 1000, c.cur_deadline as f64 / 1e6);
        ctx.note(self.vcpus[v.0].processor, |w| {
            write!(w, "{name} woke on {cause}: {left} us of budget, deadline {dl:.3} ms")
        });
        self.tickle(v, None, ctx);
    }

    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        if self.is_running(v, ctx) {
            // Its pCPU reschedules; `do_schedule` takes it off the replenishment queue.
            return;
        }
        if self.vcpus[v.0].q != OnQ::None {
            self.q_remove(v);
            self.replq_remove(v);
        }
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now.0;
        self.tickled[p.0] = false;
        if let Some(c) = cur {
            self.burn(c, now);
        }
        let head = self.runq.first().copied();
        // The current vCPU goes on while it has budget and outranks the head.
        let keep = cur.filter(|&c| {
            cur_runnable
                && self.vcpus[c.0].cur_budget > 0
                && head.is_none_or(|h| self.compare(c, h) == Ordering::Greater)
        });
        let next = keep.or(head);
        if let Some(c) = cur.filter(|&c| Some(c) != next) {
            // What `rt_context_saved` does once the switch is over.
            if cur_runnable {
                self.runq_insert(c);
                self.tickle(c, Some((p, next)), ctx);
            } else {
                self.replq_remove(c);
            }
        }
        let Some(n) = next else {
            self.versions.touch_all();
            let reason =
                if ctx.explain { format!("pCPU{} goes idle: the run queue is empty", p.0) } else { String::new() };
            return Pick { next: None, slice: Nanos::ZERO, reason };
        };
        if Some(n) != cur {
            self.q_remove(n);
        }
        let c = &mut self.vcpus[n.0];
        c.processor = p;
        c.last_start = now;
        let slice = Nanos(c.cur_budget.max(1) as u64);
        self.versions.touch_all();
        let reason = if ctx.explain {
            let c = &self.vcpus[n.0];
            let how =
                if c.level == 0 { "earliest deadline".to_string() } else { format!("extratime level {}", c.level) };
            format!(
                "runs {} for {} us: {how}, deadline {:.3} ms",
                ctx.name(n),
                slice.0 / 1000,
                c.cur_deadline as f64 / 1e6
            )
        } else {
            String::new()
        };
        Pick { next: Some(n), slice, reason }
    }

    /// `repl_timer_handler`: every vCPU whose deadline has come gets its next period; a replenished running vCPU
    /// that the run queue's head now outranks makes way, and a replenished depleted one is tickled for.
    fn timer(&mut self, ctx: &mut Ctx) {
        let now = ctx.now.0;
        self.timer.fired(now);
        let mut done = Vec::new();
        while let Some(&v) = self.replq.first() {
            if now < self.vcpus[v.0].cur_deadline {
                break;
            }
            self.replq.remove(0);
            self.vcpus[v.0].on_replq = false;
            self.update_deadline(now, v);
            if self.vcpus[v.0].q != OnQ::None {
                self.q_remove(v);
                self.runq_insert(v);
            }
            done.push(v);
        }
        for &v in &done {
            if self.is_running(v, ctx) {
                if let Some(&h) = self.runq.first() {
                    if self.compare(v, h) == Ordering::Less {
                        self.tickle(h, None, ctx);
                    }
                }
            } else if self.vcpus[v.0].depleted && self.vcpus[v.0].q != OnQ::None {
                self.vcpus[v.0].depleted = false;
                self.tickle(v, None, ctx);
            }
        }
        for v in done {
            self.replq_insert(v, ctx);
        }
        if let Some(&h) = self.replq.first() {
            let at = self.vcpus[h.0].cur_deadline;
            self.timer.arm(at, ctx);
        }
        self.versions.touch_all();
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        let mut p = self.params.clone();
        params::change(&mut p, param, value)?;
        let old = std::mem::replace(&mut self.params, p);
        if let Err(e) = self.apply_params() {
            self.params = old;
            return Err(e);
        }
        Ok(())
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        // Budget left at its level [us].
        VcpuSched { pri: self.label(v), credit: Some(self.vcpus[v.0].cur_budget / 1000) }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        // The one global queue is shown under pCPU 0: the run queue in order, then the depleted ones.
        if p.0 == 0 {
            self.runq.iter().chain(&self.depletedq).copied().collect()
        } else {
            Vec::new()
        }
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }

    fn share_rule(&self) -> ShareBasis {
        // Each vCPU's budget over its period; extratime is not an entitlement.
        let mut reserved = vec![0.0; self.domains.len()];
        for c in &self.vcpus {
            reserved[c.dom.0] += c.budget as f64 / c.period.max(1) as f64;
        }
        ShareBasis::Reserved(reserved)
    }
}

crate::size::no_heap!(RtVcpu);
crate::size::heap_size!(Rtds { vcpus, runq, depletedq, replq, tickled, versions, domains });

/// RTDS's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "rtds",
    caps: Caps::PLAIN,
    build: |s| super::gran::wrap(s, registry::boxed(Rtds::new(s.params, s.pcpus, s.domains))),
    check_param: RtdsParams::check_change,
    check_scenario: |sc, i, p| registry::check_named(sc, i, p, check_params),
    params: params::declared::<RtdsParams>(),
};

#[cfg(test)]
mod tests;
