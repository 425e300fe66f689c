//! The split-driver I/O path and the world outside the host.
//!
//! Every guest packet and block request goes through a driver domain's backend: the backend takes what is queued
//! in batches, spends CPU per item (the host profile's per-packet and per-request costs, the latter split between
//! submission and completion) and, when the batch is done, notifies each receiving vCPU once through an event
//! channel. The guest side pays its own stack per item and an upcall per notification (`costs`). Packets between
//! two domains of the host cross the backend twice (out of one guest, into the other), as through dom0's bridge. The wire is a FIFO per direction with serialisation and latency;
//! the disk serves one request at a time, in arrival order. A driver domain's own tasks own the disk: their block
//! requests go to it directly (they pay the block CPU themselves and take the disk interrupt). Peers are the
//! machines outside: closed-loop clients, an echo host, bulk TCP senders and sinks, and stream receivers with
//! playback buffers.

use super::*;
use crate::policy::{BackendWork, IoKind, WakeCause};

/// Payload of a pure TCP acknowledgement [bytes] (headers are added on the wire).
const ACK_BYTES: u32 = 0;
/// Payload of an I/O-loop network round trip [bytes].
const ECHO_BYTES: u32 = 64;
/// The port bulk streams use (iperf's).
pub(super) const BULK_PORT: u16 = 5001;
/// Queued requests at which the guest block layer unplugs at once (Linux 2.6's `unplug_thresh`).
const UNPLUG_THRESH: usize = 4;

/// The I/O path's state: guest block queues, the driver domains' backends, the wire, the disk and the peers.
#[derive(Clone)]
pub(super) struct IoState {
    /// Per vCPU: block requests held by the guest's plugged queue, and whether its unplug timer is armed.
    pub(super) plugged: Vec<(Vec<DriverItem>, bool)>,
    pub(super) peers: Vec<Peer>,
    /// The backend task of each domain's driver domain (None for domains with no driver).
    pub(super) driver_task_of: Vec<Option<TaskId>>,
    pub(super) link_in: Link,
    pub(super) link_out: Link,
    pub(super) disk: Disk,
    /// Packets put on their way (by a guest or a peer) and packets that reached their final endpoint, over the
    /// whole run: the difference is what is still in flight (an invariant the tests check).
    pub(super) packets_sent: u64,
    pub(super) packets_consumed: u64,
    /// Packets dropped at a full NIC receive ring over the whole run (neither delivered nor in flight).
    pub(super) packets_dropped: u64,
    /// Reused by `driver_batch_done` for the vCPUs a batch notifies.
    pub(super) notified: Vec<VcpuId>,
}

impl Simulation {
    /// A domain's stream clients at the end of the run: how many missed their start-up budget (started late or
    /// never) and how many never played at all.
    pub(crate) fn stream_startup(&self, dom: DomId) -> (u64, u64) {
        let (mut missed, mut stalled) = (0, 0);
        for p in &self.io.peers {
            if let Peer::StreamClient(c) = p {
                if self.guests.tasks[c.server.0].dom == dom {
                    missed += u64::from(c.missed_startup(self.now));
                    stalled += u64::from(c.started_at.is_none());
                }
            }
        }
        (missed, stalled)
    }

    /// A guest task issues a block request. Without plugging it goes to the driver domain at once; with it, the
    /// request waits in the guest's queue until the unplug timer or the queue length releases the batch.
    pub(super) fn guest_block_submit(&mut self, v: VcpuId, item: DriverItem) {
        let delay = us_to_ns(self.guests.kernel[self.host.vcpus[v.0].dom.0].block_unplug_us);
        if delay == 0 {
            self.block_kick(v, item);
            return;
        }
        if self.io.plugged.len() <= v.0 {
            self.io.plugged.resize_with(v.0 + 1, Default::default);
        }
        let plug = &mut self.io.plugged[v.0];
        plug.0.push(item);
        if plug.0.len() >= UNPLUG_THRESH {
            self.unplug(v);
        } else if !plug.1 {
            plug.1 = true;
            self.push(self.now + Nanos(delay), Ev::Unplug(v));
        }
    }

    /// The guest unplugs its block queue (on `v`, in whatever task is current): every held request goes out.
    pub(super) fn unplug(&mut self, v: VcpuId) {
        let Some(plug) = self.io.plugged.get_mut(v.0) else { return };
        plug.1 = false;
        for item in std::mem::take(&mut plug.0) {
            self.block_kick(v, item);
        }
    }

    /// The frontend hands a block request to the backend. A driver domain owns the disk: its own requests go to
    /// the device with no backend hop and no kick.
    fn block_kick(&mut self, v: VcpuId, item: DriverItem) {
        let dom = self.host.vcpus[v.0].dom;
        if self.host.dom_info[dom.0].is_driver {
            if let DriverItem::BlkSubmit { task, bytes, issued_at } = item {
                self.disk_submit(task, bytes, issued_at);
            }
            return;
        }
        // blkfront queues every request of the I/O, then notifies once (`flush_requests`).
        let bytes = if let DriverItem::BlkSubmit { bytes, .. } = item { bytes } else { 0 };
        let cost = self.frontend_cost(dom, self.costs.blk_frontend_req_ns * self.costs.blk_requests(bytes));
        self.kernel_work(v, cost);
        self.driver_enqueue(dom, item, Some(v));
    }
    /// Queues an I/O item at the driver domain serving `dom` and notifies its backend's vCPU.
    pub(super) fn driver_enqueue(&mut self, dom: DomId, item: DriverItem, from: Option<VcpuId>) {
        let Some(bt) = self.io.driver_task_of[dom.0] else {
            // Validation requires a driver domain for every I/O workload; count rather than lose silently.
            self.measure.dom_metrics[dom.0].dropped += 1;
            return;
        };
        let listening = self.backend_listening(bt);
        if let Work::Driver { queue, .. } = &mut self.guests.tasks[bt.0].work {
            queue.push_back(item);
        }
        let (driver, kind) = (self.guests.tasks[bt.0].dom, Self::io_kind(&item));
        self.with_ctx(|pol, ctx| pol.io_request(dom, driver, kind, ctx));
        if !listening {
            // In the middle of a pass the backend will find the item when it looks at the ring again; the ring's
            // event index asks for no notification until then (and the NIC's interrupt stays off while it polls).
            return;
        }
        let dv = self.guests.tasks[bt.0].vcpu;
        let work = match item {
            DriverItem::Rx(_) => BackendWork::NetRx,
            DriverItem::Tx(_) => BackendWork::NetTx,
            DriverItem::BlkSubmit { .. } => BackendWork::BlockRequest,
            DriverItem::BlkDone { .. } => BackendWork::DiskInterrupt,
        };
        self.post_event(dv, GuestEvent::DriverKick(bt), from, WakeCause::Backend(work));
    }

    /// CPU the backend spends on one item [ns]: a block I/O costs `block_ns` per split-driver request it takes.
    pub(super) fn item_cost(costs: &HostCosts, packet_ns: u64, block_ns: u64, item: &DriverItem) -> u64 {
        match item {
            DriverItem::Rx(_) | DriverItem::Tx(_) => packet_ns,
            DriverItem::BlkSubmit { bytes, .. } | DriverItem::BlkDone { bytes, .. } => {
                block_ns / 2 * costs.blk_requests(*bytes)
            }
        }
    }

    /// Whether the item came in through a device interrupt (the NIC or the disk) rather than a guest's ring.
    pub(super) fn from_device(item: &DriverItem) -> bool {
        match item {
            DriverItem::Rx(p) => matches!(p.src, Endpoint::Peer(_)),
            DriverItem::BlkDone { .. } => true,
            DriverItem::Tx(_) | DriverItem::BlkSubmit { .. } => false,
        }
    }

    /// The backend finished a batch: every item is handed on, and each guest vCPU that has something to hear gets
    /// one notification for all of it (linux-2.6.18-xen netback's `notify_list`). Returns how many event-channel
    /// sends that took.
    pub(super) fn driver_batch_done(&mut self, backend: TaskId, items: &mut Vec<DriverItem>) -> u64 {
        let mut notified = std::mem::take(&mut self.io.notified);
        notified.clear();
        for item in items.drain(..) {
            if let Some(v) = self.driver_item_done(backend, item) {
                if !notified.contains(&v) {
                    notified.push(v);
                }
            }
        }
        let sends = notified.len() as u64;
        self.io.notified = notified;
        sends
    }

    /// Guest CPU for a frontend request: the stack's per-item work, plus an event-channel send when the backend
    /// asks for one.
    fn frontend_cost(&self, dom: DomId, per_item_ns: u64) -> u64 {
        let listening = self.io.driver_task_of[dom.0].is_some_and(|bt| self.backend_listening(bt));
        per_item_ns + if listening { self.costs.evtchn_send_ns } else { 0 }
    }

    /// Whether the backend asks to be notified of new items: when idle, or once it has finished a pass (netback
    /// re-arms the ring's event index with `RING_FINAL_CHECK_FOR_REQUESTS` when it finds the ring empty), but not
    /// while a pass is under way.
    fn backend_listening(&self, bt: TaskId) -> bool {
        let t = &self.guests.tasks[bt.0];
        match &t.work {
            Work::Driver { batch, tail_ns, .. } => t.state == TState::Blocked || tail_ns.is_some() || batch.is_empty(),
            _ => true,
        }
    }

    /// A guest task sends a packet: through its own stack and netfront onto its driver domain's transmit path.
    pub(super) fn guest_send(&mut self, t: TaskId, pkt: Packet) {
        self.io.packets_sent += 1;
        let (dom, v) = (self.guests.tasks[t.0].dom, self.guests.tasks[t.0].vcpu);
        let cost = self.frontend_cost(dom, self.costs.net_frontend_pkt_ns);
        self.kernel_work(v, cost);
        self.driver_enqueue(dom, DriverItem::Tx(pkt), Some(v));
    }

    /// A machine outside sends a packet to the host.
    pub(super) fn peer_send(&mut self, pkt: Packet) {
        self.io.packets_sent += 1;
        match self.io.link_in.send(self.now, pkt.bytes) {
            Some(at) => self.push(at, Ev::NicRx(pkt)),
            // Inbound has no queue bound (see `link_in`), so this does not happen; counted should it ever.
            None => self.packet_lost(None),
        }
    }

    /// A packet reaches the NIC: the NIC interrupt goes to the driver domain serving the destination. The NIC
    /// holds what the driver domain has not yet taken in its receive descriptor ring; a packet that finds the
    /// ring full is dropped (counted against the domain it was for) and TCP must recover it.
    pub(super) fn nic_rx(&mut self, pkt: Packet) {
        if let Endpoint::Task(t) = pkt.dst {
            let dom = self.guests.tasks[t.0].dom;
            if self.nic_ring_full(dom) {
                self.packet_lost(Some(dom));
                return;
            }
            self.driver_enqueue(dom, DriverItem::Rx(pkt), None);
        }
    }

    /// A packet is lost at a full NIC ring or queue: counted for the run and against `dom` (the domain it was for
    /// or came from), neither delivered nor in flight.
    fn packet_lost(&mut self, dom: Option<DomId>) {
        self.io.packets_dropped += 1;
        if let Some(d) = dom {
            self.measure.dom_metrics[d.0].dropped += 1;
        }
    }

    /// Whether the NIC's receive ring at the driver domain serving `dom` has no free descriptor: as many packets
    /// off the wire wait in the backend's queue (not yet taken by a pass) as the ring holds.
    fn nic_ring_full(&self, dom: DomId) -> bool {
        let Some(bt) = self.io.driver_task_of[dom.0] else { return false };
        let Work::Driver { queue, .. } = &self.guests.tasks[bt.0].work else { return false };
        let ring = self.costs.nic_rx_ring;
        // Only wire arrivals take descriptors; count them only when the queue could hold a full ring.
        queue.len() >= ring
            && queue.iter().filter(|i| matches!(i, DriverItem::Rx(p) if Self::from_device(&DriverItem::Rx(*p)))).count()
                >= ring
    }

    fn io_kind(item: &DriverItem) -> IoKind {
        match item {
            DriverItem::Rx(_) => IoKind::NetRx,
            DriverItem::Tx(_) => IoKind::NetTx,
            DriverItem::BlkSubmit { .. } | DriverItem::BlkDone { .. } => IoKind::Block,
        }
    }

    /// The backend finished processing one item: hand it on. Returns the guest vCPU it notified, if any.
    fn driver_item_done(&mut self, backend: TaskId, item: DriverItem) -> Option<VcpuId> {
        let dv = self.guests.tasks[backend.0].vcpu;
        let owner = match &item {
            DriverItem::Rx(p) => p.dst,
            DriverItem::Tx(p) => p.src,
            DriverItem::BlkSubmit { task, .. } | DriverItem::BlkDone { task, .. } => Endpoint::Task(*task),
        };
        if let Endpoint::Task(t) = owner {
            let (dom, driver, kind) =
                (self.guests.tasks[t.0].dom, self.guests.tasks[backend.0].dom, Self::io_kind(&item));
            self.with_ctx(|pol, ctx| pol.io_complete(dom, driver, kind, ctx));
        }
        match item {
            DriverItem::Rx(pkt) => {
                if let Endpoint::Task(t) = pkt.dst {
                    let v = self.guests.tasks[t.0].vcpu;
                    let cause = WakeCause::NetRx { port: pkt.port };
                    self.post_event(v, GuestEvent::Packet(pkt), Some(dv), cause);
                    return Some(v);
                }
                None
            }
            DriverItem::Tx(pkt) => {
                // netback answers the transmit once the packet is on its way (`make_tx_response`), and notifies the
                // sender when netfront's event index asks for it, which it does for the first response after it
                // last looked: once per pass here.
                let sender = match pkt.src {
                    Endpoint::Task(ts) => Some(self.guests.tasks[ts.0].vcpu),
                    Endpoint::Peer(_) => None,
                };
                if let Some(sv) = sender {
                    self.post_event(sv, GuestEvent::TxDone, Some(dv), WakeCause::NetTxDone);
                }
                match pkt.dst {
                    Endpoint::Peer(_) => match self.io.link_out.send(self.now, pkt.bytes) {
                        Some(at) => self.push(at, Ev::PeerRx(pkt)),
                        // The NIC's queue is full: the packet is lost, counted against the domain that sent it.
                        None => self.packet_lost(sender.map(|sv| self.host.vcpus[sv.0].dom)),
                    },
                    Endpoint::Task(t2) => {
                        // Through dom0's bridge: the packet comes back to a backend's receive path.
                        let dom = self.guests.tasks[t2.0].dom;
                        self.driver_enqueue(dom, DriverItem::Rx(pkt), Some(dv));
                    }
                }
                sender
            }
            DriverItem::BlkSubmit { task, bytes, issued_at } => {
                // The backend maps the request's grant now: block correlation looks at the tasks the guest has
                // scheduled by this time, which may be later than the request (000 3.5.1, Fig. 5a).
                let v = self.guests.tasks[task.0].vcpu;
                self.with_ctx(|pol, _| pol.block_request(v, task, issued_at));
                self.disk_submit(task, bytes, issued_at);
                None
            }
            DriverItem::BlkDone { task, bytes, issued_at } => {
                let v = self.guests.tasks[task.0].vcpu;
                self.post_event(v, GuestEvent::BlkDone { task, bytes, issued_at }, Some(dv), WakeCause::BlockDone);
                Some(v)
            }
        }
    }

    /// A request reaches the disk, which serves one at a time in arrival order (one FIFO for every domain).
    fn disk_submit(&mut self, task: TaskId, bytes: u32, issued_at: Nanos) {
        self.io.disk.submitted += 1;
        let start = self.io.disk.busy_until.max(self.now);
        let service =
            self.io.disk.rng.exponential(self.io.disk.mean_ns) + (f64::from(bytes) * self.io.disk.ns_per_byte) as u64;
        self.io.disk.busy_until = start + Nanos(service);
        let at = self.io.disk.busy_until;
        self.push(at, Ev::DiskDone { task, bytes, issued_at });
    }

    /// The disk finished a request. Its interrupt goes to the driver domain: a guest's completion is handed to the
    /// block backend, which passes it on; a driver domain's own request completes in its own kernel, on the vCPU
    /// of the task that waits for it.
    pub(super) fn disk_done(&mut self, task: TaskId, bytes: u32, issued_at: Nanos) {
        self.io.disk.completed += 1;
        let dom = self.guests.tasks[task.0].dom;
        if self.host.dom_info[dom.0].is_driver {
            let v = self.guests.tasks[task.0].vcpu;
            self.post_event(v, GuestEvent::BlkDone { task, bytes, issued_at }, None, WakeCause::DiskInterrupt);
        } else {
            self.driver_enqueue(dom, DriverItem::BlkDone { task, bytes, issued_at }, None);
        }
    }

    /// Starts the machines outside: clients think before their first request; bulk senders fill their window.
    pub(super) fn boot_peers(&mut self) {
        for p in 0..self.io.peers.len() {
            match &mut self.io.peers[p] {
                Peer::Client { think, rng, .. } => {
                    let first = rng.uniform(think.0, think.1);
                    self.push(Nanos(first), Ev::PeerTimer(PeerId(p)));
                }
                Peer::BulkSender { .. } => self.bulk_pump(PeerId(p)),
                _ => {}
            }
        }
    }

    /// A bulk sender sends while its windows have room (congestion window, the receiver's advertised window, its
    /// own send buffer), then keeps its retransmission timer's event queued.
    fn bulk_pump(&mut self, p: PeerId) {
        let now = self.now;
        loop {
            let Peer::BulkSender { task, tcp, .. } = &mut self.io.peers[p.0] else { return };
            if !tcp.can_send() {
                break;
            }
            let (task, seq) = (*task, tcp.send(now));
            self.bulk_segment(task, p, seq);
        }
        let Peer::BulkSender { tcp, rto, .. } = &mut self.io.peers[p.0] else { return };
        match tcp.timer {
            Some(at) => {
                if rto.arm(at) {
                    self.push(at, Ev::PeerTimer(p));
                }
            }
            None => rto.cancel(),
        }
    }

    /// A bulk sender puts segment `seq` on the wire (new or again).
    fn bulk_segment(&mut self, task: TaskId, p: PeerId, seq: u32) {
        let pkt = Packet {
            src: Endpoint::Peer(p),
            dst: Endpoint::Task(task),
            kind: PKind::Data,
            bytes: MSS,
            origin_at: self.now,
            port: BULK_PORT,
            segs: 1,
            rwnd: NO_RWND,
            seq,
        };
        self.peer_send(pkt);
    }

    /// Bytes buffered by a stream client now (playback drains it while playing).
    fn stream_level(c: &StreamClient, now: Nanos) -> f64 {
        if c.playing {
            let drained = c.bps as f64 / 8.0 * (now - c.updated).0 as f64 / 1e9;
            (c.level - drained).max(0.0)
        } else {
            c.level
        }
    }

    /// A packet reaches a machine outside.
    pub(super) fn peer_rx(&mut self, pkt: Packet) {
        let Endpoint::Peer(p) = pkt.dst else { return };
        self.io.packets_consumed += 1;
        let now = self.now;
        let in_window = self.in_window(now);
        match &mut self.io.peers[p.0] {
            Peer::Client { server, think, tcp, rng, port, .. } => {
                if pkt.kind != PKind::Response {
                    return;
                }
                let dom = self.guests.tasks[server.0].dom;
                if in_window {
                    self.measure.dom_metrics[dom.0].responses_ns.push((now - pkt.origin_at).0);
                    self.measure.task_metrics[server.0].responses_ns.push((now - pkt.origin_at).0);
                }
                let wait = rng.uniform(think.0, think.1);
                let (server, tcp, port) = (*server, *tcp, *port);
                self.push(now + Nanos(wait), Ev::PeerTimer(p));
                if tcp {
                    let ack = Packet {
                        src: Endpoint::Peer(p),
                        dst: Endpoint::Task(server),
                        kind: PKind::Ack,
                        bytes: ACK_BYTES,
                        origin_at: now,
                        port,
                        segs: 1,
                        rwnd: NO_RWND,
                        seq: 0,
                    };
                    self.peer_send(ack);
                }
            }
            Peer::Echo => {
                let back = Packet { src: Endpoint::Peer(p), dst: pkt.src, kind: PKind::Response, ..pkt };
                self.peer_send(back);
            }
            Peer::BulkSender { task, tcp, .. } => {
                if pkt.kind == PKind::Ack {
                    let task = *task;
                    if let Some(seq) = tcp.on_ack(pkt.seq, pkt.rwnd, now).retransmit {
                        self.bulk_segment(task, p, seq);
                    }
                    self.bulk_pump(p);
                }
            }
            Peer::BulkSink => {
                // A receiver outside acknowledges each segment cumulatively (the outbound wire keeps its order
                // and the sink drains at once, so nothing lingers).
                if pkt.kind == PKind::Data {
                    let ack = Packet {
                        src: Endpoint::Peer(p),
                        dst: pkt.src,
                        kind: PKind::Ack,
                        bytes: ACK_BYTES,
                        segs: 1,
                        rwnd: NO_RWND,
                        seq: pkt.seq + 1,
                        ..pkt
                    };
                    self.peer_send(ack);
                }
            }
            Peer::StreamClient(c) => {
                let level = Self::stream_level(c, now) + f64::from(pkt.bytes);
                c.level = level.min(c.capacity as f64);
                c.updated = now;
                if !c.playing && c.level >= c.capacity as f64 / 2.0 {
                    c.playing = true;
                    c.started_at.get_or_insert(now);
                }
                if c.playing {
                    let empty_in = (c.level * 8.0 * 1e9 / c.bps as f64) as u64;
                    let at = now + Nanos(empty_in.max(1));
                    if c.empty.arm(at) {
                        self.push(at, Ev::PeerTimer(p));
                    }
                }
            }
        }
    }

    /// A peer's own timer fires.
    pub(super) fn peer_timer(&mut self, p: PeerId) {
        let now = self.now;
        let in_window = self.in_window(now);
        match &mut self.io.peers[p.0] {
            Peer::Client { server, request_bytes, port, .. } => {
                let pkt = Packet {
                    src: Endpoint::Peer(p),
                    dst: Endpoint::Task(*server),
                    kind: PKind::Request,
                    bytes: *request_bytes,
                    origin_at: now,
                    port: *port,
                    segs: 1,
                    rwnd: NO_RWND,
                    seq: 0,
                };
                self.peer_send(pkt);
            }
            Peer::BulkSender { tcp, rto, .. } => match rto.fire(now) {
                Fire::Later(at) => self.push(at, Ev::PeerTimer(p)),
                Fire::Stale => {}
                Fire::Due => {
                    // No ACK for a whole timeout: back to one segment, resend from the oldest unacknowledged.
                    tcp.on_timeout(now);
                    self.bulk_pump(p);
                }
            },
            Peer::StreamClient(c) => match c.empty.fire(now) {
                Fire::Later(at) => self.push(at, Ev::PeerTimer(p)),
                Fire::Stale => {}
                Fire::Due if !c.playing => {}
                Fire::Due => {
                    // The buffer ran dry: an under-run; playback resumes once it is half full again.
                    c.level = 0.0;
                    c.updated = now;
                    c.playing = false;
                    let dom = self.guests.tasks[c.server.0].dom;
                    if in_window {
                        self.measure.dom_metrics[dom.0].underruns += 1;
                    }
                }
            },
            _ => {}
        }
    }

    /// A network round trip for an I/O loop, to its echoing peer.
    pub(super) fn echo_request(&mut self, t: TaskId, peer: PeerId, port: u16) {
        let pkt = Packet {
            src: Endpoint::Task(t),
            dst: Endpoint::Peer(peer),
            kind: PKind::Request,
            bytes: ECHO_BYTES,
            origin_at: self.now,
            port,
            segs: 1,
            rwnd: NO_RWND,
            seq: 0,
        };
        self.guest_send(t, pkt);
    }

    /// A pure acknowledgement from a guest task of every segment before `ack`, covering `segs` new segments and
    /// advertising `rwnd` free segments.
    pub(super) fn guest_ack(&mut self, t: TaskId, to: Endpoint, port: u16, segs: u32, rwnd: u32, ack: u32) {
        let pkt = Packet {
            src: Endpoint::Task(t),
            dst: to,
            kind: PKind::Ack,
            bytes: ACK_BYTES,
            origin_at: self.now,
            port,
            segs,
            rwnd,
            seq: ack,
        };
        self.guest_send(t, pkt);
    }
}
