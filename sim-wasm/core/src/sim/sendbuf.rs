//! A streaming server's send path as Linux keeps it. The application writes into its sockets' send buffers (one
//! socket per client, `sock_sndbuf_bytes` each) and blocks when they are full; in the same system call the kernel
//! moves what is buffered onto netfront's transmit ring while the ring has free slots (`net_tx_ring`), notifying
//! netback while it listens (`backend_listening`): a whole write lands on the ring at one instant, so dom0 wakes
//! once and its pass takes the round. A packet holds its buffer room until netback's transmit response frees its slot and
//! netfront frees the packet (`sock_wfree` from the completion), which is also when the kernel tops the ring up
//! from the buffers and wakes a writer that waits for room.

use super::*;

/// The send buffers and ring slots of one streaming server.
#[derive(Clone, Debug, Default)]
pub struct SendPath {
    /// Packets the sockets' buffers hold at most, written and not yet freed [packets].
    pub(crate) buf_cap: u32,
    /// Packets written and not yet on the ring, in order (the client each is for).
    pub(crate) buffered: VecDeque<PeerId>,
    /// Packets on the ring that netback has not answered [packets].
    pub(crate) on_ring: u32,
    /// Slots of the ring [packets].
    pub(crate) ring_cap: u32,
    /// Packets the burst under way writes [packets].
    pub(crate) writing: u32,
}

impl SendPath {
    /// The path of a server with `clients` sockets on `costs`' host.
    pub(crate) fn new(clients: usize, costs: &HostCosts) -> SendPath {
        let per_socket = (costs.sock_sndbuf_bytes / MSS).max(1);
        SendPath {
            buf_cap: per_socket.saturating_mul(u32::try_from(clients).unwrap_or(u32::MAX)),
            buffered: VecDeque::new(),
            on_ring: 0,
            ring_cap: costs.net_tx_ring.max(1),
            writing: 0,
        }
    }

    /// Room left in the buffers [packets]: what is buffered and what is on the ring both hold theirs.
    fn room(&self) -> u32 {
        self.buf_cap.saturating_sub(self.buffered.len() as u32 + self.on_ring)
    }

    /// Starts a write burst of up to `due` packets at `cpu_ns` each: as many as the buffers have room for.
    /// `None` when there is nothing to write or no room (the writer blocks).
    pub(crate) fn begin_write(&mut self, due: usize, cpu_ns: u64) -> Option<Option<u64>> {
        let n = self.room().min(u32::try_from(due).unwrap_or(u32::MAX));
        self.writing = n;
        (n > 0).then_some(Some(cpu_ns * u64::from(n)))
    }
}

impl Simulation {
    /// The server's write burst is done: the packets it wrote enter the buffers and the kernel puts what fits on
    /// the ring.
    pub(super) fn stream_written(&mut self, t: TaskId) {
        if let Work::Stream { to_send, tx, .. } = &mut self.guests.tasks[t.0].work {
            for _ in 0..std::mem::take(&mut tx.writing) {
                match to_send.pop_front() {
                    Some(c) => tx.buffered.push_back(c),
                    None => break,
                }
            }
        }
        self.stream_push(t);
    }

    /// Moves buffered packets onto the ring while it has free slots; each goes through the guest's stack and
    /// netfront (`guest_send`), which notifies netback only if it listens.
    fn stream_push(&mut self, t: TaskId) {
        let dom = self.guests.tasks[t.0].dom;
        let in_window = self.in_window(self.now);
        loop {
            let Work::Stream { tx, .. } = &mut self.guests.tasks[t.0].work else { return };
            if tx.on_ring >= tx.ring_cap {
                return;
            }
            let Some(c) = tx.buffered.pop_front() else { return };
            tx.on_ring += 1;
            let pkt = Packet {
                src: Endpoint::Task(t),
                dst: Endpoint::Peer(c),
                kind: PKind::Data,
                bytes: MSS,
                origin_at: self.now,
                port: 0,
                segs: 1,
                rwnd: NO_RWND,
                seq: 0,
            };
            if in_window {
                self.measure.dom_metrics[dom.0].bytes_out += u64::from(MSS);
            }
            self.guest_send(t, pkt);
        }
    }

    /// netback answered one of the vCPU's transmits: the streaming server on it (if any) gets the slot and the
    /// buffer room back and the kernel tops the ring up. Returns that server, to be woken if it waits for room.
    pub(super) fn stream_tx_done(&mut self, v: VcpuId) -> Option<TaskId> {
        let t = self.host.vcpus[v.0]
            .tasks
            .iter()
            .copied()
            .find(|t| matches!(self.guests.tasks[t.0].work, Work::Stream { .. }))?;
        if let Work::Stream { tx, .. } = &mut self.guests.tasks[t.0].work {
            tx.on_ring = tx.on_ring.saturating_sub(1);
        }
        self.stream_push(t);
        Some(t)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_write_takes_what_the_buffers_have_room_for() {
        let costs = crate::costs::PROFILE;
        let mut p = SendPath::new(2, &costs);
        // 16 KiB per socket is 11 packets of 1448 bytes; two sockets hold 22.
        assert_eq!(p.buf_cap, 22);
        assert_eq!(p.begin_write(5, 4_000), Some(Some(20_000)));
        p.writing = 0;
        p.on_ring = 20;
        assert_eq!(p.begin_write(5, 4_000), Some(Some(8_000)));
        p.on_ring = 22;
        assert_eq!(p.begin_write(5, 4_000), None);
        assert_eq!(p.begin_write(0, 4_000), None);
    }
}
