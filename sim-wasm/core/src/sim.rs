//! The discrete-event engine: one queue ordered by (time, seq), the vCPU state machine, the guest kernel's
//! scheduler, the workloads and the split-driver I/O path. Policies decide; this module acts and records.
//!
//! I/O path (as in Xen's split drivers): a client's request crosses the wire to the NIC; the driver domain's
//! backend handles it in a batch, then sends an event-channel notification to the guest vCPU. The notification
//! is delivered only when that vCPU runs (the latency the papers study); the guest kernel takes the upcall, runs
//! its network stack, then wakes the server task, which may preempt the guest's current task. The response goes
//! back through the driver domain. What switches, upcalls and stacks cost comes from the host profile
//! ([`crate::costs`]): that CPU is the vCPU's, but its current task makes no progress meanwhile.

mod build;
mod guest;
mod io;
mod lock;
mod queue;
mod record;
mod replay;
mod schedule;
pub(crate) mod sendbuf;
mod smt;
mod view;
pub use view::{Meta, MetaDomain, MetaTask, MetaVcpu};
pub(crate) mod timing;
mod work;

use crate::costs::HostCosts;
use crate::metrics::{Distribution, DomMetrics, TaskMetrics};
use crate::model::*;
use crate::overview::InferenceBuckets;
use crate::policy::registry::{self, Caps};
use crate::policy::{self, Action, Ctx, DomainInfo, HostView, Pick, Policy, WakeCause, MASTER_PCPU};
use crate::rng::Stream;
use crate::scenario::{GuestClock, GuestScheduler, GuestSpec, Priority, Role, Scenario};
use crate::tcp::Arrival;
use crate::time::{ms_to_ns, us_to_ns, Nanos};
use crate::trace::{BeliefRec, BoostRec, IoRec, RqEntry, Segment, SpinRec, TaskRec, Trace, VcpuUsage};
use queue::EventQueue;
use record::Recording;
use replay::Replay;
pub use replay::{Detail, Window};
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;
use timing::{grid_after, HostTiming, TimerKind};

/// Events one simulated second may take, on average, before the run is stopped as runaway.
const EVENTS_PER_SIM_SECOND_BUDGET: u64 = 20_000_000;

/// Why a run could not start or stopped, by the layer that found the problem.
#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    /// The run asked for a policy id the scenario does not have.
    UnknownPolicy(String),
    /// A run option does not fit the scenario (e.g. `--duration-ms`); the text names the option.
    Options(String),
    /// The scheduler refused its parameters for this host (the text names the field).
    PolicySetup { policy: String, error: String },
    /// The engine caught an inconsistency, such as a policy choosing a vCPU that runs elsewhere.
    Engine(String),
    /// The policy stopped the run: a script policy's runtime error, limit or bad return value (the text names the
    /// policy, the hook, the simulated time and the script line).
    Policy(String),
    /// The run passed its events per simulated second budget: a runaway scenario.
    EventBudget { events: u64, at_ns: u64 },
    /// The run's work ([`Simulation::work`]) passed the limit it was given (`--max-events`).
    WorkLimit { work: u64, limit: u64, at_ns: u64 },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::UnknownPolicy(id) => write!(f, "no policy with id '{id}' in this scenario"),
            SimError::Options(e) => write!(f, "invalid run option: {e}"),
            SimError::PolicySetup { policy, error } => write!(f, "policy '{policy}' cannot be set up: {error}"),
            SimError::Engine(e) => write!(f, "engine fault: {e}"),
            SimError::Policy(e) => f.write_str(e),
            SimError::EventBudget { events, at_ns } => write!(
                f,
                "run stopped: {events} events by {:.3} ms of simulated time exceeds the event budget (a runaway scenario?)",
                *at_ns as f64 / 1e6
            ),
            SimError::WorkLimit { work, limit, at_ns } => write!(
                f,
                "run stopped at {:.3} ms of simulated time: its work ({work} units: events plus the guest run-queue \
                 entries and threads they walk) passed the limit of {limit}; raise the limit (--max-events, \
                 max_events in Python) to let it finish",
                *at_ns as f64 / 1e6
            ),
        }
    }
}

impl std::error::Error for SimError {}

#[derive(Debug, Clone, Copy)]
enum Ev {
    Schedule(PcpuId),
    SliceEnd(PcpuId),
    Tick(PcpuId),
    Account,
    /// The current guest task's burst or guest slice ends (see [`Timer`]).
    Guest(VcpuId),
    /// A packet from outside reaches the host's NIC.
    NicRx(Packet),
    /// A packet from the host reaches a machine outside.
    PeerRx(Packet),
    /// A peer's own timer: a client's think time ends, or a stream client's buffer runs dry.
    PeerTimer(PeerId),
    /// The disk finished a request.
    DiskDone {
        task: TaskId,
        bytes: u32,
        issued_at: Nanos,
    },
    /// A guest timer of a task fires (a virtual timer interrupt to its vCPU).
    TaskTimer(TaskId),
    /// A vCPU's block-layer unplug timer expires.
    Unplug(VcpuId),
    /// A timer the policy asked for.
    PolicyTimer,
    /// The guest on a vCPU finished the event handling it was scheduled with and returns to this task, which it
    /// was running before (no task switch).
    Resumed(VcpuId, TaskId),
    Change(usize),
    /// A vCPU's PAUSE-loop window runs out (KVM's pause-loop exiting), if it still spins.
    Ple(VcpuId),
}

/// How a run records.
#[derive(Debug, Clone, Copy)]
pub struct SimOptions {
    /// Record the trace (segments, decisions with reasons, run queues) for replay. Batch runs turn it off:
    /// reports never read it, and policies then skip formatting explanations.
    pub trace: bool,
    /// Memory budget for trace detail [bytes]; per-domain CPU aggregates are kept for the whole run regardless.
    pub trace_budget_bytes: usize,
    /// The host cost profile ([`crate::costs::PROFILE`]; tests of the mechanisms may pass another).
    pub costs: HostCosts,
    /// Stop the run with [`SimError::EventBudget`] after this many events (`--max-events`); `None`: only the
    /// built-in runaway budget per simulated second.
    pub max_events: Option<u64>,
    /// The whole trace ([`Detail::Full`]) or the overview plus checkpoints, detail replayed on demand.
    pub detail: Detail,
    /// Most memory the checkpoints of a [`Detail::Replay`] run take: past it every other one is dropped and the
    /// interval doubles [bytes].
    pub checkpoint_budget_bytes: usize,
    /// A [`Detail::Replay`] run records full detail from the start up to here as it passes, and then holds it as
    /// its focused window (the page's opening view needs no replay) [ns]; 0: none.
    pub opening_ns: u64,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions {
            trace: true,
            trace_budget_bytes: crate::trace::DEFAULT_BUDGET_BYTES,
            costs: crate::costs::PROFILE,
            max_events: None,
            detail: Detail::Full,
            checkpoint_budget_bytes: replay::DEFAULT_CHECKPOINT_BUDGET_BYTES,
            opening_ns: 0,
        }
    }
}

/// One policy's run of one scenario. Its state is grouped by concern, so that each part of the engine touches
/// only the groups it needs: the host ([`HostState`]), the guests' tasks ([`Guests`], the guest kernel in
/// `guest.rs`), the I/O path ([`io::IoState`]), what the report measures ([`Measurement`]) and what the trace
/// records ([`Recording`]).
pub struct Simulation {
    /// Shared with the run's checkpoints.
    pub(crate) scenario: Arc<Scenario>,
    pub(crate) policy_id: String,
    pub(crate) now: Nanos,
    pub(crate) end: Nanos,
    pub(crate) warmup: Nanos,
    queue: EventQueue<Ev>,
    /// Each vCPU's guest-timer events still queued, so that superseded ones cannot pile up (`push_guest_timer`).
    guest_events: queue::Owners,
    /// Events processed per kind, when SCHEDSIM_DEBUG_QUEUE is set (a profiling aid).
    debug_counts: Option<std::collections::BTreeMap<String, u64>>,
    pub(crate) events: u64,
    event_budget: u64,
    /// Guest run-queue entries and barrier threads the engine walked so far: with the events, the run's work in
    /// the units `--max-events` limits (an event's own work grows with the tasks it looks at, so events alone
    /// do not bound a run's time).
    scanned: std::cell::Cell<u64>,
    /// Most work the run may do ([`Simulation::work`]): `--max-events`; unlimited without it.
    work_limit: u64,
    finished: bool,
    pub(crate) policy: Box<dyn Policy>,
    /// What the host's mechanisms cost (switches, upcalls, the I/O path).
    pub(crate) costs: HostCosts,
    actions: Vec<Action>,
    /// The batch of actions being carried out, kept between events so that no batch allocates.
    action_batch: Vec<Action>,
    /// Whether the policy may leave belief changes or partial-boost marks after a hook (task-aware Credit), so
    /// that other policies skip asking after every hook.
    marks: bool,
    notes: policy::Notes,
    /// An internal inconsistency that stops the run (reported by `step` as an error).
    fault: Option<SimError>,
    pub(crate) host: HostState,
    pub(crate) guests: Guests,
    io: io::IoState,
    pub(crate) measure: Measurement,
    rec: Recording,
    /// Checkpoints and the focused window, in [`Detail::Replay`] mode.
    replay: Option<Box<Replay>>,
}

/// The hypervisor's view of the host: pCPUs, vCPUs and domains.
#[derive(Clone)]
pub(crate) struct HostState {
    pub(crate) pcpus: Vec<Pcpu>,
    /// The vCPU on each pCPU (the policies' `HostView::running`).
    running: Vec<Option<VcpuId>>,
    pub(crate) vcpus: Vec<Vcpu>,
    /// Each vCPU's domain and short name, for the policies' `HostView`.
    vcpu_dom: Vec<DomId>,
    vcpu_name: Vec<String>,
    pub(crate) dom_info: Vec<DomainInfo>,
    pub(crate) kinds: Vec<crate::workload::DomKinds>,
    /// When the pCPUs' timers fire (Xen's timer slop, per-pCPU tickers).
    timing: HostTiming,
    /// The cores' threads (SMT).
    pub(crate) topology: smt::Topology,
}

/// What runs inside the guests.
#[derive(Clone)]
pub(crate) struct Guests {
    pub(crate) tasks: Vec<Task>,
    pub(crate) groups: Vec<BarrierGroup>,
    /// Each domain's guest kernel settings.
    kernel: Vec<GuestSpec>,
    /// Each domain's spinlock and the vCPUs' pause-loop exits.
    pub(crate) locks: lock::Locks,
}

/// What the report reads, kept whether or not the trace is recorded.
pub(crate) struct Measurement {
    pub(crate) dom_metrics: Vec<DomMetrics>,
    pub(crate) task_metrics: Vec<TaskMetrics>,
    /// Busy time of all pCPUs within the measured window [ns].
    pub(crate) busy_ns: u64,
    /// Notifications handed to a guest whose vCPU was not on a pCPU (must stay 0: delivery waits for the vCPU).
    early_deliveries: u64,
    /// Balloon pauses while an event waited for the guest or a task it woke was runnable (must stay 0).
    pub(crate) balloon_violations: u64,
    /// CPU each vCPU received over time, for Lag (paper 001).
    pub(crate) usage: VcpuUsage,
    pub(crate) wall_ns: u64,
    /// When a scenario change was last applied to the policy (the run's start if none) [ns]: each task's
    /// `io_bound_after_ms` in the report counts from here.
    pub(crate) last_change_at: Nanos,
    /// The policy's partial boosts and hits when the measured window began (taken by the first event at or after
    /// the warm-up), so the report counts only the window's, as every other metric.
    pb_at_warmup: Option<(u64, u64)>,
    /// Each domain's policy-accounted host time when the measured window began (taken with `pb_at_warmup`).
    times_at_warmup: Option<Vec<Option<policy::DomainTimes>>>,
    /// The cores' figures (SMT hosts only).
    pub(crate) cores: smt::CoreMetrics,
}

impl Measurement {
    /// Nothing measured yet; `end` sizes the per-vCPU usage record (0: none, as in checkpoints).
    fn new(ndom: usize, ntasks: usize, nvcpus: usize, end: Nanos) -> Measurement {
        Measurement {
            dom_metrics: (0..ndom).map(|_| DomMetrics::default()).collect(),
            task_metrics: (0..ntasks).map(|_| TaskMetrics::default()).collect(),
            busy_ns: 0,
            early_deliveries: 0,
            balloon_violations: 0,
            usage: VcpuUsage::new(nvcpus, end.0),
            wall_ns: 0,
            last_change_at: Nanos::ZERO,
            pb_at_warmup: None,
            times_at_warmup: None,
            cores: smt::CoreMetrics::default(),
        }
    }
}

impl Simulation {
    /// Builds the host of `scenario` under the policy with id `policy_id`, recording the full trace.
    pub fn new(scenario: &Scenario, policy_id: &str) -> Result<Simulation, SimError> {
        Simulation::with_options(scenario, policy_id, SimOptions::default())
    }

    /// Builds the host with explicit recording options.
    pub fn with_options(scenario: &Scenario, policy_id: &str, opts: SimOptions) -> Result<Simulation, SimError> {
        let spec = scenario.policy(policy_id).ok_or_else(|| SimError::UnknownPolicy(policy_id.to_string()))?;
        let pcpus = scenario.host.pcpus as usize;
        let end = Nanos::from_ms(scenario.duration_ms);
        let warmup = Nanos::from_ms(scenario.warmup_ms);
        let b = build::build(scenario, &opts.costs);
        let net = &scenario.host.net;
        let link = |dir: &str, queue_limit| Link {
            free_at: Nanos::ZERO,
            ns_per_byte: 8000.0 / net.mbps,
            latency: us_to_ns(net.latency_us),
            jitter_ns: us_to_ns(net.jitter_us),
            rng: Stream::new(scenario.seed, dir),
            last_arrival: Nanos::ZERO,
            queued: VecDeque::new(),
            queue_limit,
        };
        let vcpu_dom: Vec<DomId> = b.vcpus.iter().map(|v| v.dom).collect();
        let vcpu_name: Vec<String> = b.vcpus.iter().map(|v| v.name.clone()).collect();
        let types: Vec<_> = scenario.domains.iter().map(|d| d.kind).collect();
        let setup = registry::Setup {
            params: &spec.params,
            pcpus,
            domains: &b.dom_info,
            types: &types,
            seed: scenario.seed,
            policy_id,
            threads_per_core: scenario.host.threads_per_core.max(1) as usize,
            cores_per_socket: scenario.host.cores_per_socket.map(|c| c as usize),
        };
        let policy = registry::build(&spec.scheduler, &setup)
            .map_err(|error| SimError::PolicySetup { policy: policy_id.to_string(), error })?;
        let slop = policy.timers().timer_slop;
        let replaying = matches!(opts.detail, Detail::Replay { .. });
        // A replay run records no detail itself past its opening window: its windows are replayed with full
        // detail (and, like them, the opening window has no budget).
        let opening = replaying && opts.opening_ns > 0;
        let on = opts.trace && (!replaying || opening);
        let budget = match (on, replaying) {
            (false, _) => 0,
            (true, false) => opts.trace_budget_bytes,
            (true, true) => usize::MAX,
        };
        let mut trace =
            Trace::with_budget(pcpus, vcpu_dom.iter().map(|d| d.0).collect(), b.dom_info.len(), end.0, budget);
        trace.set_vcpu_names(vcpu_name.as_slice().into());
        let ndom = b.dom_info.len();
        let ntasks = b.tasks.len();
        let nvcpus = b.vcpus.len();
        let mut sim = Simulation {
            scenario: Arc::new(scenario.clone()),
            policy_id: policy_id.to_string(),
            now: Nanos::ZERO,
            end,
            warmup,
            queue: EventQueue::default(),
            guest_events: queue::Owners::new(nvcpus),
            debug_counts: std::env::var_os("SCHEDSIM_DEBUG_QUEUE").map(|_| Default::default()),
            events: 0,
            event_budget: EVENTS_PER_SIM_SECOND_BUDGET.saturating_mul(scenario.duration_ms.div_ceil(1000).max(1)),
            scanned: std::cell::Cell::new(0),
            work_limit: opts.max_events.unwrap_or(u64::MAX),
            finished: false,
            policy,
            costs: opts.costs,
            actions: Vec::new(),
            action_batch: Vec::new(),
            marks: false,
            notes: policy::Notes::default(),
            fault: None,
            host: HostState {
                pcpus: (0..pcpus)
                    .map(|_| Pcpu {
                        running: None,
                        seg_start: Nanos::ZERO,
                        seg_task: None,
                        slice_timer: Timer::default(),
                        resched_pending: false,
                        slice_expired: false,
                        last_dom: None,
                    })
                    .collect(),
                running: vec![None; pcpus],
                vcpus: b.vcpus,
                vcpu_dom,
                vcpu_name,
                dom_info: b.dom_info,
                kinds: b.kinds,
                timing: HostTiming::new(scenario.seed, pcpus, scenario.host.timing, slop),
                topology: smt::Topology { threads_per_core: scenario.host.threads_per_core.max(1) as usize },
            },
            guests: Guests {
                tasks: b.tasks,
                groups: b.groups,
                kernel: scenario.domains.iter().map(|d| d.guest.clone()).collect(),
                locks: lock::Locks::default(),
            },
            io: io::IoState {
                plugged: Vec::new(),
                peers: b.peers,
                driver_task_of: b.driver_task_of,
                // Inbound, the switch's buffer is not the host's and has no cited size; what comes in is bounded
                // by the peers themselves (closed-loop clients, TCP's windows). Outbound, the driver domain's NIC
                // queue bounds what the guests send.
                link_in: link("wire/in", usize::MAX),
                link_out: link("wire/out", opts.costs.nic_tx_queue),
                disk: b.disk,
                packets_sent: 0,
                packets_consumed: 0,
                packets_dropped: 0,
                notified: Vec::new(),
            },
            measure: Measurement::new(ndom, ntasks, nvcpus, end),
            rec: Recording::new(trace, on, pcpus),
            replay: None,
        };
        sim.marks = sim.policy_marks();
        if let Detail::Replay { checkpoint_every_ns } = opts.detail {
            // The first checkpoint is taken before the host boots, so that a replay from it records the boot.
            let opening = (on && opening).then_some(Nanos(opts.opening_ns));
            sim.replay = Some(Box::new(Replay::new(&sim, checkpoint_every_ns, opts.checkpoint_budget_bytes, opening)));
            // After the checkpoint at 0: a replay records into its window's trace, not into the overview.
            sim.rec.inference = Some(InferenceBuckets::new(end.0, ntasks));
        }
        sim.boot();
        Ok(sim)
    }

    fn push(&mut self, at: Nanos, ev: Ev) {
        self.queue.push(at, ev);
    }

    /// Arms pCPU `p`'s ticker for `deadline` (it fires in the slop window after it).
    fn arm_tick(&mut self, p: PcpuId, deadline: Nanos) {
        if let Some(at) = self.host.timing.arm_tick(p.0, deadline) {
            self.push(at, Ev::Tick(p));
        }
    }

    /// Queues vCPU `v`'s guest-timer event at `at`. The timer asks only when `at` is earlier than its queued one,
    /// which is left behind; the queue keeps a few of those per vCPU and cancels older ones (a loop of
    /// 1 us bursts left one per burst until the slice ended).
    pub(crate) fn push_guest_timer(&mut self, v: VcpuId, at: Nanos) {
        self.queue.push_replacing(&mut self.guest_events, v.0, at, self.end, Ev::Guest(v));
    }

    fn boot(&mut self) {
        let timers = self.policy.timers();
        for v in 0..self.host.vcpus.len() {
            // The policy keeps its own placement; the engine learns it when the vCPU runs.
            self.with_ctx(|pol, ctx| pol.init_vcpu(VcpuId(v), ctx));
        }
        if let Some(t) = timers.tick.filter(|_| !timers.tick_stops_idle) {
            // Every pCPU's ticker is armed at once (3.0.4 `schedulers_start`, 3.2 `csched_start_tickers`); they
            // leave phase as each re-arms from its own firing. A ticker that stops while idle starts with work.
            for p in 0..self.host.pcpus.len() {
                self.arm_tick(PcpuId(p), t);
            }
        }
        if let Some(a) = timers.account {
            let at = self.host.timing.fire_at(MASTER_PCPU.0, TimerKind::Account, a);
            self.push(at, Ev::Account);
        }
        for (i, ch) in self.scenario.changes.clone().iter().enumerate() {
            if ch.policy == self.policy_id {
                self.push(Nanos::from_ms(ch.at_ms), Ev::Change(i));
            }
        }
        self.boot_workloads();
        for v in 0..self.host.vcpus.len() {
            if !self.host.vcpus[v].runnable.is_empty() {
                self.vcpu_make_runnable(VcpuId(v), WakeCause::Boot);
            }
        }
        self.apply_actions();
        self.snapshot_runqueues();
    }

    fn with_ctx<R>(&mut self, f: impl FnOnce(&mut dyn Policy, &mut Ctx) -> R) -> R {
        let mut ctx = Ctx {
            now: self.now,
            host: HostView {
                pcpus: self.host.pcpus.len(),
                running: &self.host.running,
                vcpu_dom: &self.host.vcpu_dom,
                vcpu_name: &self.host.vcpu_name,
                domains: &self.host.dom_info,
            },
            actions: &mut self.actions,
            notes: &mut self.notes,
            explain: self.rec.on,
            keep_marks: self.rec.on || self.rec.inference.is_some(),
        };
        let r = f(self.policy.as_mut(), &mut ctx);
        self.rec.rq_dirty = true;
        // Drained whether or not anyone records them, so batch runs do not pile them up.
        if self.marks {
            self.policy.drain_marks(&mut self.rec.belief_buf, &mut self.rec.boost_buf);
            if !self.rec.belief_buf.is_empty() || !self.rec.boost_buf.is_empty() {
                self.take_marks();
            }
        }
        let (trace, now) = (&mut self.rec.trace, self.now.0);
        self.notes.drain(|p, said| match said {
            policy::Said::Text(text) => trace.push_decision(now, p.0, text),
            policy::Said::Facts(f) => trace.push_decision_facts(now, p.0, "", f),
        });
        r
    }

    /// Whether the policy infers task types or boosts partially (task-aware Credit): only then can a hook leave
    /// belief changes or partial-boost marks.
    fn policy_marks(&self) -> bool {
        self.policy.belief_threshold().is_some() || self.policy.partial_boosts().is_some()
    }

    /// Records when a task is first inferred I/O-bound after the last change (adaptation time in the report).
    fn note_inferred(&mut self, t: TaskId) {
        if self.measure.task_metrics[t.0].inferred_io_at.is_none()
            && self.policy.task_belief(t).is_some_and(|(_, io)| io)
        {
            self.measure.task_metrics[t.0].inferred_io_at = Some(self.now);
        }
    }

    fn apply_actions(&mut self) {
        while !self.actions.is_empty() {
            // Swapped, not taken: both buffers keep their capacity (a nested call finds the spare one empty).
            let mut batch = std::mem::replace(&mut self.actions, std::mem::take(&mut self.action_batch));
            for a in batch.drain(..) {
                match a {
                    Action::Resched(p) => self.resched(p),
                    Action::Pause(v) => {
                        self.host.vcpus[v.0].paused = true;
                        match self.host.vcpus[v.0].on_pcpu {
                            Some(p) => self.resched(p),
                            None if self.host.vcpus[v.0].state == VState::Runnable => {
                                self.with_ctx(|pol, ctx| pol.sleep(v, ctx));
                            }
                            None => {}
                        }
                    }
                    Action::Unpause(v) | Action::Resume(v) => {
                        self.host.vcpus[v.0].paused = false;
                        if self.host.vcpus[v.0].on_pcpu.is_none() && self.host.vcpus[v.0].state == VState::Runnable {
                            let cause =
                                if a == Action::Unpause(v) { WakeCause::Unpause } else { WakeCause::BalloonPauseEnds };
                            self.with_ctx(|pol, ctx| pol.wake(v, cause, ctx));
                        }
                    }
                    Action::Timer(at) => self.push(at.max(self.now), Ev::PolicyTimer),
                    Action::ArmBalloon(v) => {
                        if let Some(b) = self.host.vcpus[v.0].balloon {
                            if self.guests.tasks[b.0].state == TState::Blocked {
                                self.post_event(v, GuestEvent::Virq(b), None, WakeCause::BalloonVirq);
                            }
                        }
                    }
                }
            }
            self.action_batch = batch;
        }
    }

    fn resched(&mut self, p: PcpuId) {
        if !self.host.pcpus[p.0].resched_pending {
            self.host.pcpus[p.0].resched_pending = true;
            self.push(self.now, Ev::Schedule(p));
        }
    }

    /// Advances by at most `max_events` events. Returns true once the run has reached its duration.
    pub fn step(&mut self, max_events: u64) -> Result<bool, SimError> {
        if self.finished {
            return Ok(true);
        }
        // A fault while the host booted (a script's init or init_vcpu), before any event.
        if let Some(e) = self.policy.take_fault() {
            return Err(SimError::Policy(e));
        }
        for _ in 0..max_events {
            let limit = self.replay.as_ref().map_or(self.end, |r| r.next_stop().min(self.end));
            let Some((at, ev)) = self.queue.pop_before(limit) else {
                if limit < self.end {
                    // Every event before the boundary is processed and none after it: the opening window ends
                    // there, or the state is a checkpoint.
                    self.at_boundary(limit);
                    continue;
                }
                break;
            };
            self.process(at, ev)?;
        }
        let done = self.queue.is_done_before(self.end);
        if done {
            self.finish();
        }
        Ok(done)
    }

    /// Processes one event taken out of the queue.
    fn process(&mut self, at: Nanos, ev: Ev) -> Result<(), SimError> {
        {
            if let Some(c) = self.debug_counts.as_mut() {
                let name = format!("{ev:?}");
                *c.entry(name.split(['(', ' ', '{']).next().unwrap_or("").to_string()).or_insert(0u64) += 1;
            }
            self.smt_count(at);
            self.now = at;
            if self.measure.pb_at_warmup.is_none() && at >= self.warmup {
                self.measure.pb_at_warmup = Some(self.policy.partial_boosts().unwrap_or((0, 0)));
                let times = (0..self.host.dom_info.len()).map(|d| self.policy.domain_times(d, at)).collect();
                self.measure.times_at_warmup = Some(times);
            }
            self.events += 1;
            if self.events > self.event_budget {
                return Err(SimError::EventBudget { events: self.events, at_ns: at.0 });
            }
            let work = self.work();
            if work > self.work_limit {
                return Err(SimError::WorkLimit { work, limit: self.work_limit, at_ns: at.0 });
            }
            self.dispatch(ev);
            if let Some(e) = self.fault.take() {
                return Err(e);
            }
            self.apply_actions();
            self.snapshot_runqueues();
            if let Some(e) = self.policy.take_fault() {
                return Err(SimError::Policy(e));
            }
        }
        Ok(())
    }

    /// Runs to the end, recording the wall-clock time it took where the platform has a clock.
    pub fn run(&mut self) -> Result<(), SimError> {
        let t0 = crate::time::WallClock::start();
        while !self.step(100_000)? {}
        self.measure.wall_ns += t0.elapsed_ns();
        Ok(())
    }

    /// Adds wall-clock time measured by the caller (the wasm adapter times runs in JavaScript) [ns].
    pub fn add_wall_ns(&mut self, ns: u64) {
        self.measure.wall_ns += ns;
    }

    fn finish(&mut self) {
        if std::env::var_os("SCHEDSIM_DEBUG_QUEUE").is_some() {
            let mut counts = std::collections::BTreeMap::new();
            for (_, ev) in self.queue.iter() {
                let name = format!("{ev:?}");
                let kind = name.split(['(', ' ', '{']).next().unwrap_or("").to_string();
                *counts.entry(kind).or_insert(0) += 1;
            }
            eprintln!("queue {} slab {} {:?}", self.queue.len(), self.queue.slab_len(), counts);
            eprintln!("processed {:?}", self.debug_counts);
        }
        self.smt_count(self.end);
        self.now = self.end;
        for p in 0..self.host.pcpus.len() {
            if let Some(v) = self.host.pcpus[p].running {
                self.charge(v);
            }
            self.close_segment(PcpuId(p));
        }
        for v in 0..self.host.vcpus.len() {
            if let Some(since) = self.host.vcpus[v].blocked_since {
                self.account_blocked(VcpuId(v), since, self.end);
            }
        }
        // An opening window as long as the run ends with it.
        self.end_opening(self.end);
        self.finished = true;
    }

    pub fn progress(&self) -> f64 {
        if self.finished {
            1.0
        } else {
            self.now.0 as f64 / self.end.0.max(1) as f64
        }
    }

    /// Events processed so far. Guest-timer events cancelled because a re-arm superseded them count as they did
    /// when they stayed queued and fired as no-ops, so the figure is comparable across versions.
    pub fn events(&self) -> u64 {
        self.events + self.queue.superseded()
    }

    /// Work done so far, in the units `--max-events` limits: events processed plus the guest run-queue entries
    /// and barrier threads they walked (what makes an event of a host with thousands of tasks slow).
    pub fn work(&self) -> u64 {
        self.events + self.scanned.get()
    }

    /// Counts `n` entries walked towards [`Simulation::work`].
    fn walked(&self, n: usize) {
        self.scanned.set(self.scanned.get() + n as u64);
    }

    /// Events queued now (cancelled ones not yet dropped included): the queue depth the floor benchmark copies.
    pub fn queued_events(&self) -> usize {
        self.queue.len()
    }

    /// The script policy's interpreting so far, in the engine's operations (0 under a native policy).
    pub fn script_operations(&self) -> u64 {
        self.policy.script_operations()
    }

    /// The simulated time reached [ns].
    pub fn now_ns(&self) -> u64 {
        self.now.0
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    fn in_window(&self, t: Nanos) -> bool {
        t >= self.warmup && t <= self.end
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Schedule(p) => self.schedule(p),
            Ev::SliceEnd(p) => match self.host.pcpus[p.0].slice_timer.fire(self.now) {
                Fire::Due => {
                    self.host.pcpus[p.0].slice_expired = true;
                    self.resched(p);
                }
                Fire::Later(at) => self.push(at, Ev::SliceEnd(p)),
                Fire::Stale => {}
            },
            Ev::Tick(p) => match self.host.timing.tick_fired(p.0, self.now) {
                Fire::Due => {
                    self.with_ctx(|pol, ctx| pol.tick(p, ctx));
                    // Xen re-arms a ticker from the time its handler runs (`NOW() + period`): lateness carries over.
                    if let Some(t) = self.policy.timers().tick {
                        self.arm_tick(p, self.now + t);
                    }
                }
                Fire::Later(at) => self.push(at, Ev::Tick(p)),
                Fire::Stale => {}
            },
            Ev::Account => {
                self.with_ctx(|pol, ctx| pol.account(ctx));
                // On the master pCPU, re-armed from its firing (4.x `master_ticker`: `NOW() + tslice`).
                if let Some(a) = self.policy.timers().account {
                    let at = self.host.timing.fire_at(MASTER_PCPU.0, TimerKind::Account, self.now + a);
                    self.push(at, Ev::Account);
                }
            }
            Ev::Guest(v) => match self.host.vcpus[v.0].guest_timer.fire(self.now) {
                Fire::Due if self.host.vcpus[v.0].exec_start.is_some() => self.guest_timer(v),
                Fire::Later(at) => self.push_guest_timer(v, at),
                _ => {}
            },
            Ev::NicRx(pkt) => self.nic_rx(pkt),
            Ev::PeerRx(pkt) => self.peer_rx(pkt),
            Ev::PeerTimer(p) => self.peer_timer(p),
            Ev::DiskDone { task, bytes, issued_at } => self.disk_done(task, bytes, issued_at),
            Ev::TaskTimer(t) => {
                if let Work::BulkRx { delack, .. } = &mut self.guests.tasks[t.0].work {
                    match delack.fire(self.now) {
                        Fire::Due => {}
                        Fire::Later(at) => return self.push(at, Ev::TaskTimer(t)),
                        Fire::Stale => return,
                    }
                }
                let v = self.guests.tasks[t.0].vcpu;
                self.post_event(v, GuestEvent::Timer(t), None, WakeCause::Timer);
            }
            Ev::Unplug(v) => self.post_event(v, GuestEvent::Unplug, None, WakeCause::UnplugTimer),
            Ev::PolicyTimer => self.with_ctx(|pol, ctx| pol.timer(ctx)),
            Ev::Resumed(v, t) => {
                let vc = &self.host.vcpus[v.0];
                if vc.on_pcpu.is_some() && !vc.paused && vc.current == Some(t) {
                    if vc.kernel_until > self.now {
                        // More kernel work arrived meanwhile: the return to the task comes after it.
                        let at = vc.kernel_until;
                        self.push(at, Ev::Resumed(v, t));
                    } else {
                        self.with_ctx(|pol, ctx| pol.guest_resumed(v, t, ctx));
                    }
                }
            }
            Ev::Ple(v) => self.ple_fire(v),
            Ev::Change(i) => {
                let ch = self.scenario.changes[i].clone();
                let set = self.policy.set_param(&ch.param, &ch.value);
                self.marks = self.policy_marks();
                let text = match set {
                    Ok(()) => {
                        // Adaptation is timed from here: a task already inferred I/O-bound counts as adapted now.
                        self.measure.last_change_at = self.now;
                        for t in 0..self.guests.tasks.len() {
                            self.measure.task_metrics[t].inferred_io_at = None;
                            self.note_inferred(TaskId(t));
                        }
                        format!("change: {} = {}", ch.param, ch.value)
                    }
                    Err(e) => format!("change rejected: {e}"),
                };
                self.rec.rq_dirty = true;
                self.rec.decisions_made += 1;
                if self.rec.on {
                    self.rec.trace.push_decision(self.now.0, 0, &text);
                }
            }
        }
    }

    /// An event-channel notification to `v`: delivered at once if `v` is on a pCPU, else held until it runs.
    fn post_event(&mut self, v: VcpuId, ev: GuestEvent, from: Option<VcpuId>, cause: WakeCause) {
        if let Some(f) = from {
            self.with_ctx(|pol, ctx| pol.event_sent(f, v, ctx));
        }
        if let GuestEvent::BlkDone { task, issued_at, .. } = ev {
            let held = self.host.vcpus[v.0].on_pcpu.is_none() || self.host.vcpus[v.0].paused;
            self.with_ctx(|pol, _| pol.block_done(v, task, issued_at, held));
        }
        let vc = &self.host.vcpus[v.0];
        if vc.on_pcpu.is_some() && !vc.paused {
            if self.in_window(self.now) {
                self.measure.dom_metrics[vc.dom.0].event_latency_ns.push(0);
            }
            if self.host.vcpus[v.0].state == VState::Blocked {
                self.vcpu_unblocked(v);
                self.with_ctx(|pol, ctx| pol.woke_on_pcpu(v, ctx));
            }
            self.upcall(v);
            self.deliver(v, ev, 0);
            return;
        }
        if self.rec.on {
            let kind = ev.kind();
            self.rec.trace.push_io(IoRec { t_ns: self.now.0, vcpu: v.0 as u32, kind, phase: "pending", wait_ns: 0 });
        }
        let port = match &ev {
            GuestEvent::Packet(p) => Some(p.port),
            _ => None,
        };

        self.host.vcpus[v.0].pending.push_back(Pending { at: self.now, ev });
        self.with_ctx(|pol, ctx| pol.event_pending(v, port, ctx));
        if self.host.vcpus[v.0].state == VState::Blocked {
            self.vcpu_make_runnable(v, cause);
        }
    }

    /// Work the vCPU does in its kernel or in the hypervisor on its behalf [ns]: the CPU is the vCPU's, but its
    /// current task makes no progress until the work is done. Off a pCPU, the work waits for the next run.
    pub(super) fn kernel_work(&mut self, v: VcpuId, ns: u64) {
        if ns == 0 {
            return;
        }
        if self.host.vcpus[v.0].on_pcpu.is_none() || self.host.vcpus[v.0].paused {
            self.host.vcpus[v.0].kernel_left += ns;
            return;
        }
        self.charge(v);
        let vc = &self.host.vcpus[v.0];
        let from = vc.kernel_until.max(self.now).max(vc.exec_start.unwrap_or(self.now));
        let until = from + Nanos(ns);
        self.host.vcpus[v.0].kernel_until = until;
        if self.host.vcpus[v.0].exec_start.is_none() {
            // Not executing a task (about to be scheduled, or idle): `guest_run` starts after the work.
            return;
        }
        self.host.vcpus[v.0].exec_start = Some(until);
        // The current task's burst or slice ends that much later.
        let at = match self.host.vcpus[v.0].current {
            Some(t) => until + Nanos(self.smt_left(v, t)),
            None => until,
        };
        if self.host.vcpus[v.0].guest_timer.arm(at) {
            self.push(at, Ev::Guest(v));
        }
    }

    /// The guest takes an event upcall; notifications posted at the same instant share it (the port is masked
    /// while the upcall runs).
    fn upcall(&mut self, v: VcpuId) {
        if self.host.vcpus[v.0].last_upcall == Some(self.now) {
            return;
        }
        self.host.vcpus[v.0].last_upcall = Some(self.now);
        self.kernel_work(v, self.costs.upcall_ns);
    }

    fn vcpu_unblocked(&mut self, v: VcpuId) {
        self.host.vcpus[v.0].state = VState::Runnable;
        if let Some(since) = self.host.vcpus[v.0].blocked_since.take() {
            self.account_blocked(v, since, self.now);
        }
    }

    fn account_blocked(&mut self, v: VcpuId, from: Nanos, to: Nanos) {
        let a = from.max(self.warmup);
        let b = to.min(self.end);
        if b > a {
            self.measure.dom_metrics[self.host.vcpus[v.0].dom.0].blocked_ns += (b - a).0;
        }
    }

    /// A blocked vCPU got work: it becomes runnable and, unless paused or already on a pCPU, the policy wakes it.
    fn vcpu_make_runnable(&mut self, v: VcpuId, cause: WakeCause) {
        self.vcpu_unblocked(v);
        if !self.host.vcpus[v.0].paused && self.host.vcpus[v.0].on_pcpu.is_none() {
            self.with_ctx(|pol, ctx| pol.wake(v, cause, ctx));
        }
    }

    /// The guest kernel handles a notification on a running vCPU: the task it concerns may wake.
    fn deliver(&mut self, v: VcpuId, ev: GuestEvent, waited: u64) {
        if self.host.vcpus[v.0].on_pcpu.is_none() {
            self.measure.early_deliveries += 1;
        }
        if self.rec.on {
            let rec =
                IoRec { t_ns: self.now.0, vcpu: v.0 as u32, kind: ev.kind(), phase: "delivered", wait_ns: waited };
            self.rec.trace.push_io(rec);
        }
        // The guest kernel's stack handles the packet or completion before any task it wakes runs (netfront's poll
        // and the softirq run before the return to user space).
        match &ev {
            GuestEvent::Packet(_) => {
                self.io.packets_consumed += 1;
                self.kernel_work(v, self.costs.net_frontend_pkt_ns);
            }
            GuestEvent::BlkDone { bytes, .. } => {
                self.kernel_work(v, self.costs.blk_frontend_req_ns * self.costs.blk_requests(*bytes))
            }
            _ => {}
        }
        let task = match &ev {
            GuestEvent::Packet(pkt) => match pkt.dst {
                Endpoint::Task(t) => Some(t),
                Endpoint::Peer(_) => None,
            },
            GuestEvent::DriverKick(t) => Some(*t),
            GuestEvent::BlkDone { task, .. } => {
                // blkfront's interrupt handler restarts the request queue (blkif_int ->
                // kick_pending_request_queues): requests held by the plug go out with the completion.
                self.unplug(v);
                Some(*task)
            }
            GuestEvent::Timer(task) | GuestEvent::Ipi(task) | GuestEvent::Virq(task) => Some(*task),
            GuestEvent::Unplug => {
                self.unplug(v);
                None
            }
            GuestEvent::TxDone => self.stream_tx_done(v),
            GuestEvent::Flush(from) => {
                self.tlb_ack(v, *from);
                None
            }
        };
        let Some(t) = task else { return };
        self.guests.tasks[t.0].last_event = Some(self.now);
        self.task_event(t, ev);
        if self.guests.tasks[t.0].state == TState::Blocked && self.task_wake(t) {
            self.guest_preempt_check(v, t);
        }
    }
}

#[cfg(test)]
pub(crate) mod test_support;
#[cfg(test)]
pub(crate) mod tests;
