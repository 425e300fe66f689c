//! The discrete-event engine: one queue ordered by (time, seq), the vCPU state machine, the guest kernel's
//! scheduler, the workloads and the split-driver I/O path. Policies decide; this module acts and records.
//!
//! I/O path (as in Xen's split drivers): a client's request crosses the wire to the NIC; the driver domain's
//! backend spends `packet_us` on it, then sends an event-channel notification to the guest vCPU. The notification
//! is delivered only when that vCPU runs (the latency the papers study); the guest kernel then wakes the server
//! task, which may preempt the guest's current task. The response goes back through the driver domain.

mod build;
mod io;
mod queue;
mod workload;

use crate::metrics::{DomMetrics, TaskMetrics};
use crate::model::*;
use crate::policy::{self, Action, Ctx, Decision, DomainInfo, HostView, Policy};
use crate::rng::Stream;
use crate::scenario::{GuestClock, GuestScheduler, GuestSpec, Priority, Role, Scenario, Workload};
use crate::time::{ms_to_ns, us_to_ns, Nanos};
use crate::trace::{BeliefRec, BoostRec, IoRec, RqEntry, Segment, TaskRec, Trace, VcpuUsage};
use queue::EventQueue;
use serde::Serialize;
use std::collections::VecDeque;
use std::fmt;

/// Linux O(1) interactivity window: the sleep average saturates at 1 s [ns].
const MAX_SLEEP_AVG: u64 = 1_000_000_000;
/// Events one simulated second may take, on average, before the run is stopped as runaway.
const EVENTS_PER_SIM_SECOND_BUDGET: u64 = 20_000_000;

#[derive(Debug, Clone, PartialEq)]
pub enum SimError {
    UnknownPolicy(String),
    Policy(String),
    EventBudget { events: u64, at_ns: u64 },
}

impl fmt::Display for SimError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            SimError::UnknownPolicy(id) => write!(f, "no policy with id '{id}' in this scenario"),
            SimError::Policy(e) => write!(f, "policy error: {e}"),
            SimError::EventBudget { events, at_ns } => write!(
                f,
                "run stopped: {events} events by {:.3} ms of simulated time exceeds the event budget (a runaway scenario?)",
                *at_ns as f64 / 1e6
            ),
        }
    }
}

impl std::error::Error for SimError {}

/// Names and shapes the UI needs to label the trace.
#[derive(Debug, Clone, Serialize)]
pub struct Meta {
    pub scenario: String,
    pub policy: String,
    pub label: String,
    pub pcpus: usize,
    pub duration_ns: u64,
    pub warmup_ns: u64,
    pub domains: Vec<MetaDomain>,
    pub vcpus: Vec<MetaVcpu>,
    pub tasks: Vec<MetaTask>,
    pub decisions: usize,
    pub decisions_dropped: u64,
    /// Trace detail (segments, decisions, run queues) stops here because its memory budget was spent; shares
    /// over time stay complete (aggregated) [ns].
    pub trace_detail_until_ns: Option<u64>,
    /// Memory the trace detail takes (estimate) [bytes].
    pub trace_bytes: usize,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetaDomain {
    pub name: String,
    pub role: &'static str,
    pub vcpus: usize,
    pub weight: u32,
    pub cap_pct: u32,
    pub color_index: usize,
    /// Declared concurrent (co-scheduled, paper 001) in the scenario.
    pub concurrent: bool,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetaVcpu {
    pub domain: usize,
    pub index: usize,
    pub name: String,
}

#[derive(Debug, Clone, Serialize)]
pub struct MetaTask {
    pub domain: usize,
    pub name: String,
    pub path: String,
}

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
    Change(usize),
}

/// How a run records.
#[derive(Debug, Clone, Copy)]
pub struct SimOptions {
    /// Record the trace (segments, decisions with reasons, run queues) for replay. Batch runs turn it off:
    /// reports never read it, and policies then skip formatting explanations.
    pub trace: bool,
    /// Memory budget for trace detail [bytes]; per-domain CPU aggregates are kept for the whole run regardless.
    pub trace_budget_bytes: usize,
}

impl Default for SimOptions {
    fn default() -> SimOptions {
        SimOptions { trace: true, trace_budget_bytes: crate::trace::DEFAULT_BUDGET_BYTES }
    }
}

/// One policy's run of one scenario.
pub struct Simulation {
    pub(crate) scenario: Scenario,
    pub(crate) policy_id: String,
    pub(crate) now: Nanos,
    pub(crate) end: Nanos,
    pub(crate) warmup: Nanos,
    queue: EventQueue<Ev>,
    /// Events processed per kind, when SCHEDSIM_DEBUG_QUEUE is set (a profiling aid).
    debug_counts: Option<std::collections::BTreeMap<String, u64>>,
    pub(crate) events: u64,
    event_budget: u64,
    finished: bool,
    policy: Box<dyn Policy>,
    actions: Vec<Action>,
    notes: policy::Notes,
    pub(crate) pcpus: Vec<Pcpu>,
    pub(crate) running: Vec<Option<VcpuId>>,
    pub(crate) vcpus: Vec<Vcpu>,
    vcpu_dom: Vec<DomId>,
    vcpu_name: Vec<String>,
    pub(crate) dom_info: Vec<DomainInfo>,
    pub(crate) kinds: Vec<build::DomKinds>,
    /// Each domain's guest kernel settings.
    guest: Vec<GuestSpec>,
    /// Per vCPU: block requests held by the guest's plugged queue, and whether its unplug timer is armed.
    pub(crate) plugged: Vec<(Vec<DriverItem>, bool)>,
    pub(crate) tasks: Vec<Task>,
    pub(crate) peers: Vec<Peer>,
    pub(crate) groups: Vec<BarrierGroup>,
    /// The backend task of each domain's driver domain (None for domains with no driver).
    driver_task_of: Vec<Option<TaskId>>,
    link_in: Link,
    link_out: Link,
    disk: Disk,
    pub(crate) dom_metrics: Vec<DomMetrics>,
    pub(crate) task_metrics: Vec<TaskMetrics>,
    /// Busy time of all pCPUs within the measured window [ns].
    pub(crate) busy_ns: u64,
    /// Packets put on their way (by a guest or a peer) and packets that reached their final endpoint, over the
    /// whole run: the difference is what is still in flight (an invariant the tests check).
    pub(crate) packets_sent: u64,
    pub(crate) packets_consumed: u64,
    /// Notifications handed to a guest whose vCPU was not on a pCPU (must stay 0: delivery waits for the vCPU).
    pub(crate) early_deliveries: u64,
    /// Balloon pauses while an event waited for the guest or a task it woke was runnable (must stay 0).
    pub(crate) balloon_violations: u64,
    trace: Trace,
    /// CPU each vCPU received over time, for Lag (paper 001); kept even when the trace is not.
    pub(crate) usage: VcpuUsage,
    /// Whether the trace is recorded (see [`SimOptions::trace`]).
    record: bool,
    /// An internal inconsistency that stops the run (reported by `step` as an error).
    fault: Option<SimError>,
    /// A policy hook ran since the last run-queue snapshot.
    rq_dirty: bool,
    /// The run-queue version each pCPU was last snapshotted at (`u64::MAX` before its first snapshot).
    rq_seen: Vec<u64>,
    /// Reused to build each run-queue snapshot (the trace copies it only when it changed).
    rq_scratch: Vec<RqEntry>,
    /// Reused for the policy's belief changes and partial-boost marks after each hook.
    belief_buf: Vec<(TaskId, i64)>,
    boost_buf: Vec<(VcpuId, &'static str)>,
    pub(crate) wall_ns: u64,
    /// When a scenario change was last applied to the policy (the run's start if none) [ns]: each task's
    /// `io_bound_after_ms` in the report counts from here.
    pub(crate) last_change_at: Nanos,
    /// The policy's partial boosts and hits when the measured window began (taken by the first event at or after
    /// the warm-up), so the report counts only the window's, as every other metric.
    pb_at_warmup: Option<(u64, u64)>,
}

/// O(1) scheduler base time slices: 100 ms at nice 0, 800 ms at -20, 5 ms at 19 [ns].
fn guest_slice(p: Priority) -> u64 {
    let ms = match p {
        Priority::Rt(_) => 100,
        Priority::Nice(n) if n < 0 => (20 - n as i64) * 20,
        Priority::Nice(n) => ((20 - n as i64) * 5).max(5),
    };
    ms as u64 * 1_000_000
}

/// CFS load weight of a nice value (Linux `sched_prio_to_weight`).
fn cfs_weight(p: Priority) -> u64 {
    const W: [u64; 40] = [
        88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501,
        1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
    ];
    match p {
        Priority::Rt(_) => 88761,
        Priority::Nice(n) => W[(n.clamp(-20, 19) + 20) as usize],
    }
}

/// CFS tunables (Linux defaults for one CPU) [ns].
const CFS_LATENCY: u64 = 6_000_000;
const CFS_MIN_GRAN: u64 = 750_000;
const CFS_WAKEUP_GRAN: u64 = 1_000_000;

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
        let b = build::build(scenario);
        let net = &scenario.host.net;
        let link = || Link { free_at: Nanos::ZERO, ns_per_byte: 8000.0 / net.mbps, latency: us_to_ns(net.latency_us) };
        let vcpu_dom: Vec<DomId> = b.vcpus.iter().map(|v| v.dom).collect();
        let vcpu_name: Vec<String> = b.vcpus.iter().map(|v| v.name.clone()).collect();
        let types: Vec<_> = scenario.domains.iter().map(|d| d.kind).collect();
        let policy =
            policy::build(&spec.scheduler, &spec.params, pcpus, &b.dom_info, &types).map_err(SimError::Policy)?;
        let budget = if opts.trace { opts.trace_budget_bytes } else { 0 };
        let trace = Trace::with_budget(pcpus, vcpu_dom.iter().map(|d| d.0).collect(), b.dom_info.len(), end.0, budget);
        let ndom = b.dom_info.len();
        let ntasks = b.tasks.len();
        let nvcpus = b.vcpus.len();
        let mut sim = Simulation {
            scenario: scenario.clone(),
            policy_id: policy_id.to_string(),
            now: Nanos::ZERO,
            end,
            warmup,
            queue: EventQueue::default(),
            debug_counts: std::env::var_os("SCHEDSIM_DEBUG_QUEUE").map(|_| Default::default()),
            events: 0,
            event_budget: EVENTS_PER_SIM_SECOND_BUDGET.saturating_mul(scenario.duration_ms.div_ceil(1000).max(1)),
            finished: false,
            policy,
            actions: Vec::new(),
            notes: policy::Notes::default(),
            pcpus: (0..pcpus)
                .map(|_| Pcpu {
                    running: None,
                    seg_start: Nanos::ZERO,
                    seg_task: None,
                    slice_timer: Timer::default(),
                    resched_pending: false,
                    slice_expired: false,
                })
                .collect(),
            running: vec![None; pcpus],
            vcpus: b.vcpus,
            vcpu_dom,
            vcpu_name,
            dom_info: b.dom_info,
            kinds: b.kinds,
            guest: scenario.domains.iter().map(|d| d.guest.clone()).collect(),
            plugged: Vec::new(),
            tasks: b.tasks,
            peers: b.peers,
            groups: b.groups,
            driver_task_of: b.driver_task_of,
            link_in: link(),
            link_out: link(),
            disk: b.disk,
            dom_metrics: (0..ndom).map(|_| DomMetrics::default()).collect(),
            task_metrics: (0..ntasks).map(|_| TaskMetrics::default()).collect(),
            busy_ns: 0,
            packets_sent: 0,
            packets_consumed: 0,
            early_deliveries: 0,
            balloon_violations: 0,
            trace,
            usage: VcpuUsage::new(nvcpus, end.0),
            record: opts.trace,
            fault: None,
            rq_dirty: true,
            rq_seen: vec![u64::MAX; pcpus],
            rq_scratch: Vec::new(),
            belief_buf: Vec::new(),
            boost_buf: Vec::new(),
            wall_ns: 0,
            last_change_at: Nanos::ZERO,
            pb_at_warmup: None,
        };
        sim.boot();
        Ok(sim)
    }

    fn push(&mut self, at: Nanos, ev: Ev) {
        self.queue.push(at, ev);
    }

    fn boot(&mut self) {
        let timers = self.policy.timers();
        for v in 0..self.vcpus.len() {
            // The policy keeps its own placement; the engine learns it when the vCPU runs.
            self.with_ctx(|pol, ctx| pol.init_vcpu(VcpuId(v), ctx));
        }
        if let Some(t) = timers.tick {
            for p in 0..self.pcpus.len() {
                self.push(t, Ev::Tick(PcpuId(p)));
            }
        }
        if let Some(a) = timers.account {
            self.push(a, Ev::Account);
        }
        for (i, ch) in self.scenario.changes.clone().iter().enumerate() {
            if ch.policy == self.policy_id {
                self.push(Nanos::from_ms(ch.at_ms), Ev::Change(i));
            }
        }
        self.boot_workloads();
        for v in 0..self.vcpus.len() {
            if !self.vcpus[v].runnable.is_empty() {
                self.vcpu_make_runnable(VcpuId(v), "boot");
            }
        }
        self.apply_actions();
        self.snapshot_runqueues();
    }

    fn with_ctx<R>(&mut self, f: impl FnOnce(&mut dyn Policy, &mut Ctx) -> R) -> R {
        let mut ctx = Ctx {
            now: self.now,
            host: HostView {
                pcpus: self.pcpus.len(),
                running: &self.running,
                vcpu_dom: &self.vcpu_dom,
                vcpu_name: &self.vcpu_name,
                domains: &self.dom_info,
            },
            actions: &mut self.actions,
            notes: &mut self.notes,
            explain: self.record,
        };
        let r = f(self.policy.as_mut(), &mut ctx);
        self.rq_dirty = true;
        // Drained whether or not anyone records them, so batch runs do not pile them up.
        self.policy.drain_marks(&mut self.belief_buf, &mut self.boost_buf);
        if !self.belief_buf.is_empty() || !self.boost_buf.is_empty() {
            self.take_marks();
        }
        let (trace, now) = (&mut self.trace, self.now.0);
        self.notes.drain(|p, text| trace.push_decision(now, p.0, text));
        r
    }

    /// Records the belief changes and partial-boost marks a hook left (rare next to hooks: kept off the hot path).
    #[inline(never)]
    fn take_marks(&mut self) {
        let (mut beliefs, mut boosts) = (std::mem::take(&mut self.belief_buf), std::mem::take(&mut self.boost_buf));
        for &(t, b) in &beliefs {
            if self.record {
                self.trace.push_belief(BeliefRec { t_ns: self.now.0, task: t.0 as u32, belief: b });
            }
            self.note_inferred(t);
        }
        if self.record {
            for &(v, kind) in &boosts {
                self.trace.push_boost(BoostRec { t_ns: self.now.0, vcpu: v.0 as u32, kind });
            }
        }
        beliefs.clear();
        boosts.clear();
        (self.belief_buf, self.boost_buf) = (beliefs, boosts);
    }

    /// Records when a task is first inferred I/O-bound after the last change (adaptation time in the report).
    fn note_inferred(&mut self, t: TaskId) {
        if self.task_metrics[t.0].inferred_io_at.is_none() && self.policy.task_belief(t).is_some_and(|(_, io)| io) {
            self.task_metrics[t.0].inferred_io_at = Some(self.now);
        }
    }

    fn apply_actions(&mut self) {
        while !self.actions.is_empty() {
            let batch: Vec<Action> = std::mem::take(&mut self.actions);
            for a in batch {
                match a {
                    Action::Resched(p) => self.resched(p),
                    Action::Pause(v) => {
                        self.vcpus[v.0].paused = true;
                        match self.vcpus[v.0].on_pcpu {
                            Some(p) => self.resched(p),
                            None if self.vcpus[v.0].state == VState::Runnable => {
                                self.with_ctx(|pol, ctx| pol.sleep(v, ctx));
                            }
                            None => {}
                        }
                    }
                    Action::Unpause(v) | Action::Resume(v) => {
                        self.vcpus[v.0].paused = false;
                        if self.vcpus[v.0].on_pcpu.is_none() && self.vcpus[v.0].state == VState::Runnable {
                            let cause =
                                if a == Action::Unpause(v) { WAKE_UNPAUSE } else { "event (balloon pause ends)" };
                            self.with_ctx(|pol, ctx| pol.wake(v, cause, ctx));
                        }
                    }
                    Action::Timer(at) => self.push(at.max(self.now), Ev::PolicyTimer),
                    Action::ArmBalloon(v) => {
                        if let Some(b) = self.vcpus[v.0].balloon {
                            if self.tasks[b.0].state == TState::Blocked {
                                self.post_event(v, GuestEvent::Virq(b), None, "balloon VIRQ");
                            }
                        }
                    }
                }
            }
        }
    }

    /// Records each pCPU's run queue if it changed (the UI's run-queue view and credit/priority history).
    fn snapshot_runqueues(&mut self) {
        if !self.record || !self.rq_dirty {
            return;
        }
        self.rq_dirty = false;
        let versions = self.policy.runqueue_versions();
        let pcpus = versions.iter().zip(&self.running).zip(self.rq_seen.iter_mut()).enumerate();
        for (p, ((&ver, running), seen)) in pcpus {
            // Who runs here is part of the snapshot too; the policy's version covers its own state.
            let version = ver ^ (running.map_or(0, |v| v.0 as u64 + 1) << 48);
            if *seen == version {
                continue;
            }
            *seen = version;
            let policy = &self.policy;
            let entry = |v: VcpuId| {
                let s = policy.vcpu_sched(v);
                RqEntry { vcpu: v.0 as u32, pri: s.pri, credit: s.credit }
            };
            let running = running.map(entry);
            self.rq_scratch.clear();
            self.rq_scratch.extend(policy.runqueue(PcpuId(p)).into_iter().map(entry));
            self.trace.push_runqueue(p, self.now.0, running, &self.rq_scratch);
        }
    }

    fn resched(&mut self, p: PcpuId) {
        if !self.pcpus[p.0].resched_pending {
            self.pcpus[p.0].resched_pending = true;
            self.push(self.now, Ev::Schedule(p));
        }
    }

    /// Advances by at most `max_events` events. Returns true once the run has reached its duration.
    pub fn step(&mut self, max_events: u64) -> Result<bool, SimError> {
        if self.finished {
            return Ok(true);
        }
        for _ in 0..max_events {
            let Some((at, ev)) = self.queue.pop_before(self.end) else {
                break;
            };
            if let Some(c) = self.debug_counts.as_mut() {
                let name = format!("{ev:?}");
                *c.entry(name.split(['(', ' ', '{']).next().unwrap_or("").to_string()).or_insert(0u64) += 1;
            }
            self.now = at;
            if self.pb_at_warmup.is_none() && at >= self.warmup {
                self.pb_at_warmup = Some(self.policy.partial_boosts().unwrap_or((0, 0)));
            }
            self.events += 1;
            if self.events > self.event_budget {
                return Err(SimError::EventBudget { events: self.events, at_ns: at.0 });
            }
            self.dispatch(ev);
            if let Some(e) = self.fault.take() {
                return Err(e);
            }
            self.apply_actions();
            self.snapshot_runqueues();
        }
        let done = self.queue.is_done_before(self.end);
        if done {
            self.finish();
        }
        Ok(done)
    }

    /// Runs to the end, recording the wall-clock time it took where the platform has a clock.
    pub fn run(&mut self) -> Result<(), SimError> {
        let t0 = crate::time::WallClock::start();
        while !self.step(100_000)? {}
        self.wall_ns += t0.elapsed_ns();
        Ok(())
    }

    /// Adds wall-clock time measured by the caller (the wasm adapter times runs in JavaScript) [ns].
    pub fn add_wall_ns(&mut self, ns: u64) {
        self.wall_ns += ns;
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
        self.now = self.end;
        for p in 0..self.pcpus.len() {
            if let Some(v) = self.pcpus[p].running {
                self.charge(v);
            }
            self.close_segment(PcpuId(p));
        }
        for v in 0..self.vcpus.len() {
            if let Some(since) = self.vcpus[v].blocked_since {
                self.account_blocked(VcpuId(v), since, self.end);
            }
        }
        self.finished = true;
    }

    pub fn progress(&self) -> f64 {
        if self.finished {
            1.0
        } else {
            self.now.0 as f64 / self.end.0.max(1) as f64
        }
    }

    /// Events processed so far.
    pub fn events(&self) -> u64 {
        self.events
    }

    pub fn is_finished(&self) -> bool {
        self.finished
    }

    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// Distribution points (value [ns], count) of a domain's metric: "response", "event_latency" or "io_latency".
    pub fn distribution(&self, domain: usize, metric: &str) -> Vec<(u64, u64)> {
        let Some(m) = self.dom_metrics.get(domain) else { return Vec::new() };
        match metric {
            "response" => m.responses_ns.points(),
            "event_latency" => m.event_latency_ns.points(),
            "io_latency" => m.io_latency_ns.points(),
            _ => Vec::new(),
        }
    }

    /// BelThreshold of the policy's task inference, if it infers.
    pub fn belief_threshold(&self) -> Option<i64> {
        self.policy.belief_threshold()
    }

    /// The policy's inference about a task: (degree of belief, inferred I/O-bound), if it infers.
    pub fn task_belief(&self, t: TaskId) -> Option<(i64, bool)> {
        self.policy.task_belief(t)
    }

    /// Partial boosts and hits within the measured window so far, if the policy boosts partially. A boost begun
    /// in the warm-up that hits after it counts as a hit of none, so hits are capped at the boosts.
    pub fn partial_boosts(&self) -> Option<(u64, u64)> {
        let (b, h) = self.policy.partial_boosts()?;
        let (b0, h0) = self.pb_at_warmup.unwrap_or((b, h));
        let boosts = b - b0;
        Some((boosts, (h - h0).min(boosts)))
    }

    /// How the policy sees a vCPU now (priority class and credit).
    pub fn vcpu_sched(&self, v: VcpuId) -> policy::VcpuSched {
        self.policy.vcpu_sched(v)
    }

    pub fn meta(&self) -> Meta {
        let spec = self.scenario.policy(&self.policy_id).expect("policy exists");
        Meta {
            scenario: self.scenario.id.clone(),
            policy: self.policy_id.clone(),
            label: spec.label().to_string(),
            pcpus: self.pcpus.len(),
            duration_ns: self.end.0,
            warmup_ns: self.warmup.0,
            domains: self
                .scenario
                .domains
                .iter()
                .enumerate()
                .map(|(i, d)| MetaDomain {
                    name: d.name.clone(),
                    role: if d.role == Role::Driver { "driver" } else { "guest" },
                    vcpus: d.vcpus as usize,
                    weight: d.weight,
                    cap_pct: d.cap_pct,
                    color_index: i,
                    concurrent: d.kind == crate::scenario::DomainType::Concurrent,
                })
                .collect(),
            vcpus: self
                .vcpus
                .iter()
                .map(|v| MetaVcpu { domain: v.dom.0, index: v.index, name: v.name.clone() })
                .collect(),
            tasks: self
                .tasks
                .iter()
                .map(|t| MetaTask {
                    domain: t.dom.0,
                    name: t.name.clone(),
                    path: format!("{}/{}", self.dom_info[t.dom.0].name, t.name),
                })
                .collect(),
            decisions: self.trace.decision_count(),
            decisions_dropped: self.trace.decisions_dropped,
            trace_detail_until_ns: self.trace.detail_until_ns,
            trace_bytes: self.trace.used_bytes(),
        }
    }

    fn in_window(&self, t: Nanos) -> bool {
        t >= self.warmup && t <= self.end
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Schedule(p) => self.schedule(p),
            Ev::SliceEnd(p) => match self.pcpus[p.0].slice_timer.fire(self.now) {
                Fire::Due => {
                    self.pcpus[p.0].slice_expired = true;
                    self.resched(p);
                }
                Fire::Later(at) => self.push(at, Ev::SliceEnd(p)),
                Fire::Stale => {}
            },
            Ev::Tick(p) => {
                self.with_ctx(|pol, ctx| pol.tick(p, ctx));
                if let Some(t) = self.policy.timers().tick {
                    self.push(self.now + t, Ev::Tick(p));
                }
            }
            Ev::Account => {
                self.with_ctx(|pol, ctx| pol.account(ctx));
                if let Some(a) = self.policy.timers().account {
                    self.push(self.now + a, Ev::Account);
                }
            }
            Ev::Guest(v) => match self.vcpus[v.0].guest_timer.fire(self.now) {
                Fire::Due if self.vcpus[v.0].exec_start.is_some() => self.guest_timer(v),
                Fire::Later(at) => self.push(at, Ev::Guest(v)),
                _ => {}
            },
            Ev::NicRx(pkt) => self.nic_rx(pkt),
            Ev::PeerRx(pkt) => self.peer_rx(pkt),
            Ev::PeerTimer(p) => self.peer_timer(p),
            Ev::DiskDone { task, bytes, issued_at } => self.disk_done(task, bytes, issued_at),
            Ev::TaskTimer(t) => {
                let v = self.tasks[t.0].vcpu;
                self.post_event(v, GuestEvent::Timer(t), None, "timer");
            }
            Ev::Unplug(v) => self.post_event(v, GuestEvent::Unplug, None, "block unplug timer"),
            Ev::PolicyTimer => self.with_ctx(|pol, ctx| pol.timer(ctx)),
            Ev::Change(i) => {
                let ch = self.scenario.changes[i].clone();
                let text = match self.policy.set_param(&ch.param, &ch.value) {
                    Ok(()) => {
                        // Adaptation is timed from here: a task already inferred I/O-bound counts as adapted now.
                        self.last_change_at = self.now;
                        for t in 0..self.tasks.len() {
                            self.task_metrics[t].inferred_io_at = None;
                            self.note_inferred(TaskId(t));
                        }
                        format!("change: {} = {}", ch.param, ch.value)
                    }
                    Err(e) => format!("change rejected: {e}"),
                };
                self.rq_dirty = true;
                if self.record {
                    self.trace.push_decision(self.now.0, 0, &text);
                }
            }
        }
    }

    /// An event-channel notification to `v`: delivered at once if `v` is on a pCPU, else held until it runs.
    fn post_event(&mut self, v: VcpuId, ev: GuestEvent, from: Option<VcpuId>, cause: &str) {
        if let Some(f) = from {
            self.with_ctx(|pol, ctx| pol.event_sent(f, v, ctx));
        }
        if let GuestEvent::BlkDone { task, issued_at, .. } = ev {
            let held = self.vcpus[v.0].on_pcpu.is_none() || self.vcpus[v.0].paused;
            self.with_ctx(|pol, _| pol.block_done(v, task, issued_at, held));
        }
        let vc = &self.vcpus[v.0];
        if vc.on_pcpu.is_some() && !vc.paused {
            if self.in_window(self.now) {
                self.dom_metrics[vc.dom.0].event_latency_ns.push(0);
            }
            if self.vcpus[v.0].state == VState::Blocked {
                self.vcpu_unblocked(v);
            }
            self.deliver(v, ev, 0);
            return;
        }
        if self.record {
            let kind = ev.kind();
            self.trace.push_io(IoRec { t_ns: self.now.0, vcpu: v.0 as u32, kind, phase: "pending", wait_ns: 0 });
        }
        let port = match &ev {
            GuestEvent::Packet(p) => Some(p.port),
            _ => None,
        };

        self.vcpus[v.0].pending.push_back(Pending { at: self.now, ev });
        self.with_ctx(|pol, ctx| pol.event_pending(v, port, ctx));
        if self.vcpus[v.0].state == VState::Blocked {
            self.vcpu_make_runnable(v, cause);
        }
    }

    fn vcpu_unblocked(&mut self, v: VcpuId) {
        self.vcpus[v.0].state = VState::Runnable;
        if let Some(since) = self.vcpus[v.0].blocked_since.take() {
            self.account_blocked(v, since, self.now);
        }
    }

    fn account_blocked(&mut self, v: VcpuId, from: Nanos, to: Nanos) {
        let a = from.max(self.warmup);
        let b = to.min(self.end);
        if b > a {
            self.dom_metrics[self.vcpus[v.0].dom.0].blocked_ns += (b - a).0;
        }
    }

    /// A blocked vCPU got work: it becomes runnable and, unless paused or already on a pCPU, the policy wakes it.
    fn vcpu_make_runnable(&mut self, v: VcpuId, cause: &str) {
        self.vcpu_unblocked(v);
        if !self.vcpus[v.0].paused && self.vcpus[v.0].on_pcpu.is_none() {
            self.with_ctx(|pol, ctx| pol.wake(v, cause, ctx));
        }
    }

    /// The guest kernel handles a notification on a running vCPU: the task it concerns may wake.
    fn deliver(&mut self, v: VcpuId, ev: GuestEvent, waited: u64) {
        if self.vcpus[v.0].on_pcpu.is_none() {
            self.early_deliveries += 1;
        }
        if self.record {
            let rec =
                IoRec { t_ns: self.now.0, vcpu: v.0 as u32, kind: ev.kind(), phase: "delivered", wait_ns: waited };
            self.trace.push_io(rec);
        }
        if matches!(ev, GuestEvent::Packet(_)) {
            self.packets_consumed += 1;
        }
        let task = match &ev {
            GuestEvent::Packet(pkt) => match pkt.dst {
                Endpoint::Task(t) => Some(t),
                Endpoint::Peer(_) => None,
            },
            GuestEvent::DriverKick => {
                self.vcpus[v.0].tasks.iter().copied().find(|t| matches!(self.tasks[t.0].work, Work::Driver { .. }))
            }
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
        };
        let Some(t) = task else { return };
        self.tasks[t.0].last_event = Some(self.now);
        self.task_event(t, ev);
        if self.tasks[t.0].state == TState::Blocked && self.task_wake(t) {
            self.guest_preempt_check(v, t);
        }
    }

    /// Makes a guest task runnable if it has something to do. Does not touch the vCPU.
    fn task_wake(&mut self, t: TaskId) -> bool {
        let Some(burst) = self.begin_burst(t) else { return false };
        let now = self.now;
        let cfs = self.guest[self.tasks[t.0].dom.0].scheduler == GuestScheduler::Cfs;
        let v = self.tasks[t.0].vcpu;
        let min_vr = self.vcpus[v.0].min_vruntime;
        let task = &mut self.tasks[t.0];
        task.burst_left = burst;
        task.sleep_avg = (task.sleep_avg + (now - task.blocked_since).0).min(MAX_SLEEP_AVG);
        // O(1) wakes a task into the active array.
        task.expired = false;
        if cfs {
            // Sleeper credit: a waking task is placed at most half a latency period behind the queue.
            task.vruntime = task.vruntime.max(min_vr.saturating_sub(CFS_LATENCY / 2));
        }
        task.state = TState::Runnable;
        self.vcpus[v.0].runnable.push(t);
        if self.record {
            self.trace.push_task_state(TaskRec { t_ns: now.0, task: t.0 as u32, state: "runnable" });
        }
        true
    }

    fn task_block(&mut self, t: TaskId) {
        let task = &mut self.tasks[t.0];
        task.state = TState::Blocked;
        task.blocked_since = self.now;
        let v = task.vcpu;
        self.vcpus[v.0].runnable.retain(|&x| x != t);
        if self.record {
            self.trace.push_task_state(TaskRec { t_ns: self.now.0, task: t.0 as u32, state: "blocked" });
        }
    }

    fn is_cfs(&self, v: VcpuId) -> bool {
        self.guest[self.vcpus[v.0].dom.0].scheduler == GuestScheduler::Cfs
    }

    /// Linux O(1)-like effective priority (lower runs first): RT at 0; others 120 + nice - interactivity bonus.
    fn prio(&self, t: TaskId) -> i64 {
        let task = &self.tasks[t.0];
        match task.priority {
            Priority::Rt(_) => 0,
            Priority::Nice(n) => {
                let bonus = (task.sleep_avg * 10 / MAX_SLEEP_AVG) as i64 - 5;
                120 + i64::from(n) - bonus
            }
        }
    }

    /// The guest's choice: RT first; then the best O(1) priority (FIFO among equals) or the least CFS vruntime.
    fn guest_pick(&self, v: VcpuId) -> Option<TaskId> {
        let rq = &self.vcpus[v.0].runnable;
        if let Some(b) = self.vcpus[v.0].balloon {
            return self.guest_pick_with_balloon(v, b);
        }
        if let Some(rt) = rq.iter().copied().find(|t| matches!(self.tasks[t.0].priority, Priority::Rt(_))) {
            return Some(rt);
        }
        if self.is_cfs(v) {
            rq.iter().copied().min_by_key(|t| self.tasks[t.0].vruntime)
        } else {
            rq.iter().copied().min_by_key(|&t| (self.tasks[t.0].expired, self.prio(t)))
        }
    }

    /// O(1)'s TASK_INTERACTIVE: the dynamic priority is at least 2 (plus a quarter of the nice value) better than
    /// the static one, i.e. a nice-0 task has slept at least 70% of MAX_SLEEP_AVG recently.
    fn interactive(&self, t: TaskId) -> bool {
        match self.tasks[t.0].priority {
            Priority::Rt(_) => true,
            Priority::Nice(n) => self.prio(t) <= 120 + i64::from(n) - (i64::from(n) * 10 / 40 + 2),
        }
    }

    /// O(1)'s EXPIRED_STARVING: the expired array has waited STARVATION_LIMIT (MAX_SLEEP_AVG) per runnable task,
    /// or holds a task of better static priority than the current one.
    fn expired_starving(&self, v: VcpuId) -> bool {
        let vc = &self.vcpus[v.0];
        let waited = vc.expired_since.is_some_and(|s| self.now - s >= Nanos(MAX_SLEEP_AVG * vc.runnable.len() as u64));
        let nice = |t: TaskId| match self.tasks[t.0].priority {
            Priority::Rt(_) => i64::MIN,
            Priority::Nice(n) => i64::from(n),
        };
        let better_expired =
            vc.current.is_some_and(|c| vc.runnable.iter().any(|&t| self.tasks[t.0].expired && nice(t) < nice(c)));
        waited || better_expired
    }

    /// O(1)'s array switch: when no runnable task is left in the active array, the expired one becomes active.
    fn expired_swap(&mut self, v: VcpuId) {
        let vc = &self.vcpus[v.0];
        if vc.runnable.is_empty() || vc.runnable.iter().any(|&t| !self.tasks[t.0].expired) {
            return;
        }
        for i in 0..self.vcpus[v.0].runnable.len() {
            let t = self.vcpus[v.0].runnable[i];
            self.tasks[t.0].expired = false;
        }
        self.vcpus[v.0].expired_since = None;
    }

    /// Whether the balloon steps aside for task `t`: RT tasks outrank it, and so does a task that got an event
    /// since the balloon last paused the vCPU (the balloon's `sched_yield` after an I/O event unpaused it). Tasks
    /// that were runnable all along (the compute tasks) wait behind it.
    fn balloon_yields_to(&self, t: TaskId, since: Nanos) -> bool {
        let task = &self.tasks[t.0];
        matches!(task.priority, Priority::Rt(_)) || task.last_event.is_some_and(|e| e >= since)
    }

    /// The guest's choice on a vCPU with a balloon: RT tasks; else the tasks the balloon yields to, by the guest's
    /// usual order; else the balloon if it is runnable (armed); else the rest.
    fn guest_pick_with_balloon(&self, v: VcpuId, b: TaskId) -> Option<TaskId> {
        let vc = &self.vcpus[v.0];
        let others = || vc.runnable.iter().copied().filter(move |&t| t != b);
        if let Some(rt) = others().find(|t| matches!(self.tasks[t.0].priority, Priority::Rt(_))) {
            return Some(rt);
        }
        let best = |it: &mut dyn Iterator<Item = TaskId>| {
            if self.is_cfs(v) {
                it.min_by_key(|t| self.tasks[t.0].vruntime)
            } else {
                it.min_by_key(|&t| self.prio(t))
            }
        };
        if self.tasks[b.0].state == TState::Runnable {
            let since = vc.balloon_since;
            return best(&mut others().filter(|&t| self.balloon_yields_to(t, since))).or(Some(b));
        }
        best(&mut others())
    }

    /// Wake-up preemption in the guest: a woken task that outranks the current one takes the vCPU now.
    fn guest_preempt_check(&mut self, v: VcpuId, woken: TaskId) {
        if self.vcpus[v.0].on_pcpu.is_none() || self.vcpus[v.0].paused {
            return;
        }
        if let (Some(b), Some(cur)) = (self.vcpus[v.0].balloon, self.vcpus[v.0].current) {
            if (woken == b || cur == b) && cur != woken && self.tasks[cur.0].state == TState::Runnable {
                // The balloon and the task it competes with: whoever the guest's pick prefers runs now.
                self.charge(v);
                if self.guest_pick(v) != Some(cur) {
                    self.guest_run(v);
                }
                return;
            }
        }
        if let Some(cur) = self.vcpus[v.0].current {
            if cur != woken && self.tasks[cur.0].state == TState::Runnable {
                self.charge(v);
                let rt = |t: TaskId| matches!(self.tasks[t.0].priority, Priority::Rt(_));
                let preempt = if rt(woken) || rt(cur) {
                    rt(woken) && !rt(cur)
                } else if self.is_cfs(v) {
                    self.tasks[woken.0].vruntime + CFS_WAKEUP_GRAN < self.tasks[cur.0].vruntime
                } else {
                    self.prio(woken) < self.prio(cur)
                };
                if !preempt {
                    return;
                }
            }
        }
        self.charge(v);
        self.guest_run(v);
    }

    /// Charges the CPU since `exec_start` to the vCPU's current task (burst, slice, interactivity, vruntime).
    fn charge(&mut self, v: VcpuId) {
        let Some(start) = self.vcpus[v.0].exec_start else { return };
        let Some(t) = self.vcpus[v.0].current else { return };
        if self.now <= start {
            // Still inside the hypervisor's task-tracking overhead of the last switch: the guest made no progress.
            return;
        }
        let e = (self.now - start).0;
        self.vcpus[v.0].exec_start = Some(self.now);
        let task = &mut self.tasks[t.0];
        if let Some(b) = task.burst_left.as_mut() {
            *b = b.saturating_sub(e);
        }
        task.slice_left = task.slice_left.saturating_sub(e);
        task.sleep_avg = task.sleep_avg.saturating_sub(e);
        task.vruntime += e * 1024 / cfs_weight(task.priority);
        if let Work::Barrier { group, phase: BarrierPhase::Spin, .. } = task.work {
            self.groups[group].spin_ns += e;
        }
        self.update_min_vruntime(v);
    }

    fn update_min_vruntime(&mut self, v: VcpuId) {
        // The balloon ranks by its own rule; its vruntime must not hold the queue's clock back.
        let b = self.vcpus[v.0].balloon;
        let rq = self.vcpus[v.0].runnable.iter().filter(|&&t| Some(t) != b);
        let least = rq.map(|t| self.tasks[t.0].vruntime).min();
        if let Some(m) = least {
            let vc = &mut self.vcpus[v.0];
            vc.min_vruntime = vc.min_vruntime.max(m);
        }
    }

    /// The vCPU is back on a pCPU after being descheduled while runnable. What the guest charges for the gap
    /// depends on its clock: `wall` charges it all to the current task (vruntime dilation); `steal` charges
    /// nothing; `two_clocks` (xBalloon) charges it only to a CPU-bound current task.
    fn guest_clock_gap(&mut self, v: VcpuId) {
        let Some(at) = self.vcpus[v.0].descheduled_at.take() else { return };
        let Some(t) = self.vcpus[v.0].current else { return };
        let gap = (self.now - at).0;
        let clock = self.guest[self.vcpus[v.0].dom.0].clock;
        let cpu_bound = matches!(self.tasks[t.0].work, Work::Cpu | Work::Barrier { .. });
        let charged = match clock {
            GuestClock::Wall => gap,
            GuestClock::Steal => 0,
            GuestClock::TwoClocks if cpu_bound => gap,
            GuestClock::TwoClocks => 0,
        };
        let task = &mut self.tasks[t.0];
        task.vruntime += charged * 1024 / cfs_weight(task.priority);
        if self.is_cfs(v) {
            // The tick that ends the slice also runs on guest time.
            let task = &mut self.tasks[t.0];
            task.slice_left = task.slice_left.saturating_sub(charged);
        }
    }

    /// CFS's ideal slice: the latency period shared by the runnable tasks, at least the minimum granularity.
    fn cfs_slice(&self, v: VcpuId) -> u64 {
        let nr = self.vcpus[v.0].runnable.len() as u64;
        (CFS_LATENCY / nr.max(1)).max(CFS_MIN_GRAN)
    }

    /// The guest picks its task on a running vCPU, reports any address-space switch, and arms its timer;
    /// with nothing to run, the vCPU blocks.
    fn guest_run(&mut self, v: VcpuId) {
        let Some(p) = self.vcpus[v.0].on_pcpu else { return };
        if !self.is_cfs(v) {
            self.expired_swap(v);
        }
        let next = self.guest_pick(v);
        let prev = self.vcpus[v.0].current;
        if next != prev {
            self.close_segment(p);
            self.pcpus[p.0].seg_task = next;
            self.vcpus[v.0].current = next;
            if let (Some(n), true) = (next, self.is_cfs(v)) {
                self.tasks[n.0].slice_left = self.cfs_slice(v);
            }
            self.with_ctx(|pol, ctx| pol.guest_task_switch(v, prev, next, ctx));
        }
        // Observing a switch to a task (its CR3 load) costs hypervisor time on this vCPU before the task runs.
        let overhead = if next != prev && next.is_some() { self.policy.tracking_cost(v) } else { Nanos::ZERO };
        if overhead > Nanos::ZERO && self.in_window(self.now) {
            let dom = self.vcpus[v.0].dom.0;
            self.dom_metrics[dom].tracking_ns += overhead.0;
            if let Some(n) = next {
                self.task_metrics[n.0].tracking_ns += overhead.0;
            }
        }
        self.vcpus[v.0].guest_timer.cancel();
        match next {
            None => {
                self.vcpus[v.0].exec_start = None;
                if self.vcpus[v.0].state == VState::Runnable {
                    self.vcpus[v.0].state = VState::Blocked;
                    self.vcpus[v.0].blocked_since = Some(self.now);
                    self.with_ctx(|pol, ctx| pol.sleep(v, ctx));
                    self.resched(p);
                }
            }
            Some(t) => {
                // Re-arming without a switch keeps what is left of the last switch's tracking overhead.
                let pending = self.vcpus[v.0].exec_start.filter(|&s| next == prev && s > self.now);
                let start = pending.unwrap_or(self.now + overhead);
                self.vcpus[v.0].exec_start = Some(start);
                let task = &self.tasks[t.0];
                let left = task.burst_left.map_or(task.slice_left, |b| b.min(task.slice_left));
                let at = start + Nanos(left);
                if self.vcpus[v.0].guest_timer.arm(at) {
                    self.push(at, Ev::Guest(v));
                }
            }
        }
    }

    /// The current task's burst or guest slice ended.
    fn guest_timer(&mut self, v: VcpuId) {
        self.charge(v);
        let Some(t) = self.vcpus[v.0].current else { return };
        if self.tasks[t.0].burst_left == Some(0) {
            self.burst_done(t);
        } else if self.tasks[t.0].slice_left == 0 {
            // Round robin: to the back of the queue with a fresh slice; O(1) sends a task that is not interactive
            // (or any task while the expired array starves) to the expired array.
            self.tasks[t.0].slice_left = guest_slice(self.tasks[t.0].priority);
            if !self.is_cfs(v) && (!self.interactive(t) || self.expired_starving(v)) {
                self.tasks[t.0].expired = true;
                self.vcpus[v.0].expired_since.get_or_insert(self.now);
            }
            let rq = &mut self.vcpus[v.0].runnable;
            rq.retain(|&x| x != t);
            rq.push(t);
            if self.is_cfs(v) {
                self.tasks[t.0].slice_left = self.cfs_slice(v);
            }
        }
        self.guest_run(v);
    }

    /// A task finished a CPU burst: its workload acts, then it starts its next burst or blocks.
    fn burst_done(&mut self, t: TaskId) {
        self.workload_burst_done(t);
        match self.begin_burst(t) {
            Some(b) => self.tasks[t.0].burst_left = b,
            None => self.task_block(t),
        }
    }

    fn close_segment(&mut self, p: PcpuId) {
        let start = self.pcpus[p.0].seg_start;
        self.pcpus[p.0].seg_start = self.now;
        let Some(v) = self.pcpus[p.0].running else {
            return;
        };
        if self.now <= start {
            return;
        }
        let task = self.pcpus[p.0].seg_task;
        self.usage.add(v.0, start.0, self.now.0);
        if self.record {
            self.trace.push_segment(Segment {
                pcpu: p.0 as u32,
                start: start.0,
                end: self.now.0,
                vcpu: v.0 as u32,
                task: task.map_or(-1, |t| t.0 as i32),
            });
        }
        let a = start.max(self.warmup);
        let b = self.now.min(self.end);
        if b > a {
            let ns = (b - a).0;
            self.busy_ns += ns;
            self.dom_metrics[self.vcpus[v.0].dom.0].cpu_ns += ns;
            if let Some(t) = task {
                self.task_metrics[t.0].cpu_ns += ns;
            }
        }
    }

    /// `do_schedule` on one pCPU and the context switch it asks for.
    fn schedule(&mut self, p: PcpuId) {
        self.pcpus[p.0].resched_pending = false;
        let cur = self.pcpus[p.0].running;
        if let Some(c) = cur {
            self.charge(c);
            self.vcpus[c.0].exec_start = None;
            self.vcpus[c.0].guest_timer.cancel();
        }
        self.close_segment(p);
        let cur_runnable = cur.is_some_and(|c| self.vcpus[c.0].state == VState::Runnable && !self.vcpus[c.0].paused);
        let trigger = match cur {
            None => "idle pCPU",
            Some(c) if self.vcpus[c.0].paused => "parked",
            Some(_) if !cur_runnable => "block",
            Some(_) if self.pcpus[p.0].slice_expired => "slice end",
            Some(_) => "preempt",
        };
        self.pcpus[p.0].slice_expired = false;
        let d: Decision = self.with_ctx(|pol, ctx| pol.do_schedule(p, cur, cur_runnable, ctx));
        if let Some(n) = d.next {
            if let Some(q) = self.vcpus[n.0].on_pcpu.filter(|&q| q != p) {
                // A policy bug: stop the run with an error rather than run one vCPU on two pCPUs.
                self.fault = Some(SimError::Policy(format!(
                    "{} chosen on pCPU{} at {} ns while it runs on pCPU{}",
                    self.vcpu_name[n.0], p.0, self.now.0, q.0
                )));
                return;
            }
        }
        if d.next != cur {
            if let Some(c) = cur {
                self.vcpus[c.0].on_pcpu = None;
                if self.vcpus[c.0].state == VState::Runnable {
                    self.vcpus[c.0].descheduled_at = Some(self.now);
                }
            }
            self.pcpus[p.0].running = d.next;
            self.running[p.0] = d.next;
            if let Some(n) = d.next {
                self.vcpus[n.0].on_pcpu = Some(p);
                if self.in_window(self.now) {
                    self.dom_metrics[self.vcpus[n.0].dom.0].context_switches += 1;
                }
            }
        }
        self.pcpus[p.0].seg_task = d.next.and_then(|n| self.vcpus[n.0].current);
        if self.record {
            self.trace.push_decision_fmt(self.now.0, p.0, format_args!("{trigger}: {}", d.reason));
        }
        self.pcpus[p.0].slice_timer.cancel();
        if d.next.is_none() && self.policy.timed_idle() {
            // Time-partitioned policies (ARINC 653 windows, Atropos periods) start work on an idle pCPU by timer.
            let at = self.now + d.slice.max(Nanos(1));
            if self.pcpus[p.0].slice_timer.arm(at) {
                self.push(at, Ev::SliceEnd(p));
            }
        }
        if let Some(n) = d.next {
            let at = self.now + d.slice;
            if self.pcpus[p.0].slice_timer.arm(at) {
                self.push(at, Ev::SliceEnd(p));
            }
            if d.next != cur {
                self.guest_clock_gap(n);
            }
            // Pending notifications are delivered as the vCPU starts running.
            while let Some(pe) = self.vcpus[n.0].pending.pop_front() {
                if self.in_window(self.now) {
                    self.dom_metrics[self.vcpus[n.0].dom.0].event_latency_ns.push((self.now - pe.at).0);
                }
                self.deliver(n, pe.ev, (self.now - pe.at).0);
            }
            if self.vcpus[n.0].on_pcpu == Some(p) && self.pcpus[p.0].running == Some(n) {
                self.guest_run(n);
            }
        }
    }
}

#[cfg(test)]
mod tests;
