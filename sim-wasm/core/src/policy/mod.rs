//! Hypervisor scheduling policies behind one trait whose hooks mirror Xen's scheduler interface (paper 003, 4.4).
//! Policies decide; the engine acts and records. A policy never touches engine state directly: it reads the
//! [`HostView`] and asks for effects through [`Ctx`] (reschedule a pCPU, pause or unpause a vCPU, log a reason).
//!
//! Each submodule is one scheduler (Credit's extensions are children of `credit`), except two: [`registry`], the
//! table of schedulers everything else looks them up in, and [`common`], parameter parsing and bookkeeping
//! helpers the schedulers share.

pub mod arinc653;
pub mod atropos;
pub mod bvt;
pub mod common;
pub mod credit;
pub mod credit2;
pub mod gang;
pub mod gran;
pub mod hybrid;
pub mod kvm;
pub mod null;
pub mod params;
pub mod registry;
pub mod relaxed_cosched;
pub mod rtds;
pub mod script;
pub mod sedf;
pub mod xenco;

use crate::model::{DomId, PcpuId, TaskId, VcpuId};
use crate::time::Nanos;
pub use crate::trace::{Facts, FACT_ARGS};
use serde_json::Value;
use std::borrow::Cow;
use std::fmt;

/// Why the engine wakes a vCPU (`Policy::wake`); shown in reasons as [`WakeCause::as_str`] says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum WakeCause {
    /// Runnable when the host boots.
    Boot,
    /// A pause ended (cap parking): Credit does not boost these.
    Unpause,
    /// An event arrived for a vCPU its balloon had paused.
    BalloonPauseEnds,
    /// The driver domain's backend got work of this kind.
    Backend(BackendWork),
    /// A packet for a guest, from its driver domain (port 0: none worth showing).
    NetRx {
        port: u16,
    },
    /// A block request completed, handed on by the driver domain.
    BlockDone,
    /// The driver domain sent the guest's packets on (netback's transmit responses free netfront's ring slots).
    NetTxDone,
    /// The disk interrupt of a driver domain's own request.
    DiskInterrupt,
    /// A guest timer of one of its tasks.
    Timer,
    /// The guest's block-layer unplug timer.
    UnplugTimer,
    /// The guest's CPU balloon is armed (xBalloon's virtual IRQ).
    BalloonVirq,
    /// An inter-processor interrupt inside the guest: a pipe message or a barrier release.
    PipeIpi,
    BarrierIpi,
    /// A PV spinlock's releaser kicks a halted waiter (`KVM_HC_KICK_CPU`).
    LockKick,
    /// A TLB-flush IPI of a shootdown.
    TlbIpi,
}

/// A partial boost given or revoked (task-aware scheduling), for the trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BoostMark {
    Boost,
    Revoke,
}

impl BoostMark {
    /// The mark as the trace names it.
    pub fn as_str(self) -> &'static str {
        match self {
            BoostMark::Boost => "boost",
            BoostMark::Revoke => "revoke",
        }
    }
}

/// The kind of item that kicked a driver domain's backend.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BackendWork {
    NetRx,
    NetTx,
    BlockRequest,
    DiskInterrupt,
}

impl WakeCause {
    /// The cause as reasons name it (a packet's port is added by `Display`).
    pub fn as_str(self) -> &'static str {
        match self {
            WakeCause::Boot => "boot",
            WakeCause::Unpause => "unpark",
            WakeCause::BalloonPauseEnds => "event (balloon pause ends)",
            WakeCause::Backend(BackendWork::NetRx) => "net rx (backend)",
            WakeCause::Backend(BackendWork::NetTx) => "net tx (backend)",
            WakeCause::Backend(BackendWork::BlockRequest) => "block request (backend)",
            WakeCause::Backend(BackendWork::DiskInterrupt) => "disk interrupt (backend)",
            WakeCause::NetRx { .. } => "net rx",
            WakeCause::BlockDone => "block I/O done",
            WakeCause::NetTxDone => "net tx done",
            WakeCause::DiskInterrupt => "disk interrupt",
            WakeCause::Timer => "timer",
            WakeCause::UnplugTimer => "block unplug timer",
            WakeCause::BalloonVirq => "balloon VIRQ",
            WakeCause::PipeIpi => "pipe IPI",
            WakeCause::BarrierIpi => "barrier IPI",
            WakeCause::LockKick => "PV spinlock kick",
            WakeCause::TlbIpi => "TLB shootdown IPI",
        }
    }
}

impl fmt::Display for WakeCause {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            WakeCause::NetRx { port } if *port != 0 => write!(f, "net rx port {port}"),
            other => f.write_str(other.as_str()),
        }
    }
}

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
    /// For a driver domain with a backend thread per domain served: per vCPU, the one domain whose backend that
    /// vCPU carries alone (KVM runs such a vhost worker in its VM's cgroup); empty otherwise.
    pub backend_for: Vec<Option<DomId>>,
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
/// A line can also be kept as its facts, worded only when the decision log is read (`Ctx::note_facts`), and
/// `do_schedule` can explain its pick that way (`Ctx::explain_pick`).
#[derive(Debug, Default, Clone)]
pub struct Notes {
    text: String,
    /// Each line's pCPU and what it says.
    lines: Vec<(PcpuId, Line)>,
    /// The facts behind the last `do_schedule`'s pick, when it gave them rather than a text reason.
    pick: Option<Facts>,
}

/// A line of [`Notes`]: a byte range in its text, or facts.
#[derive(Debug, Clone, Copy)]
enum Line {
    Text(usize, usize),
    Facts(Facts),
}

/// A line as [`Notes::drain`] hands it out.
pub enum Said<'a> {
    Text(&'a str),
    Facts(Facts),
}

impl Notes {
    /// Hands out every line in order, then empties the buffer (keeping its allocation).
    pub fn drain(&mut self, mut each: impl FnMut(PcpuId, Said<'_>)) {
        for &(p, line) in &self.lines {
            match line {
                Line::Text(a, b) => each(p, Said::Text(&self.text[a..b])),
                Line::Facts(f) => each(p, Said::Facts(f)),
            }
        }
        self.lines.clear();
        self.text.clear();
    }

    /// The facts `do_schedule` gave for its pick (see `Ctx::explain_pick`), taken.
    pub fn take_pick(&mut self) -> Option<Facts> {
        self.pick.take()
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
    /// Whether anyone keeps partial-boost marks (a traced run, or a replay run's overview): batch runs do not.
    pub keep_marks: bool,
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
            self.notes.lines.push((p, Line::Text(start, self.notes.text.len())));
        }
    }
    /// Adds a line to the decision log as its facts (worded when the log is read), when the run records
    /// explanations. `facts` is built only then.
    pub fn note_facts(&mut self, p: PcpuId, facts: impl FnOnce() -> Facts) {
        if self.explain {
            self.notes.lines.push((p, Line::Facts(facts())));
        }
    }
    /// Explains `do_schedule`'s pick by its facts instead of `Pick::reason` (which then stays empty), when
    /// the run records explanations. `facts` is built only then.
    pub fn explain_pick(&mut self, facts: impl FnOnce() -> Facts) {
        if self.explain {
            self.notes.pick = Some(facts());
        }
    }
    pub fn name(&self, v: VcpuId) -> &str {
        &self.host.vcpu_name[v.0]
    }
}

/// The outcome of `do_schedule`: who runs next on the pCPU, for how long at most, and why.
#[derive(Debug, Clone)]
pub struct Pick {
    pub next: Option<VcpuId>,
    /// Time until the engine calls `do_schedule` again on this pCPU unless something preempts [ns].
    pub slice: Nanos,
    pub reason: String,
}

/// The master pCPU: host-wide accounting runs on it (Credit's `master`, the hybrid scheduler's BSP).
pub const MASTER_PCPU: PcpuId = PcpuId(0);

/// Periodic timers a policy wants.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timers {
    /// Per-pCPU tick period [ns].
    pub tick: Option<Nanos>,
    /// Host-wide accounting period, on the master pCPU's own timer [ns].
    pub account: Option<Nanos>,
    /// The tick stops while its pCPU idles and restarts on the tick grid when it gets work (Xen 3.4+).
    pub tick_stops_idle: bool,
    /// The policy's timers fire in Xen's timer-slop window (see `sim::timing`). Every Xen scheduler's are (the
    /// reservation schedulers charge what ran and carry an overrun into the next period, as `desched_edf_dom`
    /// does); off only for a model that is not a Xen scheduler.
    pub timer_slop: bool,
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

pub use crate::model::PriClass;

/// A vCPU's priority as a policy reports it: the policy's own word for it (`label`: "BOOST", "L0", "CON") and
/// what that word means to the views (`class`). Built-in policies' labels are static; a script's are made at run
/// time.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Pri {
    pub class: PriClass,
    pub label: Cow<'static, str>,
}

impl Pri {
    /// A built-in label of a known class.
    pub const fn new(class: PriClass, label: &'static str) -> Pri {
        Pri { class, label: Cow::Borrowed(label) }
    }

    /// A label made at run time, classed by [`PriClass::of_label`].
    pub fn from_label(label: impl Into<Cow<'static, str>>) -> Pri {
        let label = label.into();
        Pri { class: PriClass::of_label(&label), label }
    }
}

/// A vCPU as the policy sees it, for the trace and the run-queue view.
#[derive(Debug, Clone, PartialEq)]
pub struct VcpuSched {
    /// Priority: the policy's label and its class.
    pub pri: Pri,
    /// Remaining credit (policy units), when the policy has credits.
    pub credit: Option<i64>,
}

/// A scheduling policy. Boxed policies clone (`dyn_clone`): a simulation checkpoint holds the policy's whole state.
pub trait Policy: dyn_clone::DynClone + crate::size::HeapSize {
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
    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx);
    /// A vCPU stopped being runnable (blocked or paused). If it is running, the engine reschedules its pCPU.
    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx);
    /// Choose what runs next on `p`. `cur` is what ran until now, `cur_runnable` whether it could go on.
    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick;
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
    /// The guest on `v` handled the events it was scheduled with and returned to `task`, the task it was running,
    /// without a switch. Xen sees this return to user mode (on x86-64 a PV guest's user and kernel run on separate
    /// page tables that Xen switches on the iret hypercall), as it sees a CR3 load.
    fn guest_resumed(&mut self, _v: VcpuId, _task: TaskId, _ctx: &mut Ctx) {}
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
    /// marks (vCPU, boost or revoke; only kept while `Ctx::keep_marks` is on, so batch runs do not grow a list
    /// nobody reads). One call after every hook, into buffers the engine reuses.
    fn drain_marks(&mut self, _beliefs: &mut Vec<(TaskId, i64)>, _boosts: &mut Vec<(VcpuId, BoostMark)>) {}
    /// Hypervisor time spent on `v` to observe one guest address-space switch (task tracking): charged to the
    /// vCPU, not given to its guest [ns]. Zero for policies that do not track tasks.
    fn tracking_cost(&self, _v: VcpuId) -> Nanos {
        Nanos::ZERO
    }
    /// A blocked vCPU still on its pCPU got work: the engine resumes it there, with no trip through `wake` and
    /// `do_schedule` (a vCPU that halted while its host polls, or one whose pCPU has not rescheduled yet).
    fn woke_on_pcpu(&mut self, _v: VcpuId, _ctx: &mut Ctx) {}
    /// Host time the policy accounts for domain `dom` (its index) that the engine cannot see, since boot up to
    /// `now`, if the policy has any (cgroup throttling, halt polling).
    fn domain_times(&self, _dom: usize, _now: Nanos) -> Option<DomainTimes> {
        None
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
    /// An error that stops the run, taken once (a script policy's runtime error or bad return value, worded for
    /// the user). The engine asks after every event; native policies have none.
    fn take_fault(&mut self) -> Option<String> {
        None
    }
    /// The interpreter's operations spent so far (a script policy's hooks, copying counted), for the cost
    /// estimate's sample; 0 for a native policy.
    fn script_operations(&self) -> u64 {
        0
    }
    /// How the policy divides the host among busy domains (the report's `entitled_share` and `fairness.rule`).
    fn share_rule(&self) -> ShareBasis {
        ShareBasis::DomainWeight
    }
    /// Pause-loop exiting: vCPU `v`'s PAUSE-loop window [cycles], or `None` when the host does not exit on spin
    /// loops (every policy but a KVM host with PLE on).
    fn ple_window(&self, _v: VcpuId) -> Option<u64> {
        None
    }
    /// vCPU `v` exited on a PAUSE loop; `owes_ipi[x]`: vCPU `x` has an IPI from `v` it has not yet taken (it is
    /// not running). The policy may grow the window and yield the pCPU.
    fn pause_exit(&mut self, _v: VcpuId, _owes_ipi: &[bool], _ctx: &mut Ctx) {}
}

/// A domain's host time as its policy accounts it, cumulative (see [`Policy::domain_times`]).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct DomainTimes {
    /// It has a bandwidth limit (`cpu.max`), so the throttling figures apply.
    pub limited: bool,
    /// Its host polls halting vCPUs, so the halt-polling figures apply.
    pub polls: bool,
    /// Its cgroup's bandwidth limit kept it off every pCPU [ns] (`cpu.stat` `throttled_usec`), and how often
    /// (`nr_throttled`); both 0 without a limit.
    pub throttled_ns: u64,
    pub nr_throttled: u64,
    /// Its halting vCPUs polled on their pCPUs before blocking [ns] (KVM's `halt_poll_success_ns` plus
    /// `halt_poll_fail_ns`).
    pub halt_poll_ns: u64,
    /// Halts that polled (`halt_attempted_poll`), and those a wake-up ended during the poll
    /// (`halt_successful_poll`).
    pub halt_attempted_poll: u64,
    pub halt_successful_poll: u64,
}

impl DomainTimes {
    /// What happened between `earlier` and `self`.
    pub fn since(self, earlier: DomainTimes) -> DomainTimes {
        DomainTimes {
            limited: self.limited,
            polls: self.polls,
            throttled_ns: self.throttled_ns.saturating_sub(earlier.throttled_ns),
            nr_throttled: self.nr_throttled.saturating_sub(earlier.nr_throttled),
            halt_poll_ns: self.halt_poll_ns.saturating_sub(earlier.halt_poll_ns),
            halt_attempted_poll: self.halt_attempted_poll.saturating_sub(earlier.halt_attempted_poll),
            halt_successful_poll: self.halt_successful_poll.saturating_sub(earlier.halt_successful_poll),
        }
    }
}

/// What a policy entitles a domain to when every domain is busy.
#[derive(Debug, Clone, PartialEq)]
pub enum ShareBasis {
    /// Weighted max-min by domain weight, bounded by the vCPUs and the cap (Credit 3.x, the hybrid's per-VM
    /// weight, and every policy that weighs domains).
    DomainWeight,
    /// Weighted max-min by weight x vCPUs (Credit 4.1+, Credit2: weights count per vCPU).
    VcpuWeight,
    /// Reservations: each domain's reserved CPU in pCPUs (SEDF's slice / period over its vCPUs); extra time is
    /// not an entitlement.
    Reserved(Vec<f64>),
}

impl ShareBasis {
    /// Its name in the report.
    pub fn name(&self) -> &'static str {
        match self {
            ShareBasis::DomainWeight => "domain_weight",
            ShareBasis::VcpuWeight => "vcpu_weight",
            ShareBasis::Reserved(_) => "reservation",
        }
    }
}

dyn_clone::clone_trait_object!(Policy);

crate::size::heap_size!(DomainInfo { name, vcpus });
crate::size::no_heap!(Action, BoostMark);

#[cfg(test)]
mod tests {
    use super::*;

    /// A free label (a script's) gets the class its usual word names, whatever its case; others are `Other`.
    #[test]
    fn free_labels_are_classed_by_their_words() {
        assert_eq!(PriClass::of_label("BOOST"), PriClass::Boost);
        assert_eq!(PriClass::of_label("under"), PriClass::Under);
        assert_eq!(PriClass::of_label("Over"), PriClass::Over);
        assert_eq!(PriClass::of_label("IDLE"), PriClass::Idle);
        assert_eq!(PriClass::of_label("PARKED"), PriClass::Parked);
        assert_eq!(PriClass::of_label("L2"), PriClass::Other);
        assert_eq!(PriClass::of_label(""), PriClass::Other);
        let p = Pri::from_label(String::from("boost"));
        assert_eq!((p.class, p.label.as_ref()), (PriClass::Boost, "boost"));
        assert_eq!(serde_json::to_value(PriClass::Reserved).unwrap(), "reserved");
    }
}
