//! The engine's side of the workload kinds (`workload/`, where each kind's spec, checks, build and cost
//! live): what each guest task does as the run goes. A task alternates CPU bursts (which the guest and hypervisor schedulers share
//! out) with actions at the end of a burst: send a response, issue I/O, arrive at a barrier. Three hooks drive
//! it: `begin_burst` (what CPU it needs next, or nothing: block), `task_event` (the guest kernel hands it a
//! packet, a completion, a timer or an IPI) and `workload_burst_done`.

use super::io::BULK_PORT;
use super::*;

/// CPU of one balloon hypercall round trip [ns] (the slides call its overhead negligible).
const BALLOON_CALL_NS: u64 = 1_000;

impl Simulation {
    /// Starts every workload at boot.
    pub(super) fn boot_workloads(&mut self) {
        self.boot_locks();
        for t in 0..self.guests.tasks.len() {
            let t = TaskId(t);
            let costs = self.costs;
            match &mut self.guests.tasks[t.0].work {
                Work::Cpu
                | Work::Barrier { .. }
                | Work::IoLoop { .. }
                | Work::BulkTx { .. }
                | Work::Balloon { .. }
                | Work::Pipe { .. }
                | Work::Lock { .. }
                | Work::Tlb { .. } => {
                    self.task_wake(t);
                }
                Work::Stream { interval_ns, clients, tx, .. } => {
                    *tx = super::sendbuf::SendPath::new(clients.len(), &costs);
                    let at = Nanos(*interval_ns);
                    self.push(at, Ev::TaskTimer(t));
                }
                _ => {}
            }
        }
        self.boot_peers();
    }

    /// The CPU the task needs next: `Some(None)` forever (a busy loop or a spin), `Some(Some(ns))` a burst,
    /// `None` nothing (it blocks).
    pub(super) fn begin_burst(&mut self, t: TaskId) -> Option<Option<u64>> {
        let waking = self.guests.tasks[t.0].state == TState::Blocked;
        if matches!(self.guests.tasks[t.0].work, Work::Lock { .. } | Work::Tlb { .. }) {
            return self.lock_begin_burst(t);
        }
        match &mut self.guests.tasks[t.0].work {
            Work::Cpu => Some(None),
            Work::Server { queue, cpu_ns, disk, .. } => match disk {
                _ if queue.is_empty() => None,
                Some(d) if d.waiting => None,
                // The request's CPU in equal parts around its block requests (the rounding goes to the last).
                Some(d) => {
                    let (n, k) = (u64::from(d.ios()) + 1, u64::from(d.done));
                    Some(Some(*cpu_ns * (k + 1) / n - *cpu_ns * k / n))
                }
                None => Some(Some(*cpu_ns)),
            },
            Work::Tier { queue, cpu_ns, waiting, answered, .. } => {
                if *answered {
                    Some(Some(0))
                } else if waiting.is_some() || queue.is_empty() {
                    None
                } else {
                    Some(Some(*cpu_ns))
                }
            }
            Work::IoLoop { computing, cpu_ns, own_block_ns, .. } => computing.then_some(Some(*cpu_ns + *own_block_ns)),
            Work::BulkRx { queue, cpu_ns, .. } => (!queue.is_empty()).then_some(Some(*cpu_ns)),
            Work::BulkTx { sent, acked, window, cpu_ns, .. } => (*sent - *acked < *window).then_some(Some(*cpu_ns)),
            Work::Stream { to_send, cpu_ns, tx, .. } => tx.begin_write(to_send.len(), *cpu_ns),
            Work::Pipe { inbox, cpu_ns, .. } => (*inbox > 0).then_some(Some(*cpu_ns)),
            Work::Barrier { phase, compute_ns, .. } => match phase {
                BarrierPhase::Compute => Some(Some(*compute_ns)),
                BarrierPhase::Spin => Some(None),
                BarrierPhase::Wait | BarrierPhase::Done => None,
            },
            Work::Balloon { sleeping } => (!*sleeping).then_some(Some(BALLOON_CALL_NS)),
            Work::Lock { .. } | Work::Tlb { .. } => None,
            Work::Driver { queue, batch, tail_ns, packet_ns, block_ns } => {
                // Back from the last batch's notifications: this return path is what a woken guest preempts.
                if let Some(ns) = *tail_ns {
                    return Some(Some(ns));
                }
                if queue.is_empty() {
                    return None;
                }
                // Woken with work: the pass takes what is queued when the backend gets to run, not when it was
                // woken (more may arrive while it waits for the CPU).
                if waking {
                    return Some(Some(0));
                }
                // One pass takes what is queued, up to a batch; a device interrupt starts a pass that carries
                // device arrivals (NAPI-style: one interrupt per pass, not per packet).
                let take = queue.len().min(self.costs.backend_batch);
                batch.extend(queue.drain(..take));
                let (pk, bk) = (*packet_ns, *block_ns);
                let work: u64 = batch.iter().map(|it| Self::item_cost(&self.costs, pk, bk, it)).sum();
                let irq = batch.iter().any(Self::from_device);
                Some(Some(work + if irq { self.costs.nic_irq_ns } else { 0 }))
            }
        }
    }

    /// The guest kernel hands an event to the task it concerns (queues data, records completions).
    pub(super) fn task_event(&mut self, t: TaskId, ev: GuestEvent) {
        let now = self.now;
        let dom = self.guests.tasks[t.0].dom.0;
        let in_window = self.in_window(now);
        if let (GuestEvent::Ipi(_), Work::Lock { .. }) = (&ev, &self.guests.tasks[t.0].work) {
            return self.lock_kicked(t);
        }
        match (ev, &mut self.guests.tasks[t.0].work) {
            // A TCP acknowledgement is consumed by the kernel; only requests reach the server.
            (GuestEvent::Packet(pkt), Work::Server { queue, .. }) if pkt.kind == PKind::Request => queue.push_back(pkt),
            (GuestEvent::Packet(pkt), Work::Tier { queue, waiting, answered, .. }) => match pkt.kind {
                PKind::Request => queue.push_back(pkt),
                PKind::Response if waiting.is_some() => *answered = true,
                _ => {}
            },
            (GuestEvent::Packet(pkt), Work::IoLoop { computing, issued_at, .. }) if pkt.kind == PKind::Response => {
                *computing = true;
                let lat = (now - *issued_at).0;
                if in_window {
                    self.measure.task_metrics[t.0].io_done += 1;
                    let m = &mut self.measure.dom_metrics[dom];
                    m.io_done += 1;
                    m.io_latency_ns.push(lat);
                }
            }
            (GuestEvent::BlkDone { bytes, issued_at, .. }, Work::IoLoop { computing, write, .. }) => {
                *computing = true;
                if in_window {
                    self.measure.task_metrics[t.0].io_done += 1;
                    let m = &mut self.measure.dom_metrics[dom];
                    m.io_done += 1;
                    m.io_latency_ns.push((now - issued_at).0);
                    if *write {
                        m.bytes_out += u64::from(bytes);
                    } else {
                        m.bytes_in += u64::from(bytes);
                    }
                }
            }
            (GuestEvent::BlkDone { issued_at, .. }, Work::Server { disk: Some(d), .. }) => {
                d.waiting = false;
                d.done += 1;
                if in_window {
                    self.measure.dom_metrics[dom].io_latency_ns.push((now - issued_at).0);
                }
            }
            (GuestEvent::Packet(pkt), Work::BulkRx { queue, unacked, window, advertised, tcp, delack, .. })
                if pkt.kind == PKind::Data =>
            {
                // The kernel's TCP receive path acknowledges in softirq as segments arrive, one ACK per two in
                // order (delayed ACK), at once for a segment out of order, a duplicate or one that fills a gap
                // (RFC 5681 sec. 4.2); the task copies the data out later. Until it does, the data (and what is
                // held beyond a gap) fills the socket buffer, so each ACK advertises less room and a reader that
                // does not run stops the sender (with flow control; without, ACKs advertise no window).
                let now_ack = match tcp.on_segment(pkt.seq) {
                    Arrival::InOrder { delivered, filled } => {
                        *unacked += delivered;
                        *advertised = advertised.saturating_sub(delivered);
                        queue.extend(std::iter::repeat_n(pkt, delivered as usize));
                        filled || *unacked >= 2
                    }
                    Arrival::OutOfOrder | Arrival::Duplicate => true,
                };
                if now_ack {
                    delack.cancel();
                    let n = std::mem::take(unacked).max(1);
                    let free = window.map_or(NO_RWND, |w| w.saturating_sub(queue.len() as u32 + tcp.held()));
                    *advertised = free;
                    let ack = tcp.rcv_nxt;
                    self.guest_ack(t, pkt.src, pkt.port, n, free, ack);
                } else if !delack.is_armed() {
                    // A lone segment is acknowledged by the delayed-ACK timer if no second one comes first.
                    let at = now + Nanos(crate::tcp::DELACK_NS);
                    if delack.arm(at) {
                        self.push(at, Ev::TaskTimer(t));
                    }
                }
            }
            (GuestEvent::Timer(_), Work::BulkRx { queue, unacked, window, advertised, tcp, .. }) if *unacked > 0 => {
                // The delayed-ACK timer ran out (the guest handles it when its vCPU runs).
                let n = std::mem::take(unacked);
                let free = window.map_or(NO_RWND, |w| w.saturating_sub(queue.len() as u32 + tcp.held()));
                *advertised = free;
                let (ack, src) = (tcp.rcv_nxt, queue.back().map(|p| (p.src, p.port)));
                if let Some((to, port)) = src {
                    self.guest_ack(t, to, port, n, free, ack);
                }
            }
            (GuestEvent::Packet(pkt), Work::BulkTx { acked, sent, .. }) if pkt.kind == PKind::Ack => {
                // Cumulative: an ACK covers every segment before `seq`, so one lost on the way is covered by the next.
                let ack = pkt.seq.min(*sent);
                let newly = ack.saturating_sub(*acked);
                *acked = (*acked).max(ack);
                if in_window {
                    self.measure.dom_metrics[dom].bytes_out += u64::from(MSS) * u64::from(newly);
                }
            }
            (GuestEvent::Virq(_), Work::Balloon { sleeping }) => *sleeping = false,
            (GuestEvent::Timer(_), Work::Stream { interval_ns, clients, bps, owed, last_send, to_send, .. }) => {
                // Send what is due to every client since the last round, interleaved across clients.
                let dt = u128::from((now - *last_send).0);
                let per_packet = u128::from(MSS) * 8 * 1_000_000_000;
                self.scanned.set(self.scanned.get() + owed.len() as u64);
                let mut due = Vec::with_capacity(clients.len());
                for o in owed.iter_mut() {
                    *o += u128::from(*bps) * dt;
                    let n = *o / per_packet;
                    *o -= n * per_packet;
                    due.push(n as u64);
                }
                let most = due.iter().copied().max().unwrap_or(0);
                for round in 0..most {
                    for (i, c) in clients.iter().enumerate() {
                        if due[i] > round {
                            to_send.push_back(*c);
                        }
                    }
                }
                *last_send = now;
                let next = now + Nanos(*interval_ns);
                self.push(next, Ev::TaskTimer(t));
            }
            _ => {}
        }
    }

    /// The task finished a burst: do what its workload does at that point.
    pub(super) fn workload_burst_done(&mut self, t: TaskId) {
        let (dom, v) = (self.guests.tasks[t.0].dom, self.guests.tasks[t.0].vcpu);
        let in_window = self.in_window(self.now);
        let now = self.now;
        match &mut self.guests.tasks[t.0].work {
            Work::Cpu => {}
            Work::Server { queue, response_bytes, port, disk, .. } => {
                if let Some(d) = disk {
                    if d.done < d.ios() {
                        // The next block request of this client request; the server waits for it.
                        d.waiting = true;
                        let bytes = d.bytes;
                        self.guest_block_submit(v, DriverItem::BlkSubmit { task: t, bytes, issued_at: now });
                        return;
                    }
                    d.done = 0;
                }
                let req = queue.pop_front().expect("a server burst serves a queued request");
                let resp = Packet {
                    src: Endpoint::Task(t),
                    dst: req.src,
                    kind: PKind::Response,
                    bytes: *response_bytes,
                    origin_at: req.origin_at,
                    port: *port,
                    segs: 1,
                    rwnd: NO_RWND,
                    seq: 0,
                };
                if in_window {
                    self.measure.dom_metrics[dom.0].requests_served += 1;
                }
                self.guest_send(t, resp);
            }
            Work::Tier { queue, waiting, answered, next, port, request_bytes, response_bytes, .. } => {
                let (port, rb) = (*port, *response_bytes);
                if *answered {
                    *answered = false;
                    let up = waiting.take().expect("an answered tier has a waiting request");
                    let resp = Packet { src: Endpoint::Task(t), dst: up.src, kind: PKind::Response, bytes: rb, ..up };
                    self.guest_send(t, resp);
                    return;
                }
                let req = queue.pop_front().expect("a tier burst serves a queued request");
                let call = next.map(|n| Packet {
                    src: Endpoint::Task(t),
                    dst: Endpoint::Task(n),
                    kind: PKind::Request,
                    bytes: *request_bytes,
                    origin_at: req.origin_at,
                    port,
                    segs: 1,
                    rwnd: NO_RWND,
                    seq: 0,
                });
                if call.is_some() {
                    *waiting = Some(req);
                }
                if in_window {
                    self.measure.dom_metrics[dom.0].requests_served += 1;
                }
                match call {
                    Some(c) => self.guest_send(t, c),
                    None => {
                        let resp =
                            Packet { src: Endpoint::Task(t), dst: req.src, kind: PKind::Response, bytes: rb, ..req };
                        self.guest_send(t, resp);
                    }
                }
            }
            Work::IoLoop { computing, disk, bytes, issued_at, peer, port, .. } => {
                *computing = false;
                *issued_at = now;
                let (disk, bytes, peer, port) = (*disk, *bytes, *peer, *port);
                if disk {
                    self.guest_block_submit(v, DriverItem::BlkSubmit { task: t, bytes, issued_at: now });
                } else if let Some(p) = peer {
                    self.echo_request(t, p, port);
                }
            }
            Work::BulkRx { queue, unacked, window, advertised, tcp, delack, .. } => {
                let pkt = queue.pop_front().expect("a bulk receiver burst consumes a packet");
                if in_window {
                    self.measure.dom_metrics[dom.0].bytes_in += u64::from(pkt.bytes);
                }
                // Once the reader has drained the socket, a lone unacknowledged segment is acknowledged now
                // rather than after the delayed-ACK timer. A read that at least doubles a window the sender sees
                // at half or less sends a window update (Linux's tcp_cleanup_rbuf), or the sender would stall.
                let free = window.map_or(NO_RWND, |w| w.saturating_sub(queue.len() as u32 + tcp.held()));
                let lone = queue.is_empty() && *unacked > 0;
                let update =
                    window.is_some_and(|w| 2 * *advertised <= w && free >= 2 * *advertised && free > *advertised);
                if lone || update {
                    delack.cancel();
                    let n = std::mem::take(unacked);
                    *advertised = free;
                    let ack = tcp.rcv_nxt;
                    self.guest_ack(t, pkt.src, pkt.port, n, free, ack);
                }
            }
            Work::BulkTx { peer, sent, .. } => {
                let seq = *sent;
                *sent += 1;
                let pkt = Packet {
                    src: Endpoint::Task(t),
                    dst: Endpoint::Peer(*peer),
                    kind: PKind::Data,
                    bytes: MSS,
                    origin_at: now,
                    port: BULK_PORT,
                    segs: 1,
                    rwnd: NO_RWND,
                    seq,
                };
                self.guest_send(t, pkt);
            }
            Work::Stream { .. } => self.stream_written(t),
            Work::Barrier { .. } => self.barrier_arrive(t),
            Work::Lock { .. } | Work::Tlb { .. } => self.lock_burst_done(t),
            Work::Pipe { inbox, next, .. } => {
                *inbox -= 1;
                let next = *next;
                if in_window {
                    self.measure.dom_metrics[dom.0].messages += 1;
                }
                self.pipe_send(t, next);
            }
            Work::Driver { batch, tail_ns, .. } => {
                if tail_ns.take().is_some() || batch.is_empty() {
                    // The return path after a batch, or the start of a pass: nothing to hand on.
                    return;
                }
                let mut items = std::mem::take(batch);
                let sends = self.driver_batch_done(t, &mut items);
                // The emptied buffer goes back, so the next pass does not allocate.
                if let Work::Driver { batch, .. } = &mut self.guests.tasks[t.0].work {
                    *batch = items;
                }
                let tail = (sends > 0).then_some(sends * self.costs.evtchn_send_ns);
                if let Work::Driver { tail_ns, .. } = &mut self.guests.tasks[t.0].work {
                    *tail_ns = tail;
                }
            }
            Work::Balloon { .. } => self.balloon_call(t),
        }
    }

    /// The balloon's hypercall: the policy pauses the vCPU (the balloon stays current and calls again when the
    /// vCPU next runs it) or tells it to sleep until its next virtual IRQ.
    fn balloon_call(&mut self, t: TaskId) {
        let v = self.guests.tasks[t.0].vcpu;
        let paused = self.with_ctx(|pol, ctx| pol.balloon(v, ctx));
        if paused {
            // The invariant the balloon keeps: it never holds the vCPU while an event waits for the guest.
            let since = self.host.vcpus[v.0].balloon_since;
            self.walked(self.host.vcpus[v.0].runnable.len());
            let fresh = self.host.vcpus[v.0].runnable.iter().any(|&x| x != t && self.balloon_yields_to(x, since));
            if !self.host.vcpus[v.0].pending.is_empty() || fresh {
                self.measure.balloon_violations += 1;
            }
            self.host.vcpus[v.0].balloon_since = self.now;
        } else if let Work::Balloon { sleeping } = &mut self.guests.tasks[t.0].work {
            *sleeping = true;
        }
    }

    /// A pipe task writes a message for `to`. A reader blocked on the same vCPU is woken by the guest kernel alone
    /// (it runs when the guest next picks a task, right after this burst); a reader on another vCPU of the domain
    /// gets a reschedule IPI, an event channel notification as any cross-vCPU wakeup in a paravirtualized guest.
    fn pipe_send(&mut self, from: TaskId, to: TaskId) {
        if let Work::Pipe { inbox, .. } = &mut self.guests.tasks[to.0].work {
            *inbox += 1;
        }
        if self.guests.tasks[to.0].state != TState::Blocked {
            return;
        }
        let (fv, tv) = (self.guests.tasks[from.0].vcpu, self.guests.tasks[to.0].vcpu);
        if fv == tv {
            self.task_wake(to);
        } else {
            self.post_event(tv, GuestEvent::Ipi(to), Some(fv), WakeCause::PipeIpi);
        }
    }

    fn set_barrier_phase(&mut self, t: TaskId, p: BarrierPhase) {
        let Work::Barrier { phase, .. } = &mut self.guests.tasks[t.0].work else { return };
        let was_spinning = *phase == BarrierPhase::Spin;
        *phase = p;
        // The trace marks a spin's start and end, so the page can tell spinning from useful running.
        let state = match (was_spinning, p == BarrierPhase::Spin) {
            (false, true) => "spinning",
            (true, false) => "runnable",
            _ => return,
        };
        if self.rec.on {
            self.rec.trace.push_task_state(TaskRec { t_ns: self.now.0, task: t.0 as u32, state });
        }
    }

    /// A barrier thread finished its compute for this phase. The last to arrive releases the others: spinners
    /// notice as soon as they run; blocked threads get an IPI.
    fn barrier_arrive(&mut self, t: TaskId) {
        let Work::Barrier { group, spin, .. } = self.guests.tasks[t.0].work else { return };
        let g = &mut self.guests.groups[group];
        g.arrived += 1;
        if (g.arrived as usize) < g.members.len() {
            self.set_barrier_phase(t, if spin { BarrierPhase::Spin } else { BarrierPhase::Wait });
            return;
        }
        g.arrived = 0;
        g.phases_done += 1;
        let finished = g.phases != 0 && g.phases_done >= g.phases;
        if finished {
            g.done_at = Some(self.now);
        }
        let next = if finished { BarrierPhase::Done } else { BarrierPhase::Compute };
        let from = self.guests.tasks[t.0].vcpu;
        self.walked(self.guests.groups[group].members.len());
        for m in self.guests.groups[group].members.clone() {
            let old = match self.guests.tasks[m.0].work {
                Work::Barrier { phase, .. } => phase,
                _ => continue,
            };
            let mv = self.guests.tasks[m.0].vcpu;
            let running_now =
                m != t && self.host.vcpus[mv.0].current == Some(m) && self.host.vcpus[mv.0].exec_start.is_some();
            if running_now {
                // Attribute the spinning so far before the phase changes.
                self.charge(mv);
            }
            self.set_barrier_phase(m, next);
            if m == t {
                continue;
            }
            match old {
                BarrierPhase::Spin => {
                    match self.begin_burst(m) {
                        Some(b) => self.guests.tasks[m.0].burst_left = b,
                        None => self.task_block(m),
                    }
                    if running_now {
                        self.guest_run(mv);
                    }
                }
                BarrierPhase::Wait if !finished => {
                    self.post_event(mv, GuestEvent::Ipi(m), Some(from), WakeCause::BarrierIpi)
                }
                _ => {}
            }
        }
    }
}
