//! Host timing as Xen's timers give it: every hypervisor timer of a pCPU fires somewhere in the
//! timer-slop window after its deadline, periodic tickers re-arm from their own firing (so each pCPU's ticks drift on
//! its own), and host-wide accounting runs on the master pCPU. Without this every pCPU of a symmetric host would tick
//! and end its slices at the same instants and decide alike, co-scheduling by accident.
//!
//! Where in the slop window a timer fires depends on the pCPU's other interrupts and timers, which the model does
//! not carry; the position is drawn uniformly from a stream per (pCPU, timer kind) derived from the scenario seed.
//! The draws never depend on a scheduling decision (a pCPU's k-th tick takes the k-th draw of its tick stream under
//! every policy), so runs of different policies see the same jitter (common random numbers).

use crate::model::{Fire, Timer};
use crate::rng::Stream;
use crate::scenario::Timing;
use crate::time::Nanos;

/// Xen's timer slop: timers are batched within this window, so a timer fires up to this long after its deadline
/// (`xen/common/timer.c`: `timer_slop = 50000`, "we program the time hardware this far behind the closest
/// deadline"; 3.0.x/3.2: `TIMER_SLOP (50*1000)`) [ns].
pub const TIMER_SLOP: Nanos = Nanos::from_us(50);

/// Which timer of a pCPU fires (each kind has its own jitter stream).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimerKind {
    /// The scheduler's periodic tick (Credit's `ticker`, the hybrid scheduler's slot tick).
    Tick = 0,
    /// The end of the running vCPU's slice (`s_timer`), or an idle pCPU's wake-up timer.
    Slice = 1,
    /// Host-wide accounting on the master pCPU (Credit 4.x's `master_ticker`, a gang's slot).
    Account = 2,
}

/// The host's timer behaviour for one run.
#[derive(Clone)]
pub struct HostTiming {
    /// Jitter on (`Timing::Xen`) or off (`Timing::Lockstep`, the ablation: every timer at its deadline).
    jitter: bool,
    /// Per pCPU, one stream per timer kind (created on first use: most pCPUs never fire an accounting timer).
    streams: Vec<[Option<Stream>; 3]>,
    seed: u64,
    /// Per pCPU: its ticker (re-armable: a ticker stops while its pCPU idles, where the policy asks for that).
    tick: Vec<Timer>,
}

impl HostTiming {
    /// `slop`: whether the policy's timers go through the slop window at all (`Timers::timer_slop`).
    pub fn new(seed: u64, pcpus: usize, timing: Timing, slop: bool) -> HostTiming {
        HostTiming {
            jitter: slop && timing == Timing::Xen,
            streams: (0..pcpus).map(|_| [None, None, None]).collect(),
            seed,
            tick: vec![Timer::default(); pcpus],
        }
    }

    /// Arms pCPU `p`'s ticker for `deadline`; returns when it fires if the caller must queue an event for it.
    pub fn arm_tick(&mut self, p: usize, deadline: Nanos) -> Option<Nanos> {
        let at = self.fire_at(p, TimerKind::Tick, deadline);
        self.tick[p].arm(at).then_some(at)
    }

    /// Stops pCPU `p`'s ticker (its pCPU went idle).
    pub fn stop_tick(&mut self, p: usize) {
        self.tick[p].cancel();
    }

    /// Interprets a tick event of pCPU `p` at `now`.
    pub fn tick_fired(&mut self, p: usize, now: Nanos) -> Fire {
        self.tick[p].fire(now)
    }

    /// When a timer of `kind` on pCPU `p` that is due at `deadline` fires.
    pub fn fire_at(&mut self, p: usize, kind: TimerKind, deadline: Nanos) -> Nanos {
        if !self.jitter {
            return deadline;
        }
        let seed = self.seed;
        let s = self.streams[p][kind as usize].get_or_insert_with(|| Stream::new(seed, &stream_name(p, kind)));
        deadline + Nanos(s.uniform(0, TIMER_SLOP.0))
    }
}

fn stream_name(p: usize, kind: TimerKind) -> String {
    let k = match kind {
        TimerKind::Tick => "tick",
        TimerKind::Slice => "slice",
        TimerKind::Account => "account",
    };
    format!("timer/p{p}/{k}")
}

/// The first point of the `period` grid after `now`, where Xen restarts a ticker that stopped while its pCPU idled
/// (`csched_tick_resume`: `now + period - now % period`).
pub fn grid_after(now: Nanos, period: Nanos) -> Nanos {
    let p = period.0.max(1);
    Nanos(now.0 + p - now.0 % p)
}

crate::size::heap_size!(HostTiming { streams, tick });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn jitter_stays_in_the_slop_window_and_lockstep_has_none() {
        let mut t = HostTiming::new(7, 2, Timing::Xen, true);
        let mut seen_late = false;
        for k in 0..1000u64 {
            let d = Nanos::from_ms(10 * k);
            let at = t.fire_at(1, TimerKind::Slice, d);
            assert!(at >= d && at <= d + TIMER_SLOP, "{at:?} outside [{d:?}, +slop]");
            seen_late |= at > d;
        }
        assert!(seen_late);
        let mut l = HostTiming::new(7, 2, Timing::Lockstep, true);
        assert_eq!(l.fire_at(1, TimerKind::Tick, Nanos(123)), Nanos(123));
    }

    /// Common random numbers: a pCPU's k-th tick jitter does not depend on what else drew before it.
    #[test]
    fn streams_are_per_pcpu_and_kind() {
        let mut a = HostTiming::new(3, 4, Timing::Xen, true);
        let mut b = HostTiming::new(3, 4, Timing::Xen, true);
        for _ in 0..50 {
            b.fire_at(2, TimerKind::Slice, Nanos::ZERO);
            b.fire_at(0, TimerKind::Tick, Nanos::ZERO);
        }
        let ta: Vec<Nanos> = (0..20).map(|_| a.fire_at(2, TimerKind::Tick, Nanos::ZERO)).collect();
        let tb: Vec<Nanos> = (0..20).map(|_| b.fire_at(2, TimerKind::Tick, Nanos::ZERO)).collect();
        assert_eq!(ta, tb);
        let other: Vec<Nanos> = (0..20).map(|_| a.fire_at(3, TimerKind::Tick, Nanos::ZERO)).collect();
        assert_ne!(ta, other);
    }

    #[test]
    fn grid_restart_is_the_next_multiple() {
        let ms = Nanos::from_ms;
        assert_eq!(grid_after(ms(25), ms(10)), ms(30));
        assert_eq!(grid_after(ms(30), ms(10)), ms(40));
        assert_eq!(grid_after(Nanos::ZERO, ms(10)), ms(10));
    }
}
