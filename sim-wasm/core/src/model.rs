//! The simulated host's runtime state: pCPUs, domains, vCPUs, guest tasks and their workloads, external clients.
//! The engine (`sim`) owns it and is the only writer; policies see it through `policy::HostView`.

use crate::rng::Stream;
use crate::tcp::{TcpReceiver, TcpSender};
use crate::time::Nanos;
use serde::Deserialize;
use serde::Serialize;
use std::collections::VecDeque;

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct DomId(pub usize);
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VcpuId(pub usize);
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PcpuId(pub usize);
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct TaskId(pub usize);

/// A re-armable timer that keeps at most one live event in the queue: re-arming it later does not queue a new
/// event (the pending one re-queues itself at the new deadline when it fires), re-arming it earlier does, and
/// events that no longer match are recognised as stale. This keeps the queue from filling with cancelled timers.
#[derive(Debug, Clone, Copy, Default)]
pub struct Timer {
    deadline: Option<Nanos>,
    pending: Option<Nanos>,
}

/// What a timer event means when it fires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fire {
    /// The deadline is now.
    Due,
    /// The deadline moved later: queue an event for it.
    Later(Nanos),
    /// A leftover event: ignore it.
    Stale,
}

impl Timer {
    /// Sets the deadline; returns true when the caller must queue an event at `at`.
    pub fn arm(&mut self, at: Nanos) -> bool {
        self.deadline = Some(at);
        if self.pending.is_none_or(|p| at < p) {
            self.pending = Some(at);
            true
        } else {
            false
        }
    }

    pub fn cancel(&mut self) {
        self.deadline = None;
    }

    pub fn is_armed(&self) -> bool {
        self.deadline.is_some()
    }

    /// Interprets an event of this timer firing at `now`.
    pub fn fire(&mut self, now: Nanos) -> Fire {
        if self.pending != Some(now) {
            return Fire::Stale;
        }
        self.pending = None;
        match self.deadline {
            Some(d) if d <= now => {
                self.deadline = None;
                Fire::Due
            }
            Some(d) => {
                self.pending = Some(d);
                Fire::Later(d)
            }
            None => Fire::Stale,
        }
    }
}

#[derive(Clone)]
pub struct Pcpu {
    /// The vCPU on this pCPU (`None` = idle).
    pub running: Option<VcpuId>,
    /// Start of the open schedule segment [ns].
    pub seg_start: Nanos,
    /// Guest task of the open segment.
    pub seg_task: Option<TaskId>,
    /// When the running vCPU's slice ends.
    pub slice_timer: Timer,
    pub resched_pending: bool,
    /// The slice timer fired since the last schedule (so the decision log can say "slice end").
    pub slice_expired: bool,
    /// The domain whose vCPU last ran here: a switch to another domain's vCPU refills the caches.
    pub last_dom: Option<DomId>,
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

/// What a notification tells the guest kernel.
#[derive(Clone, Debug)]
pub enum GuestEvent {
    /// A packet for the task in `dst` (its socket), carried through the driver domain.
    Packet(Packet),
    /// The driver domain's backend thread (this task) has I/O work queued.
    DriverKick(TaskId),
    /// The driver domain's backend sent the guest's packets on: netfront frees their ring slots (no task wakes).
    TxDone,
    /// A block request of `task` completed.
    BlkDone { task: TaskId, bytes: u32, issued_at: Nanos },
    /// A guest timer of `task` expired.
    Timer(TaskId),
    /// An inter-processor interrupt waking `task` (barrier release).
    Ipi(TaskId),
    /// The guest block layer's unplug timer: queued block requests go to the driver domain.
    Unplug,
    /// The hypervisor's virtual IRQ that wakes the guest's CPU balloon `task` (xBalloon arms it).
    Virq(TaskId),
    /// A TLB-flush IPI from the shootdown thread `from`: the vCPU flushes and acknowledges.
    Flush(TaskId),
}

impl GuestEvent {
    /// A short name for the trace.
    pub fn kind(&self) -> &'static str {
        match self {
            GuestEvent::Packet(_) => "packet",
            GuestEvent::DriverKick(_) => "backend",
            GuestEvent::TxDone => "tx done",
            GuestEvent::BlkDone { .. } => "block",
            GuestEvent::Timer(_) => "timer",
            GuestEvent::Ipi(_) => "ipi",
            GuestEvent::Unplug => "unplug",
            GuestEvent::Virq(_) => "virq",
            GuestEvent::Flush(_) => "flush ipi",
        }
    }
}

#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct PeerId(pub usize);

/// An endpoint of a packet: a guest task (its socket) or a machine outside the host.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Endpoint {
    Task(TaskId),
    Peer(PeerId),
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum PKind {
    Request,
    Response,
    Data,
    Ack,
}

#[derive(Copy, Clone, Debug)]
pub struct Packet {
    pub src: Endpoint,
    pub dst: Endpoint,
    pub kind: PKind,
    /// Payload [bytes].
    pub bytes: u32,
    /// When the exchange this packet belongs to began (the client's send), for response times [ns].
    pub origin_at: Nanos,
    /// Destination port in the guest (0 when the flow has none), for port-based correlation.
    pub port: u16,
    /// Segments a TCP acknowledgement covers (delayed ACKs cover two); 1 otherwise.
    pub segs: u32,
    /// Receive window a TCP acknowledgement advertises: free space in the receiver's socket buffer beyond what
    /// it acknowledges [segments]; `NO_RWND` when the receiver never limits the sender.
    pub rwnd: u32,
    /// TCP sequence number of a bulk stream's data segment, or the next segment a cumulative acknowledgement
    /// expects [segments]; 0 for packets of other flows.
    pub seq: u32,
}

/// `Packet::rwnd` of packets whose receiver drains at once (or that are no acknowledgement).
pub const NO_RWND: u32 = u32::MAX;

/// TCP/UDP payload per full-size packet [bytes].
pub const MSS: u32 = 1448;

/// A unit of work queued at a driver domain's backend (netback/blkback).
#[derive(Copy, Clone, Debug)]
pub enum DriverItem {
    /// A packet to hand to a guest.
    Rx(Packet),
    /// A packet a guest sent: to the wire, or to another domain on this host.
    Tx(Packet),
    /// A guest's block request to submit to the disk.
    BlkSubmit { task: TaskId, bytes: u32, issued_at: Nanos },
    /// A completed block request to hand back to the guest.
    BlkDone { task: TaskId, bytes: u32, issued_at: Nanos },
}

/// What a barrier thread is doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum BarrierPhase {
    Compute,
    /// Busy-waiting at the barrier (burns CPU).
    Spin,
    /// Blocked at the barrier.
    Wait,
    Done,
}

/// What a spinlock thread is doing.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum LockPhase {
    /// Working between two acquisitions.
    Between,
    /// Waiting for the lock, spinning (burns CPU).
    Spin,
    /// Waiting for the lock, halted until the releaser kicks it (PV spinlocks).
    Halt,
    /// Holding the lock: in the critical section.
    Hold,
}

#[derive(Clone)]
pub enum Work {
    /// Busy loop.
    Cpu,
    /// Request/response server (also `interactive`: keystrokes in, screen updates out).
    Server {
        /// CPU per request [ns].
        cpu_ns: u64,
        response_bytes: u32,
        /// TCP: each response is acknowledged by the client.
        tcp: bool,
        queue: VecDeque<Packet>,
        port: u16,
        /// Block I/O each request does (a database's page reads and log writes), if any.
        disk: Option<ServerDisk>,
    },
    /// One tier of a request chain: serve, call the next tier, answer upstream when it answers.
    Tier {
        cpu_ns: u64,
        next: Option<TaskId>,
        queue: VecDeque<Packet>,
        /// The upstream request being served while the next tier works on it.
        waiting: Option<Packet>,
        /// The next tier answered; finish the waiting request.
        answered: bool,
        port: u16,
        request_bytes: u32,
        response_bytes: u32,
    },
    /// I/O then `cpu_ns` of CPU, in a loop.
    IoLoop {
        disk: bool,
        /// Disk I/O writes (direct I/O: data goes out to the disk) rather than reads.
        write: bool,
        cpu_ns: u64,
        /// Block-layer CPU per request the task pays itself [ns]: a driver domain owns the disk, so its own tasks
        /// submit and complete their requests in their own kernel (no backend); 0 in a guest, whose backend pays.
        own_block_ns: u64,
        /// Block size for disk I/O [bytes].
        bytes: u32,
        /// Set while the CPU part runs after an I/O completed.
        computing: bool,
        /// When the outstanding I/O was issued [ns].
        issued_at: Nanos,
        port: u16,
        /// The echoing peer of a network loop.
        peer: Option<PeerId>,
    },
    /// Receiving end of a bulk TCP stream: consumes data packets, acknowledges each.
    BulkRx {
        cpu_ns: u64,
        /// Segments the kernel holds for the reader (the socket buffer's unread data).
        queue: VecDeque<Packet>,
        /// Segments received by the kernel but not yet acknowledged (delayed ACK: one ACK per two).
        unacked: u32,
        /// Socket receive buffer [segments]: the sender may have at most this much unread or in flight; None =
        /// unlimited (the kernel takes whatever arrives and ACKs advertise no window).
        window: Option<u32>,
        /// What the sender still sees open of the last advertised window [segments]; a read that opens the
        /// window well beyond it sends a window update.
        advertised: u32,
        /// The connection's receiving side: cumulative ACKs, out-of-order segments held.
        tcp: TcpReceiver,
        /// The delayed-ACK timer, armed while a lone in-order segment waits for its ACK.
        delack: Timer,
    },
    /// Sending end of a bulk TCP stream: sends while its window allows. Segments `acked..sent` are in flight;
    /// the sink acknowledges cumulatively, so a lost ACK is covered by the next.
    BulkTx { cpu_ns: u64, peer: PeerId, window: u32, sent: u32, acked: u32 },
    /// Constant-bit-rate streaming to buffered clients: wakes every interval, sends what is due.
    Stream {
        /// CPU per packet sent [ns].
        cpu_ns: u64,
        /// Send period [ns].
        interval_ns: u64,
        clients: Vec<PeerId>,
        /// Bits per second per client.
        bps: u64,
        /// Data owed to each client in bit-nanoseconds (bits x 1e9), so no fraction is lost between rounds.
        owed: Vec<u128>,
        last_send: Nanos,
        /// Packets due and not yet written, in order (the client each is for).
        to_send: VecDeque<PeerId>,
        /// The sockets' send buffers and netfront's transmit ring.
        tx: crate::sim::sendbuf::SendPath,
    },
    /// A task of a message ring (hackbench-like): for each message in its inbox, `cpu_ns` of CPU, then the message
    /// goes to `next`, waking it inside the guest; blocks while its inbox is empty.
    Pipe { next: TaskId, cpu_ns: u64, inbox: u32 },
    /// A thread of a concurrent job: compute, then synchronise with its siblings.
    /// `member`: the thread's index in its group (its vCPU's index in the domain).
    Barrier { group: usize, member: usize, compute_ns: u64, spin: bool, phase: BarrierPhase },
    /// A thread of a spinlock job (`member`: its vCPU's index in the domain), contending for its domain's lock:
    /// `between_ns` of work, then `cs_ns` under the lock; `pv`: a paravirtual lock (spin, then halt).
    Lock { member: usize, cs_ns: u64, between_ns: u64, pv: bool, phase: LockPhase },
    /// A TLB shootdown thread: `interval_ns` of CPU, then an IPI to every other vCPU of its domain (each spends
    /// `flush_ns` flushing), spinning until `waiting` acknowledgements are in (sent at `sent_at`). `sending`: its
    /// IPIs are being posted (an acknowledgement then must not restart it). `targets`: vCPUs per shootdown (0:
    /// every other one), taken in turn from `rotor` (an index into the domain's other vCPUs).
    Tlb { interval_ns: u64, flush_ns: u64, waiting: u32, sent_at: Nanos, sending: bool, targets: u32, rotor: u32 },
    /// The driver domain's backend: processes queued I/O items.
    Driver {
        /// CPU per packet [ns].
        packet_ns: u64,
        /// CPU per block request, split between submission and completion [ns].
        block_ns: u64,
        queue: VecDeque<DriverItem>,
        /// The items of the batch being processed (handed on together when the burst ends).
        batch: Vec<DriverItem>,
        /// The backend is returning from the notifications that ended its last batch [ns of CPU left to do]:
        /// a guest the notification woke may preempt it before it gets back to its idle loop.
        tail_ns: Option<u64>,
    },
    /// xBalloon's CPU balloon (paper 002): each run is a hypercall that pauses the vCPU while the hypervisor's
    /// reservation for the period is not met; told otherwise, it sleeps until the next virtual IRQ.
    Balloon {
        /// Dormant: the reservation is met (or the hypervisor has no xBalloon); waits for the virtual IRQ.
        sleeping: bool,
    },
}

/// A server's per-request block I/O: the request's CPU is split into `reads + writes + 1` equal bursts with one
/// synchronous block request (through the driver domain's block backend) between consecutive bursts; reads come
/// first (page misses while the query runs), then writes (the commit's log flush).
#[derive(Clone, Copy, Debug)]
pub struct ServerDisk {
    pub reads: u32,
    pub writes: u32,
    /// Size of each request [bytes].
    pub bytes: u32,
    /// Requests of the current client request completed so far.
    pub done: u32,
    /// A request is at the disk; the server waits for it.
    pub waiting: bool,
}

impl ServerDisk {
    /// Block requests per client request.
    pub fn ios(&self) -> u32 {
        self.reads + self.writes
    }
}

/// The threads of one barrier job and its progress.
#[derive(Clone)]
pub struct BarrierGroup {
    /// Job key in the report: `DOMAIN/TASK`.
    pub key: String,
    pub members: Vec<TaskId>,
    pub arrived: u32,
    pub phases: u32,
    pub phases_done: u32,
    /// When the last phase completed [ns].
    pub done_at: Option<Nanos>,
    /// CPU spent spinning at the barrier [ns].
    pub spin_ns: u64,
    /// The same per member (thread, one per vCPU) [ns].
    pub spin_ns_by_member: Vec<u64>,
}

/// A machine outside the host.
#[derive(Clone)]
pub enum Peer {
    /// A closed-loop client: request, wait for the response, think, repeat.
    Client { server: TaskId, think: (u64, u64), request_bytes: u32, tcp: bool, port: u16, rng: Box<Stream> },
    /// Answers every request at once (the far end of an `io_loop` over the network).
    Echo,
    /// Sends a bulk stream to `task` under TCP's congestion control, the receiver's advertised window and its own
    /// send buffer; `rto` is its retransmission timer.
    BulkSender { task: TaskId, tcp: Box<TcpSender>, rto: Timer },
    /// Acknowledges every data packet it receives.
    BulkSink,
    /// Plays a stream out of a buffer; counts under-runs.
    StreamClient(StreamClient),
}

#[derive(Clone)]
pub struct StreamClient {
    pub server: TaskId,
    /// Playback rate [bits/s].
    pub bps: u64,
    /// Buffer capacity [bytes].
    pub capacity: u64,
    /// Bytes buffered at `updated` (playback drains it continuously while playing).
    pub level: f64,
    pub updated: Nanos,
    pub playing: bool,
    /// When playback first started; None while it never has.
    pub started_at: Option<Nanos>,
    pub underruns: u64,
    /// When the buffer runs dry at the current playback rate, while playing.
    pub empty: Timer,
}

impl StreamClient {
    /// How long a client may wait for playback to start before that counts as an under-run: twice the time the
    /// stream at its own bit rate takes to fill the half buffer playback starts at. A client receiving less than
    /// half its rate from the start misses it. (The papers give no start-up budget; this is the one choice.)
    pub fn startup_budget(&self) -> Nanos {
        Nanos(2 * (self.capacity / 2) * 8 * 1_000_000_000 / self.bps.max(1))
    }

    /// Playback did not start within the start-up budget of a run that lasted `end`: it started late, or never
    /// did and the budget is spent.
    pub fn missed_startup(&self, end: Nanos) -> bool {
        let budget = self.startup_budget();
        match self.started_at {
            Some(at) => at > budget,
            None => end > budget,
        }
    }
}

/// A FIFO disk: one request at a time, exponential seek/rotation plus transfer.
#[derive(Clone)]
pub struct Disk {
    pub busy_until: Nanos,
    /// Mean positioning time [ns].
    pub mean_ns: u64,
    /// Transfer time per byte [ns].
    pub ns_per_byte: f64,
    pub rng: Stream,
    /// Requests that reached the disk and requests it finished, over the whole run (tests check conservation).
    pub submitted: u64,
    pub completed: u64,
}

#[derive(Clone)]
pub struct Vcpu {
    pub dom: DomId,
    /// Index within its domain.
    pub index: usize,
    pub name: String,
    pub state: VState,
    pub paused: bool,
    /// The pCPU it is on, if any.
    pub on_pcpu: Option<PcpuId>,
    /// The pCPU it last ran on, if it has run (migrations are counted against it).
    pub last_pcpu: Option<PcpuId>,
    pub pending: VecDeque<Pending>,
    /// Guest tasks pinned here.
    pub tasks: Vec<TaskId>,
    /// Runnable guest tasks in queue order (includes the current one).
    pub runnable: Vec<TaskId>,
    /// The guest's current task (its address space is loaded).
    pub current: Option<TaskId>,
    /// When the current task started executing on a pCPU, while it is [ns].
    pub exec_start: Option<Nanos>,
    /// When the current guest task's burst or guest slice ends.
    pub guest_timer: Timer,
    /// Since when it has been blocked, while it is [ns].
    pub blocked_since: Option<Nanos>,
    /// When it last left a pCPU while runnable (time its guest did not run) [ns].
    pub descheduled_at: Option<Nanos>,
    /// Linux O(1): when the first task of the current expired array expired (starvation check) [ns].
    pub expired_since: Option<Nanos>,
    /// CFS: the smallest vruntime on this vCPU's run queue, never decreasing [ns].
    pub min_vruntime: u64,
    /// The guest's CPU balloon task on this vCPU (xBalloon), if it runs one.
    pub balloon: Option<TaskId>,
    /// When the balloon last paused this vCPU: tasks that got an event since run before the balloon [ns].
    pub balloon_since: Nanos,
    /// While on a pCPU: until when it runs hypervisor or guest-kernel work (a switch, event upcalls, network and
    /// block stack work) before its current task makes progress again [ns].
    pub kernel_until: Nanos,
    /// While off a pCPU: the part of that work not done yet, resumed when it next runs [ns].
    pub kernel_left: u64,
    /// When it last took an event upcall: notifications posted at one instant share one upcall [ns].
    pub last_upcall: Option<Nanos>,
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum TState {
    Runnable,
    Blocked,
}

#[derive(Clone)]
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
    /// Linux O(1): in the expired array (used its slice without being interactive); waits until the active
    /// array is empty.
    pub expired: bool,
    pub blocked_since: Nanos,
    /// CFS virtual runtime: CPU time (as its guest clock charges it) weighted by nice [ns].
    pub vruntime: u64,
    /// When the guest kernel last handed it an event (packet, completion, timer, IPI) [ns].
    pub last_event: Option<Nanos>,
    pub work: Work,
}

/// One direction of the host's network link: a FIFO with a serialisation delay and a wire latency.
#[derive(Clone)]
pub struct Link {
    pub free_at: Nanos,
    /// Serialisation time per byte [ns], from the link speed.
    pub ns_per_byte: f64,
    /// One-way latency [ns].
    pub latency: u64,
    /// Mean of the extra queueing delay a packet meets on the way (cross traffic at the switch), exponential
    /// [ns]; 0 = none.
    pub jitter_ns: u64,
    /// The seeded stream the queueing delays come from.
    pub rng: Stream,
    /// When the last packet sent arrives: the wire keeps packets in order, whatever their delays [ns].
    pub last_arrival: Nanos,
    /// When each packet still queued at the sending NIC (or being serialised) leaves it, oldest first [ns].
    pub queued: VecDeque<Nanos>,
    /// Most packets the sending NIC queues; one sent to a full queue is dropped [packets]. `usize::MAX`: no
    /// bound, and `queued` is not kept.
    pub queue_limit: usize,
}

/// Ethernet + IP + UDP header bytes added to every payload on the wire.
pub const HEADER_BYTES: u32 = 42;

impl Link {
    /// Queues a packet sent at `now`; returns when it arrives at the far end, or `None` when the NIC's queue
    /// is full and the packet is dropped.
    pub fn send(&mut self, now: Nanos, bytes: u32) -> Option<Nanos> {
        let bounded = self.queue_limit != usize::MAX;
        while self.queued.front().is_some_and(|&t| t <= now) {
            self.queued.pop_front();
        }
        if bounded && self.queued.len() >= self.queue_limit {
            return None;
        }
        let start = self.free_at.max(now);
        let tx = (f64::from(bytes + HEADER_BYTES) * self.ns_per_byte).round() as u64;
        self.free_at = start + Nanos(tx);
        let queued = if self.jitter_ns > 0 { self.rng.exponential(self.jitter_ns) } else { 0 };
        let at = (self.free_at + Nanos(self.latency + queued)).max(self.last_arrival);
        self.last_arrival = at;
        if bounded {
            self.queued.push_back(self.free_at);
        }
        Some(at)
    }
}

crate::size::no_heap!(Pcpu, Pending, ServerDisk, StreamClient, Disk);
crate::size::no_heap!(DomId, VcpuId, PcpuId, TaskId, PeerId, Packet, DriverItem, Timer);
crate::size::heap_size!(Link { queued });
crate::size::heap_size!(Vcpu { name, pending, tasks, runnable });
crate::size::heap_size!(Task { name, work });
crate::size::heap_size!(BarrierGroup { key, members, spin_ns_by_member });

impl crate::size::HeapSize for Work {
    fn heap_size(&self) -> usize {
        match self {
            Work::Server { queue, .. } | Work::Tier { queue, .. } | Work::BulkRx { queue, .. } => queue.heap_size(),
            Work::Stream { clients, owed, to_send, tx, .. } => {
                clients.heap_size() + owed.heap_size() + to_send.heap_size() + tx.buffered.heap_size()
            }
            Work::Driver { queue, batch, .. } => queue.heap_size() + batch.heap_size(),
            _ => 0,
        }
    }
}

impl crate::size::HeapSize for Peer {
    fn heap_size(&self) -> usize {
        match self {
            Peer::Client { rng, .. } => crate::size::HeapSize::heap_size(rng),
            _ => 0,
        }
    }
}

/// A guest task's static priority.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum Priority {
    /// "rt": real-time, always ahead of normal tasks.
    Rt(RtTag),
    /// A nice value, -20..19.
    Nice(i32),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum RtTag {
    Rt,
}

#[cfg(test)]
mod tests {
    use super::*;

    fn link(jitter_ns: u64, seed: u64) -> Link {
        let rng = Stream::new(seed, "wire");
        let (free_at, last_arrival, queued) = (Nanos::ZERO, Nanos::ZERO, VecDeque::new());
        Link { free_at, ns_per_byte: 80.0, latency: 100_000, jitter_ns, rng, last_arrival, queued, queue_limit: 1000 }
    }

    /// A 3 Mbit/s client with a 64 KiB buffer starts at 32 KiB, which its own rate fills in 87.4 ms: its start-up
    /// budget is twice that. Starting within it is no under-run; later, or never once the budget is spent, is.
    #[test]
    fn startup_budget_is_twice_the_fill_time() {
        let client = |started_at: Option<Nanos>| StreamClient {
            server: TaskId(0),
            bps: 3_000_000,
            capacity: 64 * 1024,
            level: 0.0,
            updated: Nanos::ZERO,
            playing: started_at.is_some(),
            started_at,
            underruns: 0,
            empty: Timer::default(),
        };
        let budget = client(None).startup_budget();
        assert_eq!(budget, Nanos(2 * 32 * 1024 * 8 * 1_000_000_000 / 3_000_000));
        assert!(!client(Some(Nanos(budget.0))).missed_startup(Nanos::from_ms(5000)));
        assert!(client(Some(Nanos(budget.0 + 1))).missed_startup(Nanos::from_ms(5000)));
        assert!(!client(None).missed_startup(budget), "the budget is not spent yet");
        assert!(client(None).missed_startup(Nanos::from_ms(5000)));
    }

    /// The sending NIC holds at most its queue's packets: sent faster than the wire carries, the rest are dropped
    /// until the queue drains, and those it takes arrive in order, a serialisation time apart.
    #[test]
    fn a_full_transmit_queue_drops() {
        let mut l = link(0, 1);
        l.queue_limit = 3;
        let sent: Vec<Option<Nanos>> = (0..5).map(|_| l.send(Nanos::ZERO, 958)).collect();
        let ser = 1000 * 80;
        let on_time = |k: u64| Some(Nanos(k * ser + 100_000));
        assert_eq!(sent, vec![on_time(1), on_time(2), on_time(3), None, None]);
        // One packet has left the NIC by then: one more fits.
        assert_eq!(l.send(Nanos(ser), 958), on_time(4));
        assert_eq!(l.send(Nanos(ser), 958), None);
    }

    /// Without jitter every packet takes serialisation plus latency; with it, delays vary, are the same for the
    /// same seed, and never reorder packets.
    #[test]
    fn wire_jitter_varies_delays_in_order() {
        let mut plain = link(0, 1);
        assert_eq!(plain.send(Nanos::ZERO, 58), Some(Nanos(100 * 80 + 100_000)));
        let arrivals = |seed| {
            let mut l = link(50_000, seed);
            (0..200).map(|k| l.send(Nanos(k * 1_000_000), 1448).unwrap()).collect::<Vec<_>>()
        };
        let a = arrivals(7);
        assert_eq!(a, arrivals(7), "seeded");
        assert!(a.windows(2).all(|w| w[0] <= w[1]), "in order");
        let delays: Vec<u64> = a.iter().enumerate().map(|(k, at)| at.0 - k as u64 * 1_000_000).collect();
        let (lo, hi) = (delays.iter().min().unwrap(), delays.iter().max().unwrap());
        assert!(hi - lo > 100_000, "delays vary: {lo}..{hi}");
        let mean = delays.iter().sum::<u64>() as f64 / 200.0 - (1490.0 * 80.0 + 100_000.0);
        assert!((mean - 50_000.0).abs() < 12_000.0, "mean queueing {mean}");
    }

    #[test]
    fn timer_keeps_one_live_event() {
        let mut t = Timer::default();
        assert!(t.arm(Nanos(100)));
        assert!(!t.arm(Nanos(300)), "a later deadline reuses the pending event");
        assert_eq!(t.fire(Nanos(100)), Fire::Later(Nanos(300)));
        assert!(t.arm(Nanos(200)), "an earlier deadline needs its own event");
        assert_eq!(t.fire(Nanos(200)), Fire::Due);
        assert_eq!(t.fire(Nanos(300)), Fire::Stale);
        t.arm(Nanos(400));
        t.cancel();
        assert_eq!(t.fire(Nanos(400)), Fire::Stale);
        assert!(!t.is_armed());
    }
}

/// What a priority label means, whichever policy gave it: the views style a label by its class (the warning colour
/// for a boost, quiet for a vCPU over its share), so a new policy's labels look like the old ones that mean the
/// same. Closed: a policy picks the nearest; `Other` is for labels no class fits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize)]
#[serde(rename_all = "lowercase")]
#[cfg_attr(test, derive(ts_rs::TS))]
pub enum PriClass {
    /// Boosted ahead of its class for an event (Credit's BOOST, BVT's warp).
    Boost,
    /// Within its share (Credit's UNDER).
    Under,
    /// Past its share (Credit's OVER).
    Over,
    /// Paused by the policy (a cap or a CPU balloon).
    Parked,
    /// Entitled to run now by a reservation (SEDF's EDF queue, Atropos running, ARINC 653 ready).
    Reserved,
    /// Running in time left over by the reservations (SEDF's extra-time queues L0/L1).
    Extra,
    /// Runnable but waiting for its next period (SEDF WAIT, Atropos WAIT and UNBLOCKED).
    Waiting,
    /// Neither runnable nor queued (SEDF ASLEEP, Atropos and ARINC 653 BLOCKED).
    Blocked,
    /// The idle vCPU's class (Credit's IDLE).
    Idle,
    /// A label no other class fits (Credit2's CREDIT, BVT, gangs, a script's own words).
    #[default]
    Other,
}

impl PriClass {
    /// The class a free label names (a script policy's own words): Credit's four classes and the words above by
    /// their usual labels, case-insensitively; anything else is `Other`.
    pub fn of_label(label: &str) -> PriClass {
        const KNOWN: &[(&str, PriClass)] = &[
            ("BOOST", PriClass::Boost),
            ("UNDER", PriClass::Under),
            ("OVER", PriClass::Over),
            ("IDLE", PriClass::Idle),
            ("PARKED", PriClass::Parked),
            ("BLOCKED", PriClass::Blocked),
            ("WAIT", PriClass::Waiting),
        ];
        KNOWN.iter().find(|(l, _)| l.eq_ignore_ascii_case(label)).map_or(PriClass::Other, |&(_, c)| c)
    }
}
