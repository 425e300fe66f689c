//! Xen's Credit scheduler (credit1) as papers 000/001/003 describe it and `xen/common/sched/credit.c` implements it.
//!
//! Credits are earned every accounting period (one tslice, 30 ms) in proportion to weight, bounded by caps, and
//! burnt at 10 credits per ms of CPU (exactly, with the nanosecond residual carried). A vCPU with credit left is
//! UNDER, otherwise OVER; UNDER runs before OVER; a vCPU woken while UNDER is BOOSTed (preempts) until the next
//! tick finds it running. Each pCPU has its own run queue; a pCPU whose best local candidate is OVER or idle steals
//! strictly better work from busy peers. Capped domains whose credit falls below -cap are parked (paused) until
//! accounting brings them back above zero.
//!
//! Its extensions live beside it, each switched on by a parameter: task-aware scheduling ([`tavs`], paper 000),
//! driver-domain priority inheritance and KeepOnRunQ ([`idd`], paper 000 4.2), CPU balloons ([`xballoon`], paper
//! 002), and the thesis's enhanced selection ([`enhanced`], paper 003), which plugs in as a [`Selection`].

pub mod enhanced;
pub mod idd;
mod spec;
pub mod tavs;
pub mod xballoon;

use crate::model::{DomId, PcpuId, TaskId, VcpuId};
use crate::policy::common::Versions;
use crate::policy::params::{self, Params};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::policy::{
    Action, BoostMark, Ctx, DomainInfo, Facts, Pick, Policy, Pri, PriClass, ShareBasis, Timers, VcpuSched, WakeCause,
    MASTER_PCPU,
};
use crate::time::Nanos;
use idd::IddState;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;
use tavs::{Evidence, TavsParams, TavsSpec, TavsState};
use xballoon::{XBalloon, XbEffect};

pub use spec::*;

/// Priorities, as in credit.c: higher runs first.
pub const PRI_BOOST: i8 = 0;
pub const PRI_UNDER: i8 = -1;
pub const PRI_OVER: i8 = -2;
pub const PRI_IDLE: i8 = -64;

/// Credits earned per ms of entitlement and burnt per ms of CPU.
const CREDITS_PER_MSEC: i64 = 10;
/// Shortest slice the scheduler sets (CSCHED_MIN_TIMER) [ns].
pub(super) const MIN_TIMER: Nanos = Nanos::from_us(100);

#[derive(Debug, Clone)]
struct CVcpu {
    dom: DomId,
    credit: i64,
    pri: i8,
    /// On its domain's active list (earning credits).
    active: bool,
    parked: bool,
    on_runq: bool,
    processor: PcpuId,
    /// When credits were last burnt [ns].
    last_burn: Nanos,
    /// Burnt time not yet converted to a whole credit [ns].
    residual: u64,
    /// When it last started running (for the rate limit) [ns].
    run_start: Nanos,
}

#[derive(Debug, Clone)]
struct CDom {
    weight: u32,
    cap_pct: u32,
    /// Active vCPUs, in the order they were activated.
    active: Vec<VcpuId>,
}

#[derive(Clone)]
pub struct Credit {
    /// The parameters as declared and changed (what run-time changes apply to), and what they resolve to.
    spec: CreditSpec,
    params: CreditParams,
    vcpus: Vec<CVcpu>,
    doms: Vec<CDom>,
    /// Domains with at least one active vCPU, in accounting order.
    active_doms: Vec<DomId>,
    /// Sum of the active domains' weights as the share rule counts them (see [`ShareRule`]).
    weight_total: u64,
    /// How a domain's weight counts in the accounting, by the release its `version` names.
    rule: ShareRule,
    credit_balance: i64,
    runq: Vec<Vec<VcpuId>>,
    /// Accounting epoch, and the epoch each pCPU last sorted its run queue in.
    epoch: u64,
    sorted: Vec<u64>,
    /// Ticks each pCPU has taken (the master accounts every `ticks_per_tslice` of its own, 3.x).
    ticks: Vec<u64>,
    /// Bumped on every change a pCPU's run-queue snapshot could show (see `Policy::runqueue_versions`).
    versions: Versions,
    is_driver: Vec<bool>,
    /// The scenario's domains, to resolve `tavs.domains` overrides again when a change sets a tunable.
    domains: Vec<DomainInfo>,
    /// Task-aware scheduling's state (inference, partial boosts, correlations), kept whether or not it is on.
    tavs: TavsState,
    /// The driver-domain extensions' state (inherited priorities, KeepOnRunQ).
    idd: IddState,
    next_cpu: usize,
    /// A different choice of the run queue's head (the thesis's enhanced selection, 003 4.3), if any.
    selection: Option<Box<dyn Selection>>,
    /// Balloon state per vCPU (used while `params.xballoon`).
    xb: XBalloon,
}

/// A rule that reorders a pCPU's run queue before Credit takes its head (the caller has requeued the current
/// vCPU): how an extension changes Credit's choice without Credit knowing it.
/// Boxed selections clone (`dyn_clone`), so that Credit (and the whole simulation) can be checkpointed.
pub trait Selection: dyn_clone::DynClone + crate::size::HeapSize {
    fn select(&mut self, c: &mut Credit, p: PcpuId, ctx: &mut Ctx);
}

dyn_clone::clone_trait_object!(Selection);

/// A priority as the views show it.
fn pri_of(p: i8) -> Pri {
    match p {
        PRI_BOOST => Pri::new(PriClass::Boost, "BOOST"),
        PRI_UNDER => Pri::new(PriClass::Under, "UNDER"),
        PRI_OVER => Pri::new(PriClass::Over, "OVER"),
        _ => Pri::new(PriClass::Idle, "IDLE"),
    }
}

fn pri_name(p: i8) -> &'static str {
    match p {
        PRI_BOOST => "BOOST",
        PRI_UNDER => "UNDER",
        PRI_OVER => "OVER",
        _ => "IDLE",
    }
}

impl Credit {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Credit, String> {
        Credit::from_spec(params::from_value::<CreditSpec>(params)?, pcpus, domains)
    }

    /// Credit with the parameters `spec` declares (a file's, read already).
    pub fn from_spec(spec: CreditSpec, pcpus: usize, domains: &[DomainInfo]) -> Result<Credit, String> {
        let params = spec.resolve()?;
        let rule = ShareRule::of_version(spec.version);
        let xb = XBalloon::new(params.tslice(), pcpus, domains);
        let nv: usize = domains.iter().map(|d| d.vcpus.len()).sum();
        let (ev, fallback) = Self::evidence(&params, domains)?;
        let mut vcpus = vec![
            CVcpu {
                dom: DomId(0),
                credit: 0,
                pri: PRI_UNDER,
                active: false,
                parked: false,
                on_runq: false,
                processor: PcpuId(0),
                last_burn: Nanos::ZERO,
                residual: 0,
                run_start: Nanos::ZERO,
            };
            nv
        ];
        for (d, info) in domains.iter().enumerate() {
            for v in &info.vcpus {
                vcpus[v.0].dom = DomId(d);
            }
        }
        Ok(Credit {
            spec,
            params,
            vcpus,
            doms: domains.iter().map(|d| CDom { weight: d.weight, cap_pct: d.cap_pct, active: Vec::new() }).collect(),
            active_doms: Vec::new(),
            weight_total: 0,
            rule,
            credit_balance: 0,
            runq: vec![Vec::new(); pcpus],
            epoch: 0,
            sorted: vec![0; pcpus],
            ticks: vec![0; pcpus],
            versions: Versions::new(pcpus),
            is_driver: domains.iter().flat_map(|d| d.vcpus.iter().map(move |_| d.is_driver)).collect(),
            domains: domains.to_vec(),
            tavs: TavsState::new(ev, fallback, nv),
            idd: IddState::new(pcpus, nv),
            next_cpu: 0,
            selection: None,
            xb,
        })
    }

    /// Each vCPU's inference tunables and the policy-wide ones (defaults while task-aware scheduling is off).
    fn evidence(params: &CreditParams, domains: &[DomainInfo]) -> Result<(Vec<Evidence>, Evidence), String> {
        let nv = domains.iter().map(|d| d.vcpus.len()).sum();
        match &params.tavs {
            Some(tp) => Ok((tp.per_vcpu(domains)?, tp.evidence.clone())),
            None => Ok((vec![Evidence::default(); nv], Evidence::default())),
        }
    }

    /// Replaces the head-of-queue choice by `rule`.
    pub fn with_selection(mut self, rule: Box<dyn Selection>) -> Credit {
        self.selection = Some(rule);
        self
    }

    pub fn params(&self) -> &CreditParams {
        &self.params
    }

    /// Credit of a vCPU (tests and the trace).
    pub fn credit(&self, v: VcpuId) -> i64 {
        self.vcpus[v.0].credit
    }

    /// Priority of a vCPU.
    pub fn pri(&self, v: VcpuId) -> i8 {
        self.vcpus[v.0].pri
    }

    /// The run queue of a pCPU, in the order it would run.
    pub(super) fn runq_of(&self, p: PcpuId) -> &[VcpuId] {
        &self.runq[p.0]
    }

    /// Moves a queued vCPU of `p` to position `pos` of its run queue, whatever its priority (enhanced rule).
    pub(super) fn runq_move(&mut self, p: PcpuId, v: VcpuId, pos: usize) {
        self.runq[p.0].retain(|&u| u != v);
        let pos = pos.min(self.runq[p.0].len());
        self.runq[p.0].insert(pos, v);
        self.touch(p);
    }

    fn touch(&mut self, p: PcpuId) {
        self.versions.touch(p);
    }

    fn burn(&mut self, v: VcpuId, now: Nanos) {
        let p = self.vcpus[v.0].processor;
        self.touch(p);
        let used = now.0.saturating_sub(self.vcpus[v.0].last_burn.0);
        self.tavs.charge(v, used);
        if self.params.accounting == Accounting::Tick {
            self.vcpus[v.0].last_burn = now;
            return;
        }
        let c = &mut self.vcpus[v.0];
        let delta = now.0.saturating_sub(c.last_burn.0);
        let val = delta * CREDITS_PER_MSEC as u64 + c.residual;
        c.residual = val % 1_000_000;
        c.credit -= (val / 1_000_000) as i64;
        c.last_burn = now;
    }

    /// A domain's weight as the accounting counts it: once per active domain (3.x) or once per active vCPU (4.1+).
    fn counted_weight(&self, d: DomId) -> u64 {
        let dom = &self.doms[d.0];
        match self.rule {
            ShareRule::DomainWeight => u64::from(dom.weight) * u64::from(!dom.active.is_empty()),
            ShareRule::VcpuWeight => u64::from(dom.weight) * dom.active.len() as u64,
        }
    }

    fn acct_start(&mut self, v: VcpuId) {
        let d = self.vcpus[v.0].dom;
        self.vcpus[v.0].active = true;
        let before = self.counted_weight(d);
        let dom = &mut self.doms[d.0];
        dom.active.push(v);
        if dom.active.len() == 1 {
            self.active_doms.push(d);
        }
        self.weight_total += self.counted_weight(d) - before;
    }

    fn acct_stop(&mut self, v: VcpuId) {
        let d = self.vcpus[v.0].dom;
        self.vcpus[v.0].active = false;
        let before = self.counted_weight(d);
        let dom = &mut self.doms[d.0];
        dom.active.retain(|&x| x != v);
        if dom.active.is_empty() {
            self.active_doms.retain(|&x| x != d);
        }
        self.weight_total -= before - self.counted_weight(d);
    }

    /// FIFO within a priority class: after every queued vCPU of equal or higher priority.
    pub(super) fn runq_insert(&mut self, p: PcpuId, v: VcpuId) {
        let pri = self.vcpus[v.0].pri;
        let q = &self.runq[p.0];
        let pos = q.iter().position(|u| self.vcpus[u.0].pri < pri).unwrap_or(q.len());
        self.runq[p.0].insert(pos, v);
        self.touch(p);
        self.vcpus[v.0].on_runq = true;
        self.vcpus[v.0].processor = p;
    }

    /// Puts `v` back right before `succ` (the place it left for a partial boost) if `succ` still waits on `p`
    /// and the queue stays in priority order; false if that place is gone.
    fn runq_insert_before(&mut self, p: PcpuId, v: VcpuId, succ: Option<VcpuId>) -> bool {
        let Some(s) = succ else { return false };
        let pri = self.vcpus[v.0].pri;
        let q = &self.runq[p.0];
        let Some(i) = q.iter().position(|&u| u == s) else { return false };
        let fits_after = i == 0 || self.vcpus[q[i - 1].0].pri >= pri;
        if !fits_after || self.vcpus[s.0].pri > pri {
            return false;
        }
        self.runq[p.0].insert(i, v);
        self.touch(p);
        self.vcpus[v.0].on_runq = true;
        self.vcpus[v.0].processor = p;
        true
    }

    pub(super) fn runq_remove(&mut self, v: VcpuId) {
        let p = self.vcpus[v.0].processor;
        self.runq[p.0].retain(|&u| u != v);
        self.touch(p);
        self.vcpus[v.0].on_runq = false;
    }

    /// After accounting changed priorities, move UNDER-or-better ahead of OVER, keeping order within each.
    fn runq_sort(&mut self, p: PcpuId) {
        if self.sorted[p.0] == self.epoch {
            return;
        }
        self.sorted[p.0] = self.epoch;
        self.touch(p);
        let vcpus = &self.vcpus;
        let (mut first, second): (Vec<VcpuId>, Vec<VcpuId>) =
            self.runq[p.0].iter().partition(|u| vcpus[u.0].pri >= PRI_UNDER);
        first.extend(second);
        self.runq[p.0] = first;
    }

    /// A vCPU as reasons show it; formatting is left to whoever writes the reason (nothing is allocated here).
    fn describe<'n>(&self, v: VcpuId, names: &'n [String]) -> Described<'n> {
        let c = &self.vcpus[v.0];
        Described { vcpu: v.0, name: &names[v.0], pri: c.pri, credit: c.credit }
    }

    /// Wake-up tickling, as `__runq_tickle`: run here if idle; else prefer an idle pCPU; else preempt if better.
    /// Returns what it did, for the reason.
    fn tickle<'n>(&mut self, v: VcpuId, ctx: &mut Ctx<'n>) -> Tickled<'n> {
        let p = self.vcpus[v.0].processor;
        match ctx.host.running[p.0] {
            None => {
                ctx.resched(p);
                Tickled::RunsIdle(p)
            }
            Some(cur) => {
                let n = ctx.host.pcpus;
                // The other pCPUs from p + 1 round to p - 1 (no division per step: this runs on every wake).
                let mut others = (p.0 + 1..n).chain(0..p.0).map(PcpuId);
                if let Some(idle) = others.find(|q| ctx.host.running[q.0].is_none()) {
                    ctx.resched(idle);
                    Tickled::KicksIdle(idle)
                } else if self.vcpus[v.0].pri > self.vcpus[cur.0].pri {
                    ctx.resched(p);
                    self.keep_on_runq_if_driver(v, p);
                    Tickled::Preempts(self.describe(cur, ctx.host.vcpu_name))
                } else {
                    Tickled::QueuesBehind(self.describe(cur, ctx.host.vcpu_name))
                }
            }
        }
    }

    /// Aggressive boosting (000 Fig. 1b): every event lifts its vCPU to BOOST and lets it preempt.
    fn aggressive_event(&mut self, to: VcpuId, ctx: &mut Ctx) {
        // Aggressive boosting also lifts a runnable vCPU waiting in a run queue and lets it preempt.
        let c = &self.vcpus[to.0];
        if !self.params.aggressive_boost || !c.on_runq || c.parked || c.pri == PRI_BOOST {
            return;
        }
        let before = pri_name(c.pri);
        self.runq_remove(to);
        self.vcpus[to.0].pri = PRI_BOOST;
        let p = self.vcpus[to.0].processor;
        self.runq_insert(p, to);
        let how = self.tickle(to, ctx);
        let name = &ctx.host.vcpu_name[to.0];
        ctx.note(p, |w| write!(w, "event for {name}: aggressive boost {before} -> BOOST, {how}"));
    }

    /// Carries out an unpause xBalloon asks for, unless the cap keeps the vCPU parked (accounting unparks it).
    fn xb_effect(&mut self, e: XbEffect, ctx: &mut Ctx) {
        let (v, why) = match e {
            XbEffect::Resume(v) => (v, "event pending: balloon pause ends"),
            XbEffect::Release(v) => (v, "reservation met: balloon sleeps, work-conserving"),
            XbEffect::Unneeded(v) => (v, "a pCPU idles, nobody competes: balloon sleeps, work-conserving"),
        };
        if self.vcpus[v.0].parked {
            return;
        }
        // Both go through Xen's vcpu_wake, so an UNDER vCPU is boosted (unlike a cap unpark).
        ctx.resume(v);
        let p = self.vcpus[v.0].processor;
        let name = &ctx.host.vcpu_name[v.0];
        ctx.note(p, |w| write!(w, "xballoon: {name} unpaused ({why})"));
    }

    /// `csched_load_balance`: steal the first queued vCPU of strictly higher priority than `pri` from a busy peer,
    /// visiting the peers from the immediate neighbour on (`__cycle_cpu(cpu, &workers)`, 3.x up to 4.8; the
    /// `balance_bias` start point came with 4.9).
    fn steal(&mut self, p: PcpuId, pri: i8, ctx: &Ctx) -> Option<(VcpuId, PcpuId)> {
        let n = ctx.host.pcpus;
        for peer in (p.0 + 1..n).chain(0..p.0).map(PcpuId) {
            if ctx.host.running[peer.0].is_none() || self.runq[peer.0].is_empty() {
                continue;
            }
            let found = self.runq[peer.0].iter().take_while(|u| self.vcpus[u.0].pri > pri).copied().next();
            if let Some(u) = found {
                self.runq_remove(u);
                self.vcpus[u.0].processor = p;
                return Some((u, peer));
            }
        }
        None
    }
}

/// A vCPU in a reason: "d2v0 (UNDER, 120 cr)".
struct Described<'n> {
    vcpu: usize,
    name: &'n str,
    pri: i8,
    credit: i64,
}

impl<'n> Described<'n> {
    /// As a reason's facts hold it: vCPU index, priority, credit.
    fn from_facts(names: &'n [String], v: i64, pri: i64, credit: i64) -> Described<'n> {
        Described { vcpu: v as usize, name: &names[v as usize], pri: pri as i8, credit }
    }
}

impl std::fmt::Display for Described<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} ({}, {} cr)", self.name, pri_name(self.pri), self.credit)
    }
}

/// Words `do_schedule`'s pick from its facts: [pCPU, current vCPU (-1: none), what it did (0 nothing: the pCPU
/// was idle, 1 descheduled, 2 blocked), its priority, its credit, next vCPU (-1: none), its priority, its credit,
/// the pCPU it was stolen from (-1: none), the priority at the head of the local run queue].
fn write_pick(f: &Facts, names: &[String], s: &mut String) {
    let a = &f.args;
    let described = |v: i64, pri: i64, credit: i64| Described::from_facts(names, v, pri, credit);
    // Writing to a String cannot fail.
    let _ = match a[2] {
        0 => s.write_str("idle"),
        1 => write!(s, "{} descheduled", described(a[1], a[3], a[4])),
        _ => write!(s, "{} blocked", names[a[1] as usize]),
    };
    let _ = match (a[5], a[8]) {
        (n, peer) if n >= 0 && peer >= 0 => {
            write!(s, "; runs {}: stolen from pCPU{peer} ({} here)", described(n, a[6], a[7]), pri_name(a[9] as i8))
        }
        (n, _) if n >= 0 => write!(s, "; runs {}: head of its run queue", described(n, a[6], a[7])),
        _ => write!(s, "; pCPU{} goes idle", a[0]),
    };
}

/// Words a wake-up from its facts: [vCPU, packet port (0: none), priority before, priority after, what tickling
/// did (`Tickled::facts`: 4 values)]; the word is the cause's name.
fn write_wake(f: &Facts, names: &[String], s: &mut String) {
    let a = &f.args;
    let name = &names[a[0] as usize];
    // Writing to a String cannot fail; the cause as `WakeCause`'s `Display` words it.
    let _ = if a[1] != 0 {
        write!(s, "{name} woke on net rx port {}: ", a[1])
    } else {
        write!(s, "{name} woke on {}: ", f.word)
    };
    let _ = if a[2] == a[3] {
        write!(s, "{}, ", pri_name(a[3] as i8))
    } else {
        write!(s, "{} -> {}, ", pri_name(a[2] as i8), pri_name(a[3] as i8))
    };
    write_tickled(&a[4..8], names, s);
}

/// Words a partial boost (TAVS) from its facts: [vCPU, its priority before, what tickling did (4 values)].
fn write_partial_boost(f: &Facts, names: &[String], s: &mut String) {
    let a = &f.args;
    let (name, saved) = (&names[a[0] as usize], pri_name(a[1] as i8));
    // Writing to a String cannot fail.
    let _ = write!(s, "event pending for {name}, which has an I/O-bound task: partial boost {saved} -> BOOST, ");
    write_tickled(&a[2..6], names, s);
}

/// Words what wake-up tickling did from `Tickled::facts`, as `Tickled`'s `Display` does.
fn write_tickled(a: &[i64], names: &[String], s: &mut String) {
    let described = |v: i64, pri: i64, credit: i64| Described::from_facts(names, v, pri, credit);
    // Writing to a String cannot fail.
    let _ = match a[0] {
        0 => write!(s, "pCPU{} idle: runs it", a[1]),
        1 => write!(s, "kicks idle pCPU{} to steal it", a[1]),
        2 => write!(s, "preempts {}", described(a[1], a[2], a[3])),
        _ => write!(s, "queues behind {}", described(a[1], a[2], a[3])),
    };
}

/// What wake-up tickling did, for the reason.
enum Tickled<'n> {
    RunsIdle(PcpuId),
    KicksIdle(PcpuId),
    Preempts(Described<'n>),
    QueuesBehind(Described<'n>),
}

impl Tickled<'_> {
    /// As `write_wake` reads it: [kind (0 runs idle, 1 kicks idle, 2 preempts, 3 queues behind), pCPU or vCPU,
    /// the vCPU's priority, its credit].
    fn facts(&self) -> [i64; 4] {
        match self {
            Tickled::RunsIdle(p) => [0, p.0 as i64, 0, 0],
            Tickled::KicksIdle(p) => [1, p.0 as i64, 0, 0],
            Tickled::Preempts(d) => [2, d.vcpu as i64, d.pri as i64, d.credit],
            Tickled::QueuesBehind(d) => [3, d.vcpu as i64, d.pri as i64, d.credit],
        }
    }
}

impl std::fmt::Display for Tickled<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Tickled::RunsIdle(p) => write!(f, "pCPU{} idle: runs it", p.0),
            Tickled::KicksIdle(p) => write!(f, "kicks idle pCPU{} to steal it", p.0),
            Tickled::Preempts(d) => write!(f, "preempts {d}"),
            Tickled::QueuesBehind(d) => write!(f, "queues behind {d}"),
        }
    }
}

impl Policy for Credit {
    fn timers(&self) -> Timers {
        Timers {
            tick: Some(self.params.tick()),
            account: self.params.master_ticker.then(|| self.params.tslice()),
            tick_stops_idle: self.params.tick_suspend,
            timer_slop: true,
        }
    }

    fn init_vcpu(&mut self, v: VcpuId, ctx: &mut Ctx) -> PcpuId {
        let p = PcpuId(self.next_cpu % ctx.host.pcpus);
        self.next_cpu += 1;
        self.vcpus[v.0].processor = p;
        p
    }

    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        if self.vcpus[v.0].on_runq {
            return;
        }
        let before = self.vcpus[v.0].pri;
        // A vCPU unparked by accounting is not boosted (credit.c clears PARKED after the unpause for this reason).
        let unpark = cause == WakeCause::Unpause;
        let boostable = before == PRI_UNDER || self.params.aggressive_boost;
        if self.params.boost && boostable && !self.vcpus[v.0].parked && !unpark {
            self.vcpus[v.0].pri = PRI_BOOST;
        }
        let p = self.vcpus[v.0].processor;
        self.runq_insert(p, v);
        let how = self.tickle(v, ctx).facts();
        let after = self.vcpus[v.0].pri;
        // Kept as its facts and worded only if the decision log is read (`write_wake`).
        let port = match cause {
            WakeCause::NetRx { port } => port,
            _ => 0,
        };
        ctx.note_facts(p, || Facts {
            write: write_wake,
            args: [v.0 as i64, port as i64, before as i64, after as i64, how[0], how[1], how[2], how[3], 0, 0],
            word: cause.as_str(),
        });
    }

    fn block_request(&mut self, v: VcpuId, task: TaskId, issued_at: Nanos) {
        self.mark_block_request(v, task, issued_at);
    }

    fn block_done(&mut self, v: VcpuId, task: TaskId, issued_at: Nanos, held: bool) {
        self.mark_block_done(v, task, issued_at, held);
    }

    fn event_pending(&mut self, v: VcpuId, port: Option<u16>, ctx: &mut Ctx) {
        if let Some(e) = self.xb.event_pending(v) {
            self.xb_effect(e, ctx);
        }
        self.partial_boost_on_event(v, port, ctx);
    }

    fn guest_task_switch(&mut self, v: VcpuId, prev: Option<TaskId>, next: Option<TaskId>, ctx: &mut Ctx) {
        self.observe_task_switch(v, prev, next, ctx);
    }

    fn guest_resumed(&mut self, v: VcpuId, task: TaskId, ctx: &mut Ctx) {
        self.observe_resume(v, task, ctx);
    }

    fn task_belief(&self, t: TaskId) -> Option<(i64, bool)> {
        self.params.tavs.as_ref().map(|_| self.tavs.belief(t))
    }

    fn drain_marks(&mut self, beliefs: &mut Vec<(TaskId, i64)>, boosts: &mut Vec<(VcpuId, BoostMark)>) {
        self.tavs.drain_marks(beliefs, boosts);
    }

    fn tracking_cost(&self, _v: VcpuId) -> Nanos {
        self.params.tavs.as_ref().map_or(Nanos::ZERO, |t| t.track_cost)
    }

    fn partial_boosts(&self) -> Option<(u64, u64)> {
        self.params.tavs.as_ref().map(|_| self.tavs.partial_boosts())
    }

    fn belief_threshold(&self) -> Option<i64> {
        self.params.tavs.as_ref().map(|tp| tp.evidence.bel_threshold)
    }

    fn event_sent(&mut self, from: VcpuId, to: VcpuId, ctx: &mut Ctx) {
        if self.params.idd_priority_inheritance {
            self.inherit_priority(from, to, ctx);
        }
        self.aggressive_event(to, ctx);
    }

    fn sleep(&mut self, v: VcpuId, _ctx: &mut Ctx) {
        if self.vcpus[v.0].on_runq {
            self.runq_remove(v);
        }
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now;
        self.touch(p);
        let keep_front = self.idd.take_keep_front(p);
        if let Some(c) = cur {
            self.burn(c, now);
            // A partial boost or an inherited priority lasts only while the vCPU runs.
            let place = self.tavs_descheduled(c);
            self.end_inheritance(c);
            let ran = now.saturating_sub(self.vcpus[c.0].run_start);
            let limit = Nanos::from_us(self.params.ratelimit_us);
            if cur_runnable && limit > Nanos::ZERO && ran < limit {
                let slice = if ran < MIN_TIMER { MIN_TIMER } else { limit - ran };
                return Pick {
                    next: Some(c),
                    slice,
                    reason: if ctx.explain {
                        let c = self.describe(c, ctx.host.vcpu_name);
                        format!("{c} keeps pCPU{} (ratelimit: ran {} us)", p.0, ran.0 / 1000)
                    } else {
                        String::new()
                    },
                };
            }
            if cur_runnable {
                if keep_front {
                    self.runq_insert_front(p, c);
                } else if !self.runq_insert_before(p, c, place) {
                    self.runq_insert(p, c);
                }
            }
        }
        if let Some(mut rule) = self.selection.take() {
            rule.select(self, p, ctx);
            self.selection = Some(rule);
        }
        let head = self.runq[p.0].first().copied();
        let head_pri = head.map_or(PRI_IDLE, |h| self.vcpus[h.0].pri);
        let mut stolen_from = None;
        let next = if head_pri > PRI_OVER {
            head
        } else if let Some((u, peer)) = self.steal(p, head_pri, ctx) {
            stolen_from = Some(peer);
            Some(u)
        } else {
            head
        };
        if let Some(n) = next {
            if self.vcpus[n.0].on_runq {
                self.runq_remove(n);
            }
            self.vcpus[n.0].processor = p;
            self.vcpus[n.0].last_burn = now;
            if cur != Some(n) {
                self.vcpus[n.0].run_start = now;
                if self.params.tavs.is_some() {
                    self.tavs.scheduled(n, now);
                }
            }
        }
        if self.params.xballoon {
            self.xb.switched(now, cur, next);
            if next.is_none() && self.params.xballoon_idle_release {
                for e in self.xb.pcpu_idle() {
                    self.xb_effect(e, ctx);
                }
            }
        }
        let mut slice = self.params.tslice();
        if let (Some(n), Some(t)) = (next, self.params.tavs.as_ref()) {
            slice = self.tavs.boost_slice(n, t, now, slice);
        }
        // Kept as its facts and worded only if the decision log is read (`write_pick`).
        ctx.explain_pick(|| {
            let vcpu = |v: Option<VcpuId>| {
                v.map_or((-1, 0, 0), |v| (v.0 as i64, self.vcpus[v.0].pri as i64, self.vcpus[v.0].credit))
            };
            let (c, c_pri, c_credit) = vcpu(cur);
            let (n, n_pri, n_credit) = vcpu(next);
            let cur_was = match cur {
                None => 0,
                Some(_) if cur_runnable => 1,
                Some(_) => 2,
            };
            let peer = stolen_from.map_or(-1, |q| q.0 as i64);
            Facts {
                write: write_pick,
                args: [p.0 as i64, c, cur_was, c_pri, c_credit, n, n_pri, n_credit, peer, head_pri as i64],
                word: "",
            }
        });
        let reason = String::new();
        Pick { next, slice, reason }
    }

    fn tick(&mut self, p: PcpuId, ctx: &mut Ctx) {
        self.touch(p);
        if let Some(c) = ctx.host.running[p.0] {
            if self.vcpus[c.0].pri == PRI_BOOST && !self.tavs.boosted(c) && !self.idd.inherits(c) {
                self.vcpus[c.0].pri = PRI_UNDER;
                let name = &ctx.host.vcpu_name[c.0];
                ctx.note(p, |w| write!(w, "tick: {name} BOOST -> UNDER"));
            }
            self.burn(c, ctx.now);
            if self.params.accounting == Accounting::Tick {
                // Sampling: the vCPU found running pays for the whole tick period.
                self.vcpus[c.0].credit -= self.params.credits_per_tslice() / 3;
            }
            if !self.vcpus[c.0].active {
                self.acct_start(c);
            }
        }
        self.ticks[p.0] += 1;
        // 3.x: the master does the host-wide accounting in its own tick, before sorting its run queue; the other
        // pCPUs see the new priorities at their next tick.
        if !self.params.master_ticker
            && p == MASTER_PCPU
            && self.ticks[p.0].is_multiple_of(self.params.ticks_per_tslice())
        {
            self.account(ctx);
        }
        self.runq_sort(p);
    }

    fn account(&mut self, ctx: &mut Ctx) {
        let per_tslice = self.params.credits_per_tslice();
        let weight_total = self.weight_total as i64;
        let mut credit_total = per_tslice * ctx.host.pcpus as i64;
        if self.credit_balance < 0 {
            credit_total -= self.credit_balance;
        }
        if weight_total == 0 {
            self.credit_balance = 0;
            if self.params.xballoon {
                self.xb.new_period(ctx);
            }
            return;
        }
        let mut weight_left = weight_total;
        let mut balance = 0i64;
        let mut xtra = false;
        let order = self.active_doms.clone();
        for d in order {
            let (cap_pct, n) = {
                let dom = &self.doms[d.0];
                (i64::from(dom.cap_pct), dom.active.len() as i64)
            };
            // The domain's weight in competition with the other active domains' (3.x: its weight; 4.1+: its
            // weight once per active vCPU); what it earns is then split equally among its active vCPUs.
            let weight = self.counted_weight(d) as i64;
            weight_left -= weight;
            let mut peak = n * per_tslice;
            if self.credit_balance < 0 {
                peak += (-self.credit_balance * weight + weight_total - 1) / weight_total;
            }
            let mut cap_v = 0;
            if cap_pct != 0 {
                let cap_d = (cap_pct * per_tslice + 99) / 100;
                peak = peak.min(cap_d);
                cap_v = (cap_d + n - 1) / n;
            }
            let mut fair = (credit_total * weight + weight_total - 1) / weight_total;
            if fair < peak {
                xtra = true;
            } else {
                if weight_left != 0 {
                    credit_total += ((fair - peak) * weight_total + weight_left - 1) / weight_left;
                }
                if xtra {
                    // Lazily keep domains with spare credit at the head so others get a chance at it next time.
                    self.active_doms.retain(|&x| x != d);
                    self.active_doms.insert(0, d);
                }
                fair = peak;
            }
            let inc = (fair + n - 1) / n;
            for v in self.doms[d.0].active.clone() {
                if self.params.xballoon {
                    self.xb.set_share(v, inc, per_tslice);
                }
                let c = &mut self.vcpus[v.0];
                c.credit += inc;
                if c.credit < 0 {
                    c.pri = PRI_OVER;
                    if cap_pct != 0 && c.credit < -cap_v && !c.parked {
                        c.parked = true;
                        ctx.actions.push(Action::Pause(v));
                    }
                    c.credit = c.credit.max(-per_tslice);
                } else {
                    c.pri = PRI_UNDER;
                    if c.parked {
                        c.parked = false;
                        // A vCPU its balloon keeps paused stays so; the balloon's release unpauses it.
                        if !self.xb.is_paused(v) {
                            ctx.actions.push(Action::Unpause(v));
                        }
                    }
                    if c.credit > per_tslice && self.params.credit_ceiling {
                        // Stops earning. 4.1+ keeps half so it restarts a little ahead; 3.x reset it to zero.
                        c.credit = if self.params.halve_on_deactivate { c.credit / 2 } else { 0 };
                        self.acct_stop(v);
                    }
                }
                balance += self.vcpus[v.0].credit;
            }
        }
        self.credit_balance = balance;
        self.epoch += 1;
        self.versions.touch_all();
        if self.params.xballoon {
            self.xb.new_period(ctx);
        }
    }

    fn timer(&mut self, ctx: &mut Ctx) {
        for e in self.xb.timer(ctx.now) {
            self.xb_effect(e, ctx);
        }
    }

    fn balloon(&mut self, v: VcpuId, ctx: &mut Ctx) -> bool {
        self.params.xballoon && self.xb.hypercall(v, ctx)
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        // On a copy, so that a change naming no domain of the scenario leaves the policy as it was.
        let mut spec = self.spec.clone();
        params::set(&mut spec, param, value)?;
        let params = spec.resolve()?;
        let (ev, fallback) = Self::evidence(&params, &self.domains)?;
        self.tavs.set_evidence(ev, fallback);
        self.spec = spec;
        self.params = params;
        if param == "version" {
            // Another release counts weights its own way: recount the active domains' total under its rule.
            self.rule = ShareRule::of(&serde_json::json!({ "version": value }));
            self.weight_total = (0..self.doms.len()).map(|d| self.counted_weight(DomId(d))).sum();
        }
        Ok(())
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let c = &self.vcpus[v.0];
        let pri = if c.parked { Pri::new(PriClass::Parked, "PARKED") } else { pri_of(c.pri) };
        VcpuSched { pri, credit: Some(c.credit) }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        self.runq[p.0].clone()
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }

    fn share_rule(&self) -> ShareBasis {
        match self.rule {
            ShareRule::DomainWeight => ShareBasis::DomainWeight,
            ShareRule::VcpuWeight => ShareBasis::VcpuWeight,
        }
    }
}

crate::size::no_heap!(CVcpu);
crate::size::heap_size!(CDom { active });
crate::size::heap_size!(Credit {
    vcpus,
    doms,
    active_doms,
    runq,
    sorted,
    ticks,
    versions,
    is_driver,
    domains,
    tavs,
    idd,
    selection,
    xb,
});

/// Credit's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "credit",
    caps: Caps::INFERS,
    build: |s| super::gran::wrap(s, registry::boxed(Credit::new(s.params, s.pcpus, s.domains))),
    check_param: CreditSpec::check_param,
    check_scenario: registry::no_scenario_check,
    params: params::declared::<CreditSpec>(),
};

#[cfg(test)]
mod tests;
