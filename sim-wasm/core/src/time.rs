//! Simulated time: integer nanoseconds, so runs are bit-for-bit reproducible natively and in wasm.

use serde::{Deserialize, Serialize};
use std::ops::{Add, AddAssign, Sub};

/// A point in, or span of, simulated time [ns].
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
pub struct Nanos(pub u64);

impl Nanos {
    pub const ZERO: Nanos = Nanos(0);
    pub const fn from_us(us: u64) -> Nanos {
        Nanos(us * 1_000)
    }
    pub const fn from_ms(ms: u64) -> Nanos {
        Nanos(ms * 1_000_000)
    }
    /// Milliseconds as a float, for reports only (never for simulation decisions).
    pub fn as_ms_f64(self) -> f64 {
        self.0 as f64 / 1e6
    }
    pub fn saturating_sub(self, o: Nanos) -> Nanos {
        Nanos(self.0.saturating_sub(o.0))
    }
}

impl Add for Nanos {
    type Output = Nanos;
    fn add(self, o: Nanos) -> Nanos {
        Nanos(self.0 + o.0)
    }
}
impl AddAssign for Nanos {
    fn add_assign(&mut self, o: Nanos) {
        self.0 += o.0;
    }
}
impl Sub for Nanos {
    type Output = Nanos;
    fn sub(self, o: Nanos) -> Nanos {
        Nanos(self.0 - o.0)
    }
}

/// Converts a (validated, non-negative) float of microseconds from a scenario file to nanoseconds.
pub fn us_to_ns(us: f64) -> u64 {
    (us * 1_000.0).round() as u64
}

/// Converts a (validated, non-negative) float of milliseconds from a scenario file to nanoseconds.
pub fn ms_to_ns(ms: f64) -> u64 {
    (ms * 1_000_000.0).round() as u64
}

/// Wall-clock timing for reports and benchmarks. `std::time::Instant` panics on wasm32-unknown-unknown, so there
/// it measures nothing (the page times runs itself).
pub struct WallClock(#[cfg(not(target_arch = "wasm32"))] std::time::Instant);

impl WallClock {
    pub fn start() -> WallClock {
        WallClock(
            #[cfg(not(target_arch = "wasm32"))]
            std::time::Instant::now(),
        )
    }

    /// Nanoseconds since `start` (0 where there is no clock).
    pub fn elapsed_ns(&self) -> u64 {
        #[cfg(not(target_arch = "wasm32"))]
        {
            self.0.elapsed().as_nanos() as u64
        }
        #[cfg(target_arch = "wasm32")]
        {
            0
        }
    }
}

crate::size::no_heap!(Nanos);
