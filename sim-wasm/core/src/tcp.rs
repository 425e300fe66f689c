//! TCP's loss recovery for the model's bulk streams, in segments: a sender with congestion control (slow start,
//! congestion avoidance, fast retransmit and recovery on three duplicate ACKs, RFC 5681, with NewReno's partial
//! ACKs, RFC 6582) and a retransmission timer (RFC 6298 with Linux's bounds and exponential backoff), and a
//! receiver that acknowledges cumulatively and holds out-of-order segments. Sequence numbers count segments
//! (every segment is one MSS). Pure state machines: the engine sends what they ask for and arms their timer.

use crate::time::Nanos;
use std::collections::BTreeSet;

/// Lower bound of the retransmission timeout [ns]: Linux `TCP_RTO_MIN` = HZ/5 (include/net/tcp.h), 200 ms.
pub const RTO_MIN_NS: u64 = 200_000_000;
/// Upper bound of the retransmission timeout [ns]: Linux `TCP_RTO_MAX` = 120*HZ (include/net/tcp.h), 120 s.
pub const RTO_MAX_NS: u64 = 120_000_000_000;
/// Retransmission timeout before the first RTT sample [ns]: Linux 2.6's `TCP_TIMEOUT_INIT` = 3*HZ, "RFC 1122
/// initial RTO value" (include/net/tcp.h; lowered to 1 s with RFC 6298 only in Linux 3.1).
pub const RTO_INIT_NS: u64 = 3_000_000_000;
/// Duplicate ACKs that trigger a fast retransmit [ACKs]: RFC 5681 sec. 3.2 (Linux `TCP_FASTRETRANS_THRESH`).
pub const DUPACK_THRESHOLD: u32 = 3;
/// Initial congestion window [segments]: RFC 3390, min(4*MSS, max(2*MSS, 4380 bytes)) = 3 for a 1448-byte
/// MSS, as Linux 2.6's `tcp_init_cwnd` computes it.
pub const INITIAL_CWND: u32 = 3;
/// How long a receiver holds a lone in-order segment before acknowledging it [ns]: Linux's delayed-ACK timer
/// starts at `TCP_ATO_MIN` = HZ/25 (include/net/tcp.h), 40 ms.
pub const DELACK_NS: u64 = 40_000_000;
/// Clock granularity G of RFC 6298 sec. 2 [ns]: one jiffy at Linux 2.6's HZ = 1000.
const CLOCK_G_NS: u64 = 1_000_000;

/// What an acknowledgement asks the sender to do.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct AckOutcome {
    /// Segments this ACK newly acknowledged.
    pub newly_acked: u32,
    /// A segment to send again now (fast retransmit, or NewReno's next hole on a partial ACK).
    pub retransmit: Option<u32>,
}

/// The sending side of one TCP connection.
#[derive(Debug, Clone)]
pub struct TcpSender {
    /// Oldest unacknowledged segment.
    pub snd_una: u32,
    /// Next segment to send (moved back to `snd_una` by a timeout: Linux retransmits the whole flight).
    pub snd_nxt: u32,
    /// Highest segment sent so far, plus one.
    snd_max: u32,
    /// Congestion window [segments].
    pub cwnd: u32,
    /// ACKs counted towards the next congestion-avoidance increase (Linux `snd_cwnd_cnt`).
    cwnd_cnt: u32,
    /// Slow-start threshold [segments].
    pub ssthresh: u32,
    /// Duplicate ACKs in a row.
    dupacks: u32,
    /// In fast recovery until this segment is acknowledged (RFC 6582 `recover`).
    recover: Option<u32>,
    /// A partial ACK came in this recovery: later ones leave the timer alone, so a window with many holes falls
    /// back to the timeout instead of repairing one hole per round trip (RFC 6582's "Impatient" variant).
    partial_seen: bool,
    /// Highest segment sent when the last timeout struck, plus one: duplicate ACKs below it are the flight's
    /// own retransmissions arriving twice, not a new loss (RFC 6582 sec. 4.1).
    rto_recover: u32,
    /// The sender's own limit on data in flight: its socket send buffer [segments].
    limit: u32,
    /// The receiver's advertised window [segments].
    rwnd: u32,
    /// Smoothed RTT and its variation [ns], once sampled.
    srtt_ns: Option<u64>,
    rttvar_ns: u64,
    /// Retransmission timeout before backoff [ns].
    rto_ns: u64,
    /// Timeouts since the last RTT sample: the timeout doubles with each (RFC 6298 sec. 5.5).
    backoff: u32,
    /// The segment being timed and when it was sent (one at a time; never a retransmitted one, Karn's rule).
    timing: Option<(u32, Nanos)>,
    /// When the retransmission timer expires, while it runs.
    pub timer: Option<Nanos>,
    /// Timeouts and fast retransmits over the connection's life.
    pub timeouts: u64,
    pub fast_retransmits: u64,
}

impl TcpSender {
    /// A connection whose sender may have at most `limit` segments in flight (its send buffer).
    pub fn new(limit: u32) -> TcpSender {
        TcpSender {
            snd_una: 0,
            snd_nxt: 0,
            snd_max: 0,
            cwnd: INITIAL_CWND.min(limit.max(1)),
            cwnd_cnt: 0,
            ssthresh: u32::MAX,
            dupacks: 0,
            recover: None,
            partial_seen: false,
            rto_recover: 0,
            limit: limit.max(1),
            rwnd: u32::MAX,
            srtt_ns: None,
            rttvar_ns: 0,
            rto_ns: RTO_INIT_NS,
            backoff: 0,
            timing: None,
            timer: None,
            timeouts: 0,
            fast_retransmits: 0,
        }
    }

    /// Segments sent and not yet acknowledged.
    pub fn flight(&self) -> u32 {
        self.snd_nxt.saturating_sub(self.snd_una)
    }

    /// Whether the windows (congestion, receiver's, own buffer) leave room for one more segment.
    pub fn can_send(&self) -> bool {
        self.flight() < self.cwnd.min(self.rwnd).min(self.limit)
    }

    /// The timeout in force, backoff included [ns].
    pub fn rto(&self) -> u64 {
        self.rto_ns.saturating_mul(1 << self.backoff.min(20)).min(RTO_MAX_NS)
    }

    /// Sends the next segment at `now`; returns its sequence number. Starts the timer if it is not running.
    pub fn send(&mut self, now: Nanos) -> u32 {
        let seq = self.snd_nxt;
        self.snd_nxt += 1;
        if seq == self.snd_max {
            self.snd_max += 1;
            if self.timing.is_none() {
                self.timing = Some((seq, now));
            }
        }
        if self.timer.is_none() {
            self.timer = Some(now + Nanos(self.rto()));
        }
        seq
    }

    /// An acknowledgement of everything before `ack`, advertising `rwnd` free segments, arrives at `now`.
    pub fn on_ack(&mut self, ack: u32, rwnd: u32, now: Nanos) -> AckOutcome {
        // A window update is no duplicate ACK, though it acknowledges nothing new (RFC 5681 sec. 2, item (e)).
        let same_window = rwnd == self.rwnd;
        self.rwnd = rwnd;
        let mut out = AckOutcome::default();
        if ack > self.snd_una {
            out.newly_acked = ack - self.snd_una;
            self.snd_una = ack;
            self.snd_nxt = self.snd_nxt.max(ack);
            self.dupacks = 0;
            if let Some((seq, sent)) = self.timing {
                if ack > seq {
                    self.timing = None;
                    self.rtt_sample((now - sent).0);
                }
            }
            let mut restart = true;
            match self.recover {
                Some(r) if ack >= r => {
                    // Full ACK: recovery is over, the window deflates to the threshold (RFC 6582 sec. 3.2 step 3).
                    self.recover = None;
                    self.cwnd = self.ssthresh.max(1);
                }
                Some(_) => {
                    // Partial ACK: the next hole was lost too; resend it and deflate by what was acknowledged.
                    out.retransmit = Some(self.snd_una);
                    self.cwnd = (self.cwnd.saturating_sub(out.newly_acked) + 1).max(1);
                    restart = !self.partial_seen;
                    self.partial_seen = true;
                }
                None if self.cwnd < self.ssthresh => self.cwnd += 1,
                None => {
                    self.cwnd_cnt += 1;
                    if self.cwnd_cnt >= self.cwnd {
                        self.cwnd_cnt = 0;
                        self.cwnd += 1;
                    }
                }
            }
            // A window the sender cannot fill does not grow (Linux's `tcp_is_cwnd_limited`).
            if self.recover.is_none() {
                self.cwnd = self.cwnd.min(self.limit);
            }
            // RFC 6298 sec. 5.2-5.3: stop the timer when nothing is outstanding, else restart it.
            if self.snd_max == self.snd_una {
                self.timer = None;
            } else if restart {
                self.timer = Some(now + Nanos(self.rto()));
            }
        } else if ack == self.snd_una && self.snd_max > self.snd_una && same_window {
            self.dupacks += 1;
            if self.recover.is_some() {
                // Each duplicate means a segment left the network: inflate (RFC 5681 sec. 3.2 step 4).
                self.cwnd += 1;
            } else if self.dupacks == DUPACK_THRESHOLD && self.snd_una >= self.rto_recover {
                self.ssthresh = (self.flight() / 2).max(2);
                self.cwnd = self.ssthresh + DUPACK_THRESHOLD;
                self.recover = Some(self.snd_max);
                self.partial_seen = false;
                self.timing = None;
                self.fast_retransmits += 1;
                out.retransmit = Some(self.snd_una);
            }
        }
        out
    }

    /// The retransmission timer expired at `now`: the window collapses to one segment, the timeout doubles, and
    /// sending resumes from the oldest unacknowledged segment (RFC 5681 sec. 3.1, RFC 6298 sec. 5.4-5.6).
    pub fn on_timeout(&mut self, now: Nanos) {
        if self.snd_max == self.snd_una {
            self.timer = None;
            return;
        }
        self.ssthresh = (self.flight().max(self.snd_max - self.snd_una) / 2).max(2);
        self.cwnd = 1;
        self.cwnd_cnt = 0;
        self.dupacks = 0;
        self.recover = None;
        self.timing = None;
        self.rto_recover = self.snd_max;
        self.snd_nxt = self.snd_una;
        self.backoff += 1;
        self.timeouts += 1;
        self.timer = Some(now + Nanos(self.rto()));
    }

    /// RFC 6298 sec. 2: SRTT and RTTVAR from a new sample, RTO = SRTT + max(G, 4 RTTVAR), within Linux's bounds.
    fn rtt_sample(&mut self, r: u64) {
        match self.srtt_ns {
            None => {
                self.srtt_ns = Some(r);
                self.rttvar_ns = r / 2;
            }
            Some(s) => {
                self.rttvar_ns = (3 * self.rttvar_ns + s.abs_diff(r)) / 4;
                self.srtt_ns = Some((7 * s + r) / 8);
            }
        }
        let srtt = self.srtt_ns.unwrap_or(r);
        self.rto_ns = (srtt + CLOCK_G_NS.max(4 * self.rttvar_ns)).clamp(RTO_MIN_NS, RTO_MAX_NS);
        self.backoff = 0;
    }
}

/// What the receiver did with an arriving segment.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// In order: this many segments (it and those it made contiguous) are now readable; `filled` when it closed
    /// a gap (acknowledged at once, RFC 5681 sec. 4.2).
    InOrder { delivered: u32, filled: bool },
    /// Beyond a gap: held, and a duplicate ACK goes out at once.
    OutOfOrder,
    /// Already received: acknowledged again at once.
    Duplicate,
}

/// The receiving side of one TCP connection.
#[derive(Debug, Clone, Default)]
pub struct TcpReceiver {
    /// Next segment expected: what every ACK acknowledges up to.
    pub rcv_nxt: u32,
    /// Segments received beyond a gap.
    held: BTreeSet<u32>,
}

impl TcpReceiver {
    pub fn on_segment(&mut self, seq: u32) -> Arrival {
        if seq < self.rcv_nxt || self.held.contains(&seq) {
            return Arrival::Duplicate;
        }
        if seq > self.rcv_nxt {
            self.held.insert(seq);
            return Arrival::OutOfOrder;
        }
        self.rcv_nxt += 1;
        let mut delivered = 1;
        while self.held.remove(&self.rcv_nxt) {
            self.rcv_nxt += 1;
            delivered += 1;
        }
        Arrival::InOrder { delivered, filled: delivered > 1 }
    }

    /// Segments held beyond a gap (they take socket buffer room).
    pub fn held(&self) -> u32 {
        self.held.len() as u32
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const RTT: u64 = 1_000_000;

    /// Sends whatever the windows allow at `now`; returns the segments sent.
    fn pump(s: &mut TcpSender, now: Nanos) -> Vec<u32> {
        let mut out = Vec::new();
        while s.can_send() {
            out.push(s.send(now));
        }
        out
    }

    #[test]
    fn slow_start_then_avoidance_without_loss() {
        let mut s = TcpSender::new(1000);
        let mut r = TcpReceiver::default();
        let mut now = Nanos(0);
        let mut acked = 0;
        for _ in 0..20 {
            let sent = pump(&mut s, now);
            now += Nanos(RTT);
            for seq in sent {
                assert!(matches!(r.on_segment(seq), Arrival::InOrder { delivered: 1, .. }));
                acked += s.on_ack(r.rcv_nxt, u32::MAX, now).newly_acked;
            }
        }
        // Slow start with no threshold grows to the sender's own limit and stays there: no loss, no recovery.
        assert_eq!(s.cwnd, 1000);
        assert_eq!((s.timeouts, s.fast_retransmits), (0, 0));
        assert_eq!(acked, s.snd_una);
        assert!(s.timer.is_none(), "nothing outstanding, no timer");
        // The RTO came from the samples: the floor, as on a LAN.
        assert_eq!(s.rto(), RTO_MIN_NS);
    }

    #[test]
    fn congestion_avoidance_adds_one_segment_per_window() {
        let mut s = TcpSender::new(1000);
        s.ssthresh = 10;
        s.cwnd = 10;
        let now = Nanos(0);
        for _ in 0..10 {
            let seq = s.send(now);
            s.on_ack(seq + 1, u32::MAX, now + Nanos(RTT));
        }
        assert_eq!(s.cwnd, 11);
    }

    #[test]
    fn a_lost_segment_is_recovered_by_fast_retransmit() {
        let mut s = TcpSender::new(64);
        s.cwnd = 10;
        let mut r = TcpReceiver::default();
        let now = Nanos(0);
        let sent = pump(&mut s, now);
        assert_eq!(sent, (0..10).collect::<Vec<_>>());
        let later = now + Nanos(RTT);
        let mut retransmit = None;
        for seq in sent.into_iter().filter(|&q| q != 2) {
            let a = r.on_segment(seq);
            if seq > 2 {
                assert_eq!(a, Arrival::OutOfOrder);
            }
            let out = s.on_ack(r.rcv_nxt, u32::MAX, later);
            retransmit = retransmit.or(out.retransmit);
        }
        // Three duplicates (for 3, 4, 5) asked for segment 2 again; the window halved and inflated.
        assert_eq!(retransmit, Some(2));
        assert_eq!(s.fast_retransmits, 1);
        assert_eq!(s.ssthresh, 4, "half the 8 segments outstanding at the third duplicate");
        assert_eq!(r.on_segment(2), Arrival::InOrder { delivered: 8, filled: true });
        s.on_ack(r.rcv_nxt, u32::MAX, later + Nanos(RTT));
        assert_eq!(s.snd_una, 10);
        assert_eq!(s.cwnd, 4, "a full ACK ends recovery at ssthresh");
        assert_eq!(s.timeouts, 0, "no timeout was needed");
    }

    #[test]
    fn a_lost_window_is_recovered_by_timeout_with_backoff() {
        let mut s = TcpSender::new(64);
        let mut r = TcpReceiver::default();
        // One clean round trip gives an RTT sample: the timeout is the 200 ms floor.
        let first = pump(&mut s, Nanos(0));
        for seq in first {
            r.on_segment(seq);
            s.on_ack(r.rcv_nxt, u32::MAX, Nanos(RTT));
        }
        assert_eq!(s.rto(), RTO_MIN_NS);
        // The whole next window is lost: no ACK comes back, the timer fires.
        let lost = pump(&mut s, Nanos(RTT));
        assert!(lost.len() > 3);
        let t1 = s.timer.expect("the timer runs while data is outstanding");
        assert_eq!(t1, Nanos(RTT + RTO_MIN_NS));
        s.on_timeout(t1);
        assert_eq!((s.cwnd, s.timeouts), (1, 1));
        assert_eq!(s.ssthresh, (lost.len() as u32 / 2).max(2));
        // One segment goes out again; it is lost too: the timeout doubles.
        assert_eq!(pump(&mut s, t1), vec![lost[0]]);
        let t2 = s.timer.unwrap();
        assert_eq!(t2, t1 + Nanos(2 * RTO_MIN_NS));
        s.on_timeout(t2);
        assert_eq!(pump(&mut s, t2), vec![lost[0]]);
        let t3 = s.timer.unwrap();
        assert_eq!(t3, t2 + Nanos(4 * RTO_MIN_NS));
        // This time it arrives; slow start resends the rest, and a sample of new data ends the backoff.
        r.on_segment(lost[0]);
        s.on_ack(r.rcv_nxt, u32::MAX, t2 + Nanos(RTT));
        assert_eq!(s.cwnd, 2);
        let mut now = t2 + Nanos(RTT);
        for _ in 0..5 {
            let sent = pump(&mut s, now);
            now += Nanos(RTT);
            for seq in sent {
                r.on_segment(seq);
                s.on_ack(r.rcv_nxt, u32::MAX, now);
            }
        }
        assert!(s.snd_una > lost[lost.len() - 1], "the lost window was delivered");
        assert_eq!((s.timeouts, s.fast_retransmits), (2, 0));
        assert_eq!(s.rto(), RTO_MIN_NS, "backoff ends with a fresh RTT sample");
    }

    #[test]
    fn partial_acks_restart_the_timer_once() {
        let mut s = TcpSender::new(64);
        s.cwnd = 12;
        let mut r = TcpReceiver::default();
        let t0 = Nanos(0);
        // Every other segment is lost: 0, 2, 4, ... 10.
        for seq in pump(&mut s, t0).into_iter().filter(|q| q % 2 == 1) {
            r.on_segment(seq);
            s.on_ack(r.rcv_nxt, u32::MAX, t0 + Nanos(RTT));
        }
        assert_eq!(s.fast_retransmits, 1);
        let rtx = |s: &mut TcpSender, r: &mut TcpReceiver, at: u64| {
            let seq = s.snd_una;
            r.on_segment(seq);
            s.on_ack(r.rcv_nxt, u32::MAX, Nanos(at))
        };
        // The first partial ACK restarts the timer; the next ones do not, though each repairs a hole.
        assert_eq!(rtx(&mut s, &mut r, 2 * RTT).retransmit, Some(2));
        let deadline = s.timer.unwrap();
        assert_eq!(deadline, Nanos(2 * RTT + s.rto()));
        assert_eq!(rtx(&mut s, &mut r, 3 * RTT).retransmit, Some(4));
        assert_eq!(s.timer, Some(deadline));
        s.on_timeout(deadline);
        assert_eq!((s.cwnd, s.snd_nxt, s.timeouts), (1, 4, 1), "back to slow start from the next hole");
    }

    #[test]
    fn receiver_holds_out_of_order_data_and_ignores_duplicates() {
        let mut r = TcpReceiver::default();
        assert_eq!(r.on_segment(1), Arrival::OutOfOrder);
        assert_eq!(r.on_segment(1), Arrival::Duplicate);
        assert_eq!(r.held(), 1);
        assert_eq!(r.on_segment(0), Arrival::InOrder { delivered: 2, filled: true });
        assert_eq!(r.on_segment(0), Arrival::Duplicate);
        assert_eq!((r.rcv_nxt, r.held()), (2, 0));
    }

    #[test]
    fn a_window_update_is_no_duplicate_ack() {
        let mut s = TcpSender::new(64);
        s.cwnd = 10;
        pump(&mut s, Nanos(0));
        for w in 1..=5 {
            s.on_ack(0, w, Nanos(RTT));
        }
        assert_eq!(s.fast_retransmits, 0);
        for _ in 0..3 {
            s.on_ack(0, 5, Nanos(RTT));
        }
        assert_eq!(s.fast_retransmits, 1, "three true duplicates");
    }

    #[test]
    fn the_receivers_window_limits_the_sender() {
        let mut s = TcpSender::new(64);
        s.cwnd = 50;
        s.on_ack(0, 4, Nanos(0));
        assert_eq!(pump(&mut s, Nanos(0)).len(), 4);
    }
}
