//! The simulated host's runtime state: pCPUs, domains, vCPUs, guest tasks and their workloads, external clients.
//! The engine (`sim`) owns it and is the only writer; policies see it through `policy::HostView`.

use crate::rng::Stream;
use crate::scenario::Priority;
use crate::time::Nanos;
use std::collections::VecDeque;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DomId(pub usize);
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VcpuId(pub usize);
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PcpuId(pub usize);
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub usize);

/// The wake cause the engine passes when a paused vCPU is unpaused (cap parking ends).
pub const WAKE_UNPAUSE: &str = "unpark";

pub struct Pcpu {
    /// The vCPU on this pCPU (`None` = idle).
    pub running: Option<VcpuId>,
    /// Start of the open schedule segment [ns].
    pub seg_start: Nanos,
    /// Guest task of the open segment.
    pub seg_task: Option<TaskId>,
    /// Bumped whenever the slice timer is re-armed, so stale timers are ignored.
    pub slice_gen: u64,
    pub resched_pending: bool,
    /// The slice timer fired since the last schedule (so the decision log can say "slice end").
    pub slice_expired: bool,
}

/// Whether a vCPU has work. Where it is, and whether it is paused, are separate facts.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum VState {
    /// No runnable guest task and no pending event: the guest yielded the CPU.
    Blocked,
    /// Has work (queued, running, or paused with work).
    Runnable,
}

/// An event-channel notification waiting for its vCPU to run.
#[derive(Clone, Debug)]
pub struct Pending {
    /// When it became pending [ns].
    pub at: Nanos,
    pub ev: GuestEvent,
}

#[derive(Clone, Debug)]
pub enum GuestEvent {
    /// A network request for the server on `port` (carried through the driver domain).
    NetRx { port: u16, req: Request },
    /// The driver domain has I/O work queued.
    DriverKick,
}

pub struct Vcpu {
    pub dom: DomId,
    /// Index within its domain.
    pub index: usize,
    pub name: String,
    pub state: VState,
    pub paused: bool,
    /// The pCPU it is on, if any.
    pub on_pcpu: Option<PcpuId>,
    pub pending: VecDeque<Pending>,
    /// Guest tasks pinned here.
    pub tasks: Vec<TaskId>,
    /// Runnable guest tasks in queue order (includes the current one).
    pub runnable: Vec<TaskId>,
    /// The guest's current task (its address space is loaded).
    pub current: Option<TaskId>,
    /// When the current task started executing on a pCPU, while it is [ns].
    pub exec_start: Option<Nanos>,
    /// Bumped whenever the guest timer is re-armed.
    pub guest_gen: u64,
    /// Since when it has been blocked, while it is [ns].
    pub blocked_since: Option<Nanos>,
}

/// A request of an external client, as it travels to the server and back.
#[derive(Copy, Clone, Debug)]
pub struct Request {
    pub client: usize,
    /// When the client sent it [ns].
    pub sent_at: Nanos,
}

/// A unit of work queued at a driver domain's backend.
#[derive(Copy, Clone, Debug)]
pub enum DriverItem {
    /// A received packet for a guest vCPU.
    Rx { to: VcpuId, port: u16, req: Request },
    /// A packet a guest sent, to go out on the wire.
    Tx { req: Request, bytes: u32 },
}

pub enum Work {
    /// Busy loop.
    Cpu,
    /// Request/response server.
    Server {
        port: u16,
        /// CPU per request [ns].
        cpu_ns: u64,
        response_bytes: u32,
        queue: VecDeque<Request>,
    },
    /// The driver domain's backend (netback): processes queued I/O items.
    Driver {
        /// CPU per packet [ns].
        packet_ns: u64,
        queue: VecDeque<DriverItem>,
        current: Option<DriverItem>,
    },
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TState {
    Runnable,
    Blocked,
}

pub struct Task {
    pub dom: DomId,
    pub vcpu: VcpuId,
    pub name: String,
    pub priority: Priority,
    pub state: TState,
    /// CPU left in the current burst [ns]; `None` = never ends (busy loop).
    pub burst_left: Option<u64>,
    /// CPU left in the guest time slice [ns].
    pub slice_left: u64,
    /// Linux O(1) interactivity estimate: recent sleep minus run time, in [0, MAX_SLEEP_AVG] [ns].
    pub sleep_avg: u64,
    pub blocked_since: Nanos,
    pub work: Work,
}

pub struct Client {
    pub server: TaskId,
    pub dom: DomId,
    pub port: u16,
    /// Think time range [ns].
    pub think: (u64, u64),
    pub request_bytes: u32,
    pub rng: Stream,
}

/// One direction of the host's network link: a FIFO with a serialisation delay and a wire latency.
pub struct Link {
    pub free_at: Nanos,
    /// Serialisation time per byte [ns], from the link speed.
    pub ns_per_byte: f64,
    /// One-way latency [ns].
    pub latency: u64,
}

/// Ethernet + IP + UDP header bytes added to every payload on the wire.
pub const HEADER_BYTES: u32 = 42;

impl Link {
    /// Queues a packet sent at `now`; returns when it arrives at the far end.
    pub fn send(&mut self, now: Nanos, bytes: u32) -> Nanos {
        let start = self.free_at.max(now);
        let tx = (f64::from(bytes + HEADER_BYTES) * self.ns_per_byte).round() as u64;
        self.free_at = start + Nanos(tx);
        self.free_at + Nanos(self.latency)
    }
}
