//! Measurement: per-domain and per-task accumulators filled by the engine, the summaries the report prints, and
//! the fair share (weighted max-min) every domain's CPU share is judged against.

use serde::Serialize;

/// Samples kept exactly up to this many; beyond, in a histogram (bounded memory for long runs).
pub const EXACT_SAMPLES: usize = 65_536;
/// Histogram sub-buckets per power of two: quantiles within 1/1024 (0.1%) of the exact value.
const SUB_BITS: u32 = 10;

/// A distribution of non-negative integer samples [ns]: exact while small, then a log-linear histogram. Count,
/// sum (so the mean) and max stay exact either way.
#[derive(Debug, Default, Clone)]
pub struct Samples {
    exact: Vec<u64>,
    /// Bucket index -> count, once the exact list outgrew `EXACT_SAMPLES`.
    /// Count per bucket index, grown to the highest bucket seen (dense: a push is one add, not a tree walk).
    hist: Option<Vec<u64>>,
    count: u64,
    sum: u128,
    max: u64,
}

/// Log-linear bucket of a value: exact below 2^SUB_BITS, then 2^SUB_BITS buckets per power of two.
fn bucket_of(v: u64) -> u32 {
    if v < (1 << SUB_BITS) {
        return v as u32;
    }
    let mag = 63 - v.leading_zeros(); // >= SUB_BITS
    let shift = mag - SUB_BITS;
    ((mag - SUB_BITS + 1) << SUB_BITS) | ((v >> shift) as u32 & ((1 << SUB_BITS) - 1))
}

/// Counts `v` in a dense histogram, growing it to `v`'s bucket.
fn count_in(h: &mut Vec<u64>, v: u64) {
    let b = bucket_of(v) as usize;
    if b >= h.len() {
        h.resize(b + 1, 0);
    }
    h[b] += 1;
}

/// The non-empty buckets of a dense histogram, as (bucket index, count) in increasing value.
fn nonzero(h: &[u64]) -> impl Iterator<Item = (u32, u64)> + '_ {
    h.iter().enumerate().filter(|(_, &c)| c > 0).map(|(b, &c)| (b as u32, c))
}

/// The smallest value in a bucket.
fn bucket_floor(b: u32) -> u64 {
    let hi = b >> SUB_BITS;
    let lo = u64::from(b & ((1 << SUB_BITS) - 1));
    if hi == 0 {
        return lo;
    }
    let shift = hi - 1;
    ((1u64 << SUB_BITS) | lo) << shift
}

impl Samples {
    pub fn push(&mut self, v: u64) {
        self.count += 1;
        self.sum += u128::from(v);
        self.max = self.max.max(v);
        match &mut self.hist {
            Some(h) => count_in(h, v),
            None => {
                self.exact.push(v);
                if self.exact.len() > EXACT_SAMPLES {
                    let mut h = Vec::new();
                    for x in self.exact.drain(..) {
                        count_in(&mut h, x);
                    }
                    self.exact = Vec::new();
                    self.hist = Some(h);
                }
            }
        }
    }

    pub fn len(&self) -> u64 {
        self.count
    }

    pub fn is_empty(&self) -> bool {
        self.count == 0
    }

    pub fn max(&self) -> u64 {
        self.max
    }

    /// The distribution as (value [ns], count) points in increasing value: every sample while exact, else one
    /// point per histogram bucket (at its floor). For CDF plots.
    pub fn points(&self) -> Vec<(u64, u64)> {
        match &self.hist {
            Some(h) => nonzero(h).map(|(b, c)| (bucket_floor(b), c)).collect(),
            None => {
                let mut v = self.exact.clone();
                v.sort_unstable();
                let mut out: Vec<(u64, u64)> = Vec::new();
                for x in v {
                    match out.last_mut() {
                        Some(last) if last.0 == x => last.1 += 1,
                        _ => out.push((x, 1)),
                    }
                }
                out
            }
        }
    }

    /// Nearest-rank quantile (exact while the samples are kept; else the floor of its histogram bucket).
    fn quantile(&self, sorted: &[u64], p: f64) -> u64 {
        let rank = (((p / 100.0) * self.count as f64).ceil() as u64).clamp(1, self.count);
        match &self.hist {
            None => sorted[rank as usize - 1],
            Some(h) => {
                let mut seen = 0;
                for (b, c) in nonzero(h) {
                    seen += c;
                    if seen >= rank {
                        return bucket_floor(b).min(self.max);
                    }
                }
                self.max
            }
        }
    }
}

/// What the engine measures for a domain within the measured window (after warm-up).
#[derive(Debug, Default, Clone)]
pub struct DomMetrics {
    /// CPU time of its vCPUs [ns].
    pub cpu_ns: u64,
    /// Times one of its vCPUs was switched onto a pCPU.
    pub context_switches: u64,
    /// Times one of its vCPUs was switched onto another pCPU than the one it last ran on.
    pub migrations: u64,
    /// Response times of its servers' requests, as the clients see them [ns].
    pub responses_ns: Samples,
    /// Event-channel notification latency: pending until the vCPU runs [ns].
    pub event_latency_ns: Samples,
    /// Requests its servers finished.
    pub requests_served: u64,
    /// Time its vCPUs spent blocked (no work) [ns], summed over vCPUs.
    pub blocked_ns: u64,
    /// I/O operations its I/O loops and disk readers completed.
    pub io_done: u64,
    /// Issue-to-completion latency of those operations [ns].
    pub io_latency_ns: Samples,
    /// Payload its tasks received: bulk stream data and disk blocks [bytes].
    pub bytes_in: u64,
    /// Payload its tasks sent and had acknowledged (bulk) or sent (streams) [bytes].
    pub bytes_out: u64,
    /// Times one of its stream clients ran out of buffered data.
    pub underruns: u64,
    /// Hypervisor time its vCPUs spent tracking guest address-space switches (task-aware scheduling) [ns].
    pub tracking_ns: u64,
    /// Messages its pipe tasks handed on.
    pub messages: u64,
    /// Packets for it dropped over the whole run: at a full NIC receive ring (`costs::HostCosts::nic_rx_ring`),
    /// or I/O items that found no driver domain (cannot happen in a validated scenario; counted, never hidden).
    pub dropped: u64,
    /// Critical sections its spinlock threads completed.
    pub lock_acquisitions: u64,
    /// CPU its threads burnt spinning for the lock or for IPI acknowledgements [ns].
    pub spin_ns: u64,
    /// Shootdowns completed, and the time from their IPIs to the last acknowledgement, summed [ns].
    pub shootdowns: u64,
    pub ipi_wait_ns: u64,
    /// Pause-loop exits of its vCPUs.
    pub ple_exits: u64,
}

/// A per-domain latency distribution that can be read out whole (the page's CDFs).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Distribution {
    /// Response times of the domain's servers ([`DomMetrics::responses_ns`]).
    Response,
    /// Event-channel notification latency ([`DomMetrics::event_latency_ns`]).
    EventLatency,
    /// I/O issue-to-completion latency ([`DomMetrics::io_latency_ns`]).
    IoLatency,
}

impl Distribution {
    /// The distribution by the name callers outside the core use: "response", "event_latency" or "io_latency".
    pub fn from_name(name: &str) -> Option<Distribution> {
        match name {
            "response" => Some(Distribution::Response),
            "event_latency" => Some(Distribution::EventLatency),
            "io_latency" => Some(Distribution::IoLatency),
            _ => None,
        }
    }
}

impl DomMetrics {
    /// The samples of one of the domain's distributions [ns].
    pub fn samples(&self, d: Distribution) -> &Samples {
        match d {
            Distribution::Response => &self.responses_ns,
            Distribution::EventLatency => &self.event_latency_ns,
            Distribution::IoLatency => &self.io_latency_ns,
        }
    }
}

/// What the engine measures for a guest task within the measured window.
#[derive(Debug, Default, Clone)]
pub struct TaskMetrics {
    /// CPU time while it was the guest's current task [ns].
    pub cpu_ns: u64,
    /// I/O operations it completed within the measured window (I/O loops).
    pub io_done: u64,
    /// Of that, hypervisor time spent tracking the switches to it (task-aware scheduling) [ns].
    pub tracking_ns: u64,
    /// Response times of its requests as its clients see them (servers; the domain's `responses_ns` mixes all its
    /// servers, while paper 000's Fig. 13 is about one of them) [ns].
    pub responses_ns: Samples,
    /// When the policy first inferred it I/O-bound after the last scenario change (or the start) [ns].
    pub inferred_io_at: Option<crate::time::Nanos>,
}

/// A distribution summary in milliseconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Summary {
    pub count: u64,
    pub mean: f64,
    pub p50: f64,
    pub p90: f64,
    pub p99: f64,
    pub max: f64,
}

/// Rounds to 6 decimals so reports stay readable; deterministic on every platform.
pub fn round6(x: f64) -> f64 {
    (x * 1e6).round() / 1e6
}

impl Summary {
    /// Summary of nanosecond samples, in ms; `None` when there are none.
    pub fn of(samples: &Samples) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut sorted = samples.exact.clone();
        sorted.sort_unstable();
        let ms = |ns: u64| round6(ns as f64 / 1e6);
        Some(Summary {
            count: samples.count,
            mean: round6(samples.sum as f64 / samples.count as f64 / 1e6),
            p50: ms(samples.quantile(&sorted, 50.0)),
            p90: ms(samples.quantile(&sorted, 90.0)),
            p99: ms(samples.quantile(&sorted, 99.0)),
            max: ms(samples.max),
        })
    }

    /// Summary of a plain list of nanosecond samples.
    pub fn of_ns(samples: &[u64]) -> Option<Summary> {
        let mut s = Samples::default();
        samples.iter().for_each(|&x| s.push(x));
        Summary::of(&s)
    }
}

/// Each domain's entitlement if every domain were busy, as a fraction of the host: weighted max-min (water
/// filling) of `capacity` pCPUs, each domain bounded by its vCPU count and its cap.
pub fn fair_shares(capacity: f64, weights: &[u32], bounds: &[f64]) -> Vec<f64> {
    let n = weights.len();
    let mut alloc = vec![0.0; n];
    let mut open: Vec<usize> = (0..n).filter(|&i| bounds[i] > 0.0).collect();
    let mut left = capacity;
    while !open.is_empty() && left > 1e-12 {
        let w: f64 = open.iter().map(|&i| f64::from(weights[i])).sum();
        // Domains whose bound is below their weighted portion are saturated at the bound; the rest is re-split.
        let saturated: Vec<usize> =
            open.iter().copied().filter(|&i| bounds[i] <= left * f64::from(weights[i]) / w + 1e-12).collect();
        if saturated.is_empty() {
            for &i in &open {
                alloc[i] = left * f64::from(weights[i]) / w;
            }
            break;
        }
        for &i in &saturated {
            alloc[i] = bounds[i];
            left -= bounds[i];
        }
        open.retain(|i| !saturated.contains(i));
    }
    alloc.iter().map(|a| a / capacity).collect()
}

/// Peak resident set size of this process [MB], from /proc (0 where unavailable), for benchmarks.
pub fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}

/// Jain's fairness index of positive values: 1 when all equal, 1/n at worst.
pub fn jain(xs: &[f64]) -> Option<f64> {
    if xs.is_empty() {
        return None;
    }
    let s: f64 = xs.iter().sum();
    let s2: f64 = xs.iter().map(|x| x * x).sum();
    if s2 == 0.0 {
        return None;
    }
    Some(s * s / (xs.len() as f64 * s2))
}

crate::size::heap_size!(Samples { exact, hist });
crate::size::heap_size!(DomMetrics { responses_ns, event_latency_ns, io_latency_ns });
crate::size::heap_size!(TaskMetrics { responses_ns });

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fair_share_is_weighted() {
        let f = fair_shares(1.0, &[256, 512, 256], &[1.0, 1.0, 1.0]);
        assert_eq!(f, vec![0.25, 0.5, 0.25]);
    }

    #[test]
    fn fair_share_respects_caps_and_vcpu_counts() {
        // One pCPU, a domain capped at 20% and two equal others: 0.2, 0.4, 0.4.
        let f = fair_shares(1.0, &[256, 256, 256], &[0.2, 1.0, 1.0]);
        assert!((f[0] - 0.2).abs() < 1e-9 && (f[1] - 0.4).abs() < 1e-9, "{f:?}");
        // Four pCPUs, a 1-vCPU domain with a huge weight still gets one pCPU.
        let f = fair_shares(4.0, &[10_000, 256], &[1.0, 4.0]);
        assert!((f[0] - 0.25).abs() < 1e-9 && (f[1] - 0.75).abs() < 1e-9, "{f:?}");
    }

    #[test]
    fn summary_percentiles() {
        let samples: Vec<u64> = (1..=100).map(|i| i * 1_000_000).collect();
        let s = Summary::of_ns(&samples).unwrap();
        assert_eq!((s.p50, s.p90, s.p99, s.max, s.mean), (50.0, 90.0, 99.0, 100.0, 50.5));
        assert!(Summary::of_ns(&[]).is_none());
    }

    #[test]
    fn histogram_quantiles_stay_within_a_thousandth() {
        let mut s = Samples::default();
        let n = EXACT_SAMPLES as u64 * 3;
        for i in 0..n {
            s.push(1_000 + (i * 7_919) % 50_000_000);
        }
        assert!(s.hist.is_some() && s.exact.is_empty(), "switched to the histogram");
        let h = Summary::of(&s).unwrap();
        let mut all: Vec<u64> = (0..n).map(|i| 1_000 + (i * 7_919) % 50_000_000).collect();
        all.sort_unstable();
        let exact = |p: f64| all[((p / 100.0 * n as f64).ceil() as usize).clamp(1, all.len()) - 1] as f64 / 1e6;
        for (got, p) in [(h.p50, 50.0), (h.p90, 90.0), (h.p99, 99.0)] {
            assert!((got - exact(p)).abs() <= exact(p) / 1000.0 + 1e-6, "p{p}: {got} vs {}", exact(p));
        }
        assert_eq!(h.count, n);
        assert_eq!(h.max, round6(*all.last().unwrap() as f64 / 1e6));
    }

    #[test]
    fn buckets_round_trip() {
        for v in [0u64, 1, 1023, 1024, 1025, 4096, 123_456_789, u64::MAX / 3] {
            let b = bucket_of(v);
            assert!(bucket_floor(b) <= v && v - bucket_floor(b) <= v / 1024, "{v}");
        }
    }

    #[test]
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        assert!((jain(&[1.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
    }
}
