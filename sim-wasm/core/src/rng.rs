//! Seeded random streams. Each source of randomness (a client's think times, a disk's service times) gets its own
//! stream derived from the scenario seed and the source's name, so the offered load does not depend on scheduling
//! decisions and two policies see the same load (common random numbers).

use rand_chacha::ChaCha8Rng;
use rand_core::{RngCore, SeedableRng};

/// One independent, reproducible random stream.
#[derive(Clone)]
pub struct Stream(ChaCha8Rng);

impl Stream {
    /// The stream named `name` under scenario seed `seed` (FNV-1a of the name, mixed with the seed).
    pub fn new(seed: u64, name: &str) -> Stream {
        let mut h: u64 = 0xcbf2_9ce4_8422_2325;
        for b in name.bytes() {
            h ^= u64::from(b);
            h = h.wrapping_mul(0x0100_0000_01b3);
        }
        let mut key = [0u8; 32];
        key[..8].copy_from_slice(&seed.to_le_bytes());
        key[8..16].copy_from_slice(&h.to_le_bytes());
        key[16..24].copy_from_slice(&(name.len() as u64).to_le_bytes());
        Stream(ChaCha8Rng::from_seed(key))
    }

    /// Uniform integer in `[lo, hi]` (inclusive). Uses rejection sampling so every value is equally likely.
    pub fn uniform(&mut self, lo: u64, hi: u64) -> u64 {
        if hi <= lo {
            return lo;
        }
        let span = hi - lo + 1;
        let zone = u64::MAX - (u64::MAX % span);
        loop {
            let x = self.0.next_u64();
            if x < zone {
                return lo + x % span;
            }
        }
    }

    /// Exponentially distributed value with the given mean (integer, rounded), for service times.
    pub fn exponential(&mut self, mean: u64) -> u64 {
        // 53 random bits give a uniform in (0, 1].
        let u = ((self.0.next_u64() >> 11) as f64 + 1.0) / (1u64 << 53) as f64;
        (-(u.ln()) * mean as f64).round() as u64
    }
}

crate::size::no_heap!(Stream);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streams_are_reproducible_and_independent() {
        let a: Vec<u64> = (0..5)
            .map({
                let mut s = Stream::new(7, "client/0");
                move |_| s.uniform(0, 1000)
            })
            .collect();
        let b: Vec<u64> = (0..5)
            .map({
                let mut s = Stream::new(7, "client/0");
                move |_| s.uniform(0, 1000)
            })
            .collect();
        let c: Vec<u64> = (0..5)
            .map({
                let mut s = Stream::new(7, "client/1");
                move |_| s.uniform(0, 1000)
            })
            .collect();
        assert_eq!(a, b);
        assert_ne!(a, c);
    }

    #[test]
    fn uniform_stays_in_range() {
        let mut s = Stream::new(1, "x");
        for _ in 0..10_000 {
            let v = s.uniform(10, 20);
            assert!((10..=20).contains(&v));
        }
        assert_eq!(s.uniform(5, 5), 5);
    }
}
