//! The discrete-event engine: one queue ordered by (time, seq), the vCPU state machine, the guest kernel's
//! scheduler, the workloads and the split-driver I/O path. Policies decide; this module acts and records.
//!
//! I/O path (as in Xen's split drivers): a client's request crosses the wire to the NIC; the driver domain's
//! backend spends `packet_us` on it, then sends an event-channel notification to the guest vCPU. The notification
//! is delivered only when that vCPU runs (the latency the papers study); the guest kernel then wakes the server
//! task, which may preempt the guest's current task. The response goes back through the driver domain.

use crate::metrics::{DomMetrics, TaskMetrics};
use crate::model::*;
use crate::policy::{self, Action, Ctx, Decision, DomainInfo, HostView, Policy};
use crate::rng::Stream;
use crate::scenario::{Priority, Role, Scenario, Workload};
use crate::time::{ms_to_ns, us_to_ns, Nanos};
use crate::trace::{RqEntry, Segment, Trace};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};
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

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
enum Ev {
    Schedule(PcpuId),
    SliceEnd(PcpuId, u64),
    Tick(PcpuId),
    Account,
    Guest(VcpuId, u64),
    ClientSend(usize),
    NicRx(usize, Nanos),
    ClientRecv(usize, Nanos),
    Change(usize),
}

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
}

#[derive(Debug, Clone, Serialize)]
pub struct MetaDomain {
    pub name: String,
    pub role: &'static str,
    pub vcpus: usize,
    pub weight: u32,
    pub cap_pct: u32,
    pub color_index: usize,
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

/// One policy's run of one scenario.
pub struct Simulation {
    pub(crate) scenario: Scenario,
    pub(crate) policy_id: String,
    pub(crate) now: Nanos,
    pub(crate) end: Nanos,
    pub(crate) warmup: Nanos,
    queue: BinaryHeap<Reverse<(Nanos, u64, Ev)>>,
    seq: u64,
    pub(crate) events: u64,
    event_budget: u64,
    finished: bool,
    policy: Box<dyn Policy>,
    actions: Vec<Action>,
    notes: Vec<(PcpuId, String)>,
    pub(crate) pcpus: Vec<Pcpu>,
    pub(crate) running: Vec<Option<VcpuId>>,
    pub(crate) vcpus: Vec<Vcpu>,
    vcpu_dom: Vec<DomId>,
    vcpu_name: Vec<String>,
    pub(crate) dom_info: Vec<DomainInfo>,
    pub(crate) tasks: Vec<Task>,
    clients: Vec<Client>,
    /// The backend task of each domain's driver domain (None for domains with no driver).
    driver_task_of: Vec<Option<TaskId>>,
    link_in: Link,
    link_out: Link,
    pub(crate) dom_metrics: Vec<DomMetrics>,
    pub(crate) task_metrics: Vec<TaskMetrics>,
    /// Busy time of all pCPUs within the measured window [ns].
    pub(crate) busy_ns: u64,
    trace: Trace,
    wall_start: Option<std::time::Instant>,
    pub(crate) wall_ns: u64,
}

fn guest_slice(p: Priority) -> u64 {
    // O(1) scheduler base time slices: 100 ms at nice 0, 800 ms at -20, 5 ms at 19.
    let ms = match p {
        Priority::Rt(_) => 100,
        Priority::Nice(n) if n < 0 => (20 - n as i64) * 20,
        Priority::Nice(n) => ((20 - n as i64) * 5).max(5),
    };
    ms as u64 * 1_000_000
}

impl Simulation {
    /// Builds the host of `scenario` under the policy with id `policy_id`.
    pub fn new(scenario: &Scenario, policy_id: &str) -> Result<Simulation, SimError> {
        let spec = scenario.policy(policy_id).ok_or_else(|| SimError::UnknownPolicy(policy_id.to_string()))?;
        let pcpus = scenario.host.pcpus as usize;
        let end = Nanos::from_ms(scenario.duration_ms);
        let warmup = Nanos::from_ms(scenario.warmup_ms);

        let mut vcpus = Vec::new();
        let mut dom_info = Vec::new();
        let mut tasks: Vec<Task> = Vec::new();
        for (d, dom) in scenario.domains.iter().enumerate() {
            let first = vcpus.len();
            for k in 0..dom.vcpus as usize {
                vcpus.push(Vcpu {
                    dom: DomId(d),
                    index: k,
                    name: format!("{}.v{k}", dom.name),
                    state: VState::Blocked,
                    paused: false,
                    on_pcpu: None,
                    pending: VecDeque::new(),
                    tasks: Vec::new(),
                    runnable: Vec::new(),
                    current: None,
                    exec_start: None,
                    guest_gen: 0,
                    blocked_since: Some(Nanos::ZERO),
                });
            }
            dom_info.push(DomainInfo {
                name: dom.name.clone(),
                weight: dom.weight,
                cap_pct: dom.cap_pct,
                vcpus: (first..vcpus.len()).map(VcpuId).collect(),
                is_driver: dom.role == Role::Driver,
            });
            let add_task = |tasks: &mut Vec<Task>, vcpus: &mut Vec<Vcpu>, k: usize, name: String, pr, work| {
                let v = VcpuId(first + k);
                let id = TaskId(tasks.len());
                vcpus[v.0].tasks.push(id);
                tasks.push(Task {
                    dom: DomId(d),
                    vcpu: v,
                    name,
                    priority: pr,
                    state: TState::Blocked,
                    burst_left: Some(0),
                    slice_left: guest_slice(pr),
                    sleep_avg: 0,
                    blocked_since: Nanos::ZERO,
                    work,
                });
            };
            if dom.role == Role::Driver {
                // The backend (netback/blkback) runs as a kernel thread on the driver domain's first vCPU.
                let work =
                    Work::Driver { packet_ns: us_to_ns(dom.costs.packet_us), queue: VecDeque::new(), current: None };
                add_task(&mut tasks, &mut vcpus, 0, "backend".into(), Priority::Rt(crate::scenario::RtTag::Rt), work);
            }
            for (j, t) in dom.tasks.iter().enumerate() {
                let k = t.vcpu.map_or(j % dom.vcpus as usize, |v| v as usize);
                let pr = t.priority.unwrap_or(Priority::Nice(0));
                let work = match &t.workload {
                    Workload::Cpu => Work::Cpu,
                    Workload::Server(s) => Work::Server {
                        port: s.port,
                        cpu_ns: us_to_ns(s.cpu_us),
                        response_bytes: s.response_bytes,
                        queue: VecDeque::new(),
                    },
                };
                add_task(&mut tasks, &mut vcpus, k, t.name.clone(), pr, work);
            }
        }

        let first_driver_task = |name: Option<&str>| -> Option<TaskId> {
            let d = scenario.domains.iter().position(|x| x.role == Role::Driver && name.is_none_or(|n| n == x.name))?;
            tasks.iter().position(|t| t.dom == DomId(d) && matches!(t.work, Work::Driver { .. })).map(TaskId)
        };
        let driver_task_of: Vec<Option<TaskId>> =
            scenario.domains.iter().map(|d| first_driver_task(d.driver.as_deref())).collect();

        let mut clients = Vec::new();
        for (i, t) in tasks.iter().enumerate() {
            if let Work::Server { port, .. } = t.work {
                let spec = scenario.domains[t.dom.0]
                    .tasks
                    .iter()
                    .find(|s| s.name == t.name)
                    .and_then(|s| match &s.workload {
                        Workload::Server(sv) => Some(sv.clone()),
                        _ => None,
                    })
                    .expect("server task has a server spec");
                for c in 0..spec.clients {
                    let name = format!("client/{}/{}/{c}", scenario.domains[t.dom.0].name, t.name);
                    clients.push(Client {
                        server: TaskId(i),
                        dom: t.dom,
                        port,
                        think: (ms_to_ns(spec.think_ms[0]), ms_to_ns(spec.think_ms[1])),
                        request_bytes: spec.request_bytes,
                        rng: Stream::new(scenario.seed, &name),
                    });
                }
            }
        }

        let net = &scenario.host.net;
        let link = || Link { free_at: Nanos::ZERO, ns_per_byte: 8000.0 / net.mbps, latency: us_to_ns(net.latency_us) };
        let vcpu_dom: Vec<DomId> = vcpus.iter().map(|v| v.dom).collect();
        let vcpu_name: Vec<String> = vcpus.iter().map(|v| v.name.clone()).collect();
        let policy = policy::build(&spec.scheduler, &spec.params, pcpus, &dom_info).map_err(SimError::Policy)?;
        let trace = Trace::new(pcpus, vcpu_dom.iter().map(|d| d.0).collect(), dom_info.len(), end.0);
        let ndom = dom_info.len();
        let ntasks = tasks.len();
        let mut sim = Simulation {
            scenario: scenario.clone(),
            policy_id: policy_id.to_string(),
            now: Nanos::ZERO,
            end,
            warmup,
            queue: BinaryHeap::new(),
            seq: 0,
            events: 0,
            event_budget: EVENTS_PER_SIM_SECOND_BUDGET.saturating_mul(scenario.duration_ms.div_ceil(1000).max(1)),
            finished: false,
            policy,
            actions: Vec::new(),
            notes: Vec::new(),
            pcpus: (0..pcpus)
                .map(|_| Pcpu {
                    running: None,
                    seg_start: Nanos::ZERO,
                    seg_task: None,
                    slice_gen: 0,
                    resched_pending: false,
                    slice_expired: false,
                })
                .collect(),
            running: vec![None; pcpus],
            vcpus,
            vcpu_dom,
            vcpu_name,
            dom_info,
            tasks,
            clients,
            driver_task_of,
            link_in: link(),
            link_out: link(),
            dom_metrics: (0..ndom).map(|_| DomMetrics::default()).collect(),
            task_metrics: (0..ntasks).map(|_| TaskMetrics::default()).collect(),
            busy_ns: 0,
            trace,
            wall_start: None,
            wall_ns: 0,
        };
        sim.boot();
        Ok(sim)
    }

    fn push(&mut self, at: Nanos, ev: Ev) {
        self.seq += 1;
        self.queue.push(Reverse((at, self.seq, ev)));
    }

    fn boot(&mut self) {
        let timers = self.policy.timers();
        for v in 0..self.vcpus.len() {
            let p = self.with_ctx(|pol, ctx| pol.init_vcpu(VcpuId(v), ctx));
            let _ = p; // The policy keeps its own placement; the engine learns it when the vCPU runs.
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
        for c in 0..self.clients.len() {
            let (lo, hi) = self.clients[c].think;
            let first = self.clients[c].rng.uniform(lo, hi);
            self.push(Nanos(first), Ev::ClientSend(c));
        }
        for t in 0..self.tasks.len() {
            if matches!(self.tasks[t].work, Work::Cpu) {
                self.tasks[t].burst_left = None;
                self.task_wake(TaskId(t));
            }
        }
        for v in 0..self.vcpus.len() {
            if !self.vcpus[v].runnable.is_empty() {
                self.vcpu_make_runnable(VcpuId(v), "boot");
            }
        }
        self.apply_actions();
        self.snapshot_runqueues();
    }

    /// Runs a policy hook with a context, then records its notes. Actions are applied by the caller.
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
        };
        let r = f(self.policy.as_mut(), &mut ctx);
        for (p, text) in self.notes.drain(..) {
            self.trace.push_decision(self.now.0, p.0, text);
        }
        r
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
                    Action::Unpause(v) => {
                        self.vcpus[v.0].paused = false;
                        if self.vcpus[v.0].on_pcpu.is_none() && self.vcpus[v.0].state == VState::Runnable {
                            self.with_ctx(|pol, ctx| pol.wake(v, WAKE_UNPAUSE, ctx));
                        }
                    }
                }
            }
        }
    }

    /// Records each pCPU's run queue if it changed (the UI's run-queue view and credit/priority history).
    fn snapshot_runqueues(&mut self) {
        for p in 0..self.pcpus.len() {
            let entry = |v: VcpuId| {
                let s = self.policy.vcpu_sched(v);
                RqEntry { vcpu: v.0 as u32, pri: s.pri, credit: s.credit }
            };
            let running = self.running[p].map(entry);
            let queued: Vec<RqEntry> = self.policy.runqueue(PcpuId(p)).into_iter().map(entry).collect();
            self.trace.push_runqueue(p, self.now.0, running, queued);
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
        let t0 = std::time::Instant::now();
        self.wall_start.get_or_insert(t0);
        for _ in 0..max_events {
            let Some(Reverse((at, _, _))) = self.queue.peek() else {
                break;
            };
            if *at >= self.end {
                break;
            }
            let Reverse((at, _, ev)) = self.queue.pop().expect("peeked");
            self.now = at;
            self.events += 1;
            if self.events > self.event_budget {
                return Err(SimError::EventBudget { events: self.events, at_ns: at.0 });
            }
            self.dispatch(ev);
            self.apply_actions();
            self.snapshot_runqueues();
        }
        let done = self.queue.peek().is_none_or(|Reverse((at, _, _))| *at >= self.end);
        if done {
            self.finish();
        }
        self.wall_ns += t0.elapsed().as_nanos() as u64;
        Ok(done)
    }

    /// Runs to the end.
    pub fn run(&mut self) -> Result<(), SimError> {
        while !self.step(100_000)? {}
        Ok(())
    }

    fn finish(&mut self) {
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
        }
    }

    fn in_window(&self, t: Nanos) -> bool {
        t >= self.warmup && t <= self.end
    }

    fn dispatch(&mut self, ev: Ev) {
        match ev {
            Ev::Schedule(p) => self.schedule(p),
            Ev::SliceEnd(p, gen) => {
                if self.pcpus[p.0].slice_gen == gen {
                    self.pcpus[p.0].slice_expired = true;
                    self.resched(p);
                }
            }
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
            Ev::Guest(v, gen) => {
                if self.vcpus[v.0].guest_gen == gen && self.vcpus[v.0].exec_start.is_some() {
                    self.guest_timer(v);
                }
            }
            Ev::ClientSend(c) => {
                let sent_at = self.now;
                let bytes = self.clients[c].request_bytes;
                let arrive = self.link_in.send(self.now, bytes);
                self.push(arrive, Ev::NicRx(c, sent_at));
            }
            Ev::NicRx(c, sent_at) => {
                let (server, dom, port) = (self.clients[c].server, self.clients[c].dom, self.clients[c].port);
                let to = self.tasks[server.0].vcpu;
                let req = Request { client: c, sent_at };
                self.driver_enqueue(dom, DriverItem::Rx { to, port, req }, None);
            }
            Ev::ClientRecv(c, sent_at) => {
                let dom = self.clients[c].dom;
                if self.in_window(self.now) {
                    let m = &mut self.dom_metrics[dom.0];
                    m.responses_ns.push(self.now.0 - sent_at.0);
                }
                let (lo, hi) = self.clients[c].think;
                let think = self.clients[c].rng.uniform(lo, hi);
                self.push(self.now + Nanos(think), Ev::ClientSend(c));
            }
            Ev::Change(i) => {
                let ch = self.scenario.changes[i].clone();
                let text = match self.policy.set_param(&ch.param, &ch.value) {
                    Ok(()) => format!("change: {} = {}", ch.param, ch.value),
                    Err(e) => format!("change rejected: {e}"),
                };
                self.trace.push_decision(self.now.0, 0, text);
            }
        }
    }

    /// Queues an I/O item at the driver domain serving `dom` and notifies its backend's vCPU.
    fn driver_enqueue(&mut self, dom: DomId, item: DriverItem, from: Option<VcpuId>) {
        let Some(bt) = self.driver_task_of[dom.0] else {
            return;
        };
        if let Work::Driver { queue, .. } = &mut self.tasks[bt.0].work {
            queue.push_back(item);
        }
        let dv = self.tasks[bt.0].vcpu;
        self.post_event(dv, GuestEvent::DriverKick, from, "driver work");
    }

    /// An event-channel notification to `v`: delivered at once if `v` is on a pCPU, else held until it runs.
    fn post_event(&mut self, v: VcpuId, ev: GuestEvent, from: Option<VcpuId>, cause: &str) {
        if let Some(f) = from {
            self.with_ctx(|pol, ctx| pol.event_sent(f, v, ctx));
        }
        let vc = &self.vcpus[v.0];
        if vc.on_pcpu.is_some() && !vc.paused {
            if self.in_window(self.now) {
                self.dom_metrics[vc.dom.0].event_latency_ns.push(0);
            }
            if self.vcpus[v.0].state == VState::Blocked {
                self.vcpu_unblocked(v);
            }
            self.deliver(v, ev);
            return;
        }
        self.vcpus[v.0].pending.push_back(Pending { at: self.now, ev });
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

    /// The guest kernel handles a notification on a running vCPU.
    fn deliver(&mut self, v: VcpuId, ev: GuestEvent) {
        match ev {
            GuestEvent::NetRx { port, req } => {
                let found = self.vcpus[v.0]
                    .tasks
                    .iter()
                    .copied()
                    .find(|t| matches!(self.tasks[t.0].work, Work::Server { port: p, .. } if p == port));
                if let Some(t) = found {
                    if let Work::Server { queue, .. } = &mut self.tasks[t.0].work {
                        queue.push_back(req);
                    }
                    if self.tasks[t.0].state == TState::Blocked {
                        self.task_wake(t);
                        self.guest_preempt_check(v, t);
                    }
                }
            }
            GuestEvent::DriverKick => {
                let found =
                    self.vcpus[v.0].tasks.iter().copied().find(|t| matches!(self.tasks[t.0].work, Work::Driver { .. }));
                if let Some(t) = found {
                    if self.tasks[t.0].state == TState::Blocked {
                        self.task_wake(t);
                        self.guest_preempt_check(v, t);
                    }
                }
            }
        }
    }

    /// Makes a guest task runnable and starts its next burst. Does not touch the vCPU.
    fn task_wake(&mut self, t: TaskId) -> bool {
        let now = self.now;
        let task = &mut self.tasks[t.0];
        let burst = match &mut task.work {
            Work::Cpu => None,
            Work::Server { queue, cpu_ns, .. } => {
                if queue.is_empty() {
                    return false;
                }
                Some(*cpu_ns)
            }
            Work::Driver { queue, current, packet_ns } => {
                let Some(item) = queue.pop_front() else {
                    return false;
                };
                *current = Some(item);
                Some(*packet_ns)
            }
        };
        task.burst_left = burst;
        task.sleep_avg = (task.sleep_avg + (now - task.blocked_since).0).min(MAX_SLEEP_AVG);
        task.state = TState::Runnable;
        let v = task.vcpu;
        self.vcpus[v.0].runnable.push(t);
        true
    }

    /// Effective guest priority (lower runs first): RT tasks at 0; others 120 + nice - interactivity bonus.
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

    fn guest_pick(&self, v: VcpuId) -> Option<TaskId> {
        self.vcpus[v.0].runnable.iter().copied().min_by_key(|&t| self.prio(t))
    }

    /// Wake-up preemption in the guest: a woken task that outranks the current one takes the vCPU now.
    fn guest_preempt_check(&mut self, v: VcpuId, woken: TaskId) {
        if self.vcpus[v.0].on_pcpu.is_none() || self.vcpus[v.0].paused {
            return;
        }
        match self.vcpus[v.0].current {
            Some(cur) if self.tasks[cur.0].state == TState::Runnable && self.prio(woken) >= self.prio(cur) => {}
            _ => {
                self.charge(v);
                self.guest_run(v);
            }
        }
    }

    /// Charges the CPU since `exec_start` to the vCPU's current task.
    fn charge(&mut self, v: VcpuId) {
        let Some(start) = self.vcpus[v.0].exec_start else {
            return;
        };
        let Some(t) = self.vcpus[v.0].current else {
            return;
        };
        let e = (self.now - start).0;
        let task = &mut self.tasks[t.0];
        if let Some(b) = task.burst_left.as_mut() {
            *b = b.saturating_sub(e);
        }
        task.slice_left = task.slice_left.saturating_sub(e);
        task.sleep_avg = task.sleep_avg.saturating_sub(e);
        self.vcpus[v.0].exec_start = Some(self.now);
    }

    /// The guest picks its task on a running vCPU, reports any address-space switch, and arms its timer;
    /// with nothing to run, the vCPU blocks.
    fn guest_run(&mut self, v: VcpuId) {
        let Some(p) = self.vcpus[v.0].on_pcpu else {
            return;
        };
        let next = self.guest_pick(v);
        let prev = self.vcpus[v.0].current;
        if next != prev {
            self.close_segment(p);
            self.pcpus[p.0].seg_task = next;
            self.vcpus[v.0].current = next;
            self.with_ctx(|pol, ctx| pol.guest_task_switch(v, prev, next, ctx));
        }
        self.vcpus[v.0].guest_gen += 1;
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
                self.vcpus[v.0].exec_start = Some(self.now);
                let task = &self.tasks[t.0];
                let left = task.burst_left.map_or(task.slice_left, |b| b.min(task.slice_left));
                let gen = self.vcpus[v.0].guest_gen;
                self.push(self.now + Nanos(left), Ev::Guest(v, gen));
            }
        }
    }

    /// The current task's burst or guest slice ended.
    fn guest_timer(&mut self, v: VcpuId) {
        self.charge(v);
        let Some(t) = self.vcpus[v.0].current else {
            return;
        };
        if self.tasks[t.0].burst_left == Some(0) {
            self.burst_done(t);
        } else if self.tasks[t.0].slice_left == 0 {
            // Round robin: to the back of the queue with a fresh slice.
            self.tasks[t.0].slice_left = guest_slice(self.tasks[t.0].priority);
            let rq = &mut self.vcpus[v.0].runnable;
            rq.retain(|&x| x != t);
            rq.push(t);
        }
        self.guest_run(v);
    }

    fn task_block(&mut self, t: TaskId) {
        let task = &mut self.tasks[t.0];
        task.state = TState::Blocked;
        task.blocked_since = self.now;
        let v = task.vcpu;
        self.vcpus[v.0].runnable.retain(|&x| x != t);
    }

    /// A task finished a CPU burst: do what its workload does next.
    fn burst_done(&mut self, t: TaskId) {
        let v = self.tasks[t.0].vcpu;
        let dom = self.tasks[t.0].dom;
        match &mut self.tasks[t.0].work {
            Work::Cpu => {}
            Work::Server { queue, cpu_ns, response_bytes, .. } => {
                let req = queue.pop_front().expect("a server burst serves a queued request");
                let bytes = *response_bytes;
                let more = !queue.is_empty();
                let cpu = *cpu_ns;
                if self.in_window(self.now) {
                    self.dom_metrics[dom.0].requests_served += 1;
                }
                if more {
                    self.tasks[t.0].burst_left = Some(cpu);
                } else {
                    self.task_block(t);
                }
                self.driver_enqueue(dom, DriverItem::Tx { req, bytes }, Some(v));
            }
            Work::Driver { current, queue, packet_ns } => {
                let item = current.take().expect("a backend burst processes an item");
                let next = queue.pop_front();
                let cost = *packet_ns;
                match next {
                    Some(n) => {
                        *current = Some(n);
                        self.tasks[t.0].burst_left = Some(cost);
                    }
                    None => self.task_block(t),
                }
                match item {
                    DriverItem::Rx { to, port, req } => {
                        self.post_event(to, GuestEvent::NetRx { port, req }, Some(v), &format!("net rx port {port}"));
                    }
                    DriverItem::Tx { req, bytes } => {
                        let arrive = self.link_out.send(self.now, bytes);
                        self.push(arrive, Ev::ClientRecv(req.client, req.sent_at));
                    }
                }
            }
        }
    }

    /// Closes the open segment of `p` at `now`, recording it and its CPU time.
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
        self.trace.push_segment(Segment {
            pcpu: p.0 as u32,
            start: start.0,
            end: self.now.0,
            vcpu: v.0 as u32,
            task: task.map_or(-1, |t| t.0 as i32),
        });
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
            self.vcpus[c.0].guest_gen += 1;
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
                panic!("policy bug: {} chosen on pCPU{} while running on pCPU{}", self.vcpu_name[n.0], p.0, q.0);
            }
        }
        if d.next != cur {
            if let Some(c) = cur {
                self.vcpus[c.0].on_pcpu = None;
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
        self.trace.push_decision(self.now.0, p.0, format!("{trigger}: {}", d.reason));
        self.pcpus[p.0].slice_gen += 1;
        if let Some(n) = d.next {
            let gen = self.pcpus[p.0].slice_gen;
            self.push(self.now + d.slice, Ev::SliceEnd(p, gen));
            // Pending notifications are delivered as the vCPU starts running.
            while let Some(pe) = self.vcpus[n.0].pending.pop_front() {
                if self.in_window(self.now) {
                    self.dom_metrics[self.vcpus[n.0].dom.0].event_latency_ns.push((self.now - pe.at).0);
                }
                self.deliver(n, pe.ev);
            }
            if self.vcpus[n.0].on_pcpu == Some(p) && self.pcpus[p.0].running == Some(n) {
                self.guest_run(n);
            }
        }
    }
}

#[cfg(test)]
mod tests;
