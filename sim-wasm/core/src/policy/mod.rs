//! Hypervisor scheduling policies behind one trait whose hooks mirror Xen's scheduler interface (paper 003, 4.4).
//! Policies decide; the engine acts and records. A policy never touches engine state directly: it reads the
//! [`HostView`] and asks for effects through [`Ctx`] (reschedule a pCPU, pause or unpause a vCPU, log a reason).

pub mod arinc653;
pub mod atropos;
pub mod bvt;
pub mod common;
pub mod credit;
pub mod credit2;
pub mod enhanced;
pub mod gang;
pub mod hybrid;
pub mod sedf;
pub mod tavs;
pub mod xballoon;
pub mod xenco;

use crate::model::{DomId, PcpuId, TaskId, VcpuId};
use crate::scenario::DomainType;
use crate::time::Nanos;
use serde::Serialize;
use serde_json::Value;

/// What the engine tells policies about the host: fixed shapes plus who runs where right now.
pub struct HostView<'a> {
    pub pcpus: usize,
    /// The vCPU running on each pCPU (`None` = idle).
    pub running: &'a [Option<VcpuId>],
    /// Each vCPU's domain.
    pub vcpu_dom: &'a [DomId],
    /// Each vCPU's short name (`web.v0`), for reasons.
    pub vcpu_name: &'a [String],
    /// Each domain's weight and cap (percent of one pCPU; 0 = none) and vCPU list.
    pub domains: &'a [DomainInfo],
}

/// Static facts about a domain that policies need.
#[derive(Debug, Clone)]
pub struct DomainInfo {
    pub name: String,
    pub weight: u32,
    /// Cap [% of one pCPU]; 0 = uncapped.
    pub cap_pct: u32,
    pub vcpus: Vec<VcpuId>,
    pub is_driver: bool,
}

/// An effect a policy asks the engine to carry out once the hook returns.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// Run `do_schedule` on this pCPU now (preemption, or an idle pCPU told to look for work).
    Resched(PcpuId),
    /// Pause a vCPU (cap parking): it leaves its pCPU and stays off run queues until unpaused.
    Pause(VcpuId),
    /// Undo a pause; the engine wakes the vCPU if it has work.
    Unpause(VcpuId),
    /// Undo a pause because an event arrived for the vCPU: the engine wakes it as for that event (boostable).
    Resume(VcpuId),
    /// Call the policy's `timer` hook at this time.
    Timer(Nanos),
    /// Wake the guest's balloon task on this vCPU with a virtual IRQ (xBalloon, paper 002).
    ArmBalloon(VcpuId),
}

/// Explanations written during one hook, back to back in one buffer: no allocation per line once it has grown.
#[derive(Debug, Default)]
pub struct Notes {
    text: String,
    /// Each line's pCPU and its byte range in `text`.
    lines: Vec<(PcpuId, usize, usize)>,
}

impl Notes {
    /// Hands out every line in order, then empties the buffer (keeping its allocation).
    pub fn drain(&mut self, mut each: impl FnMut(PcpuId, &str)) {
        for &(p, a, b) in &self.lines {
            each(p, &self.text[a..b]);
        }
        self.lines.clear();
        self.text.clear();
    }
}

/// The hooks' window on the engine.
pub struct Ctx<'a> {
    pub now: Nanos,
    pub host: HostView<'a>,
    pub actions: &'a mut Vec<Action>,
    /// One-line explanations the policy wants in the decision log, with the pCPU they concern.
    pub notes: &'a mut Notes,
    /// Whether anyone will read explanations: policies skip formatting them when not (batch runs).
    pub explain: bool,
}

impl Ctx<'_> {
    pub fn resched(&mut self, p: PcpuId) {
        self.actions.push(Action::Resched(p));
    }
    pub fn pause(&mut self, v: VcpuId) {
        self.actions.push(Action::Pause(v));
    }
    pub fn unpause(&mut self, v: VcpuId) {
        self.actions.push(Action::Unpause(v));
    }
    pub fn resume(&mut self, v: VcpuId) {
        self.actions.push(Action::Resume(v));
    }
    pub fn timer_at(&mut self, at: Nanos) {
        self.actions.push(Action::Timer(at));
    }
    pub fn arm_balloon(&mut self, v: VcpuId) {
        self.actions.push(Action::ArmBalloon(v));
    }
    /// Adds a line to the decision log; `text` writes it, and runs only when the run records explanations.
    pub fn note(&mut self, p: PcpuId, text: impl FnOnce(&mut String) -> std::fmt::Result) {
        if self.explain {
            let start = self.notes.text.len();
            // Writing to a String cannot fail.
            let _ = text(&mut self.notes.text);
            self.notes.lines.push((p, start, self.notes.text.len()));
        }
    }
    pub fn name(&self, v: VcpuId) -> &str {
        &self.host.vcpu_name[v.0]
    }
}

/// The outcome of `do_schedule`: who runs next on the pCPU, for how long at most, and why.
#[derive(Debug, Clone)]
pub struct Decision {
    pub next: Option<VcpuId>,
    /// Time until the engine calls `do_schedule` again on this pCPU unless something preempts [ns].
    pub slice: Nanos,
    pub reason: String,
}

/// Periodic timers a policy wants.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timers {
    /// Per-pCPU tick period [ns].
    pub tick: Option<Nanos>,
    /// Host-wide accounting period [ns].
    pub account: Option<Nanos>,
}

/// Which way an I/O item passes a driver domain's backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum IoKind {
    /// A packet for a guest: from the NIC, or from another domain through the bridge.
    NetRx,
    /// A packet a guest sent.
    NetTx,
    /// A block request or its completion.
    Block,
}

/// A vCPU as the policy sees it, for the trace and the run-queue view.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct VcpuSched {
    /// Priority class label, e.g. "BOOST", "UNDER", "OVER".
    pub pri: &'static str,
    /// Remaining credit (policy units), when the policy has credits.
    pub credit: Option<i64>,
}

pub trait Policy {
    /// Periodic timers the engine should fire.
    fn timers(&self) -> Timers;
    /// Whether the slice of an idle decision is a timer: a reservation scheduler idles a pCPU only until the next
    /// period begins. Others are woken by `Resched` alone.
    fn timed_idle(&self) -> bool {
        false
    }
    /// Initial pCPU of a vCPU when the host boots.
    fn init_vcpu(&mut self, v: VcpuId, ctx: &mut Ctx) -> PcpuId;
    /// A blocked (or unpaused) vCPU became runnable; `cause` says why, for the log.
    fn wake(&mut self, v: VcpuId, cause: &str, ctx: &mut Ctx);
    /// A vCPU stopped being runnable (blocked or paused). If it is running, the engine reschedules its pCPU.
    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx);
    /// Choose what runs next on `p`. `cur` is what ran until now, `cur_runnable` whether it could go on.
    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Decision;
    /// Per-pCPU tick.
    fn tick(&mut self, _p: PcpuId, _ctx: &mut Ctx) {}
    /// Host-wide accounting.
    fn account(&mut self, _ctx: &mut Ctx) {}
    /// A timer the policy asked for (`Ctx::timer_at`) fired.
    fn timer(&mut self, _ctx: &mut Ctx) {}
    /// The guest's CPU balloon on `v` asks the hypervisor to pause `v` (xBalloon's hypercall). Returns true when
    /// the policy paused it; false tells the balloon to sleep until it is armed again.
    fn balloon(&mut self, _v: VcpuId, _ctx: &mut Ctx) -> bool {
        false
    }
    /// An event-channel notification was sent from one vCPU to another (driver domain -> guest or back).
    fn event_sent(&mut self, _from: VcpuId, _to: VcpuId, _ctx: &mut Ctx) {}
    /// A notification for `v` is held pending because `v` is not running (task-aware partial boosting);
    /// `port` is the destination port when it carries a network packet.
    fn event_pending(&mut self, _v: VcpuId, _port: Option<u16>, _ctx: &mut Ctx) {}
    /// An I/O item of domain `dom` was queued at its driver domain `driver` (correlation, I/O intensity).
    fn io_request(&mut self, _dom: DomId, _driver: DomId, _kind: IoKind, _ctx: &mut Ctx) {}
    /// The driver domain finished an item of `dom`: handed to the guest, put on the wire or given to the disk.
    fn io_complete(&mut self, _dom: DomId, _driver: DomId, _kind: IoKind, _ctx: &mut Ctx) {}
    /// The driver domain maps the grant of a block request of `task` (on `v`) issued at `issued_at`: what block
    /// correlation sees (000 3.5.1); the guest may have scheduled other tasks since it sent the request.
    fn block_request(&mut self, _v: VcpuId, _task: TaskId, _issued_at: Nanos) {}
    /// That request completed and its notification goes to `v`: delivered at once, or `held` pending (then this
    /// comes just before `event_pending`).
    fn block_done(&mut self, _v: VcpuId, _task: TaskId, _issued_at: Nanos, _held: bool) {}
    /// The guest on `v` switched address space from `prev` to `next` (None = guest idle).
    fn guest_task_switch(&mut self, _v: VcpuId, _prev: Option<TaskId>, _next: Option<TaskId>, _ctx: &mut Ctx) {}
    /// Changes a parameter at run time (scenario `changes`).
    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String>;
    /// How the policy currently sees a vCPU.
    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched;
    /// The vCPUs queued on a pCPU, in the order they would run.
    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId>;
    /// The policy's inference about a guest task: (degree of belief, inferred I/O-bound), if it infers.
    fn task_belief(&self, _t: TaskId) -> Option<(i64, bool)> {
        None
    }
    /// Appends what happened since the last call: belief changes (task, new degree of belief) and partial-boost
    /// marks (vCPU, "boost" or "revoke"; only kept while `Ctx::explain` is on, so batch runs do not grow a list
    /// nobody reads). One call after every hook, into buffers the engine reuses.
    fn drain_marks(&mut self, _beliefs: &mut Vec<(TaskId, i64)>, _boosts: &mut Vec<(VcpuId, &'static str)>) {}
    /// Hypervisor time spent on `v` to observe one guest address-space switch (task tracking): charged to the
    /// vCPU, not given to its guest [ns]. Zero for policies that do not track tasks.
    fn tracking_cost(&self, _v: VcpuId) -> Nanos {
        Nanos::ZERO
    }
    /// Partial boosts so far and how many of them reached an I/O-bound task (hits), if the policy boosts so.
    fn partial_boosts(&self) -> Option<(u64, u64)> {
        None
    }
    /// The degree of belief above which a task is inferred I/O-bound (BelThreshold), if the policy infers.
    fn belief_threshold(&self) -> Option<i64> {
        None
    }
    /// Per pCPU, a number that changes whenever what `runqueue(p)` and `vcpu_sched` show for it may have
    /// changed, so the engine records run-queue snapshots only when something moved. One slice for all pCPUs:
    /// the engine checks them after every event.
    fn runqueue_versions(&self) -> &[u64];
}

/// Builds the policy named by a scenario's policy spec. `types` is each domain's scenario `type` (paper 001).
pub fn build(
    scheduler: &str,
    params: &Value,
    pcpus: usize,
    domains: &[DomainInfo],
    types: &[DomainType],
) -> Result<Box<dyn Policy>, String> {
    match scheduler {
        "credit" => Ok(Box::new(credit::Credit::new(params, pcpus, domains)?)),
        "credit2" => Ok(Box::new(credit2::Credit2::new(params, pcpus, domains)?)),
        "bvt" => Ok(Box::new(bvt::Bvt::new(params, pcpus, domains)?)),
        "atropos" => Ok(Box::new(atropos::Atropos::new(params, pcpus, domains)?)),
        "arinc653" => Ok(Box::new(arinc653::Arinc653::new(params, pcpus, domains)?)),
        "enhanced" => Ok(Box::new(enhanced::new(params, pcpus, domains)?)),
        "sedf" => Ok(Box::new(sedf::Sedf::new(params, pcpus, domains)?)),
        "xenco" => Ok(Box::new(xenco::Xenco::new(params, pcpus, domains)?)),
        "hybrid" => Ok(Box::new(hybrid::Hybrid::new(params, pcpus, domains, types)?)),
        "gang" => Ok(Box::new(gang::Gang::new(params, pcpus, domains)?)),
        other => Err(format!("scheduler '{other}' is not implemented yet")),
    }
}

/// Checks a policy's parameters against the scenario (domain names) when the file is loaded.
pub fn check_params(scheduler: &str, params: &Value, domain_names: &[&str]) -> Result<(), String> {
    match scheduler {
        "sedf" => sedf::check_params(params, domain_names, &[]),
        "xenco" => xenco::check_params(params, domain_names),
        _ => Ok(()),
    }
}

/// Checks that `param` is a run-time parameter of `scheduler` and `value` fits it.
pub fn check_param(scheduler: &str, param: &str, value: &Value) -> Result<(), String> {
    match scheduler {
        "credit" => credit::CreditParams::default().set(param, value),
        "credit2" => credit2::Credit2Params::default().set(param, value),
        "bvt" => bvt::BvtParams::default().set(param, value),
        "atropos" => atropos::check_param(param, value),
        "arinc653" => Err(format!("arinc653: the schedule is fixed at boot ('{param}' cannot change at run time)")),
        "enhanced" => enhanced::check_param(param, value),
        "sedf" => sedf::SedfParams::default().set(param, value),
        "xenco" => xenco::check_param(param, value),
        "hybrid" => hybrid::HybridParams::default().set(param, value),
        "gang" if param.starts_with("domain_type.") => {
            Err(format!("{param}: the gang scheduler co-schedules every domain; it has no domain types"))
        }
        "gang" => hybrid::HybridParams::default().set(param, value),
        other => Err(format!("scheduler '{other}' has no run-time parameters")),
    }
}
