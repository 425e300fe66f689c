//! Measurement: per-domain and per-task accumulators filled by the engine, the summaries the report prints, and
//! the fair share (weighted max-min) every domain's CPU share is judged against.

use serde::Serialize;

/// What the engine measures for a domain within the measured window (after warm-up).
#[derive(Debug, Default, Clone)]
pub struct DomMetrics {
    /// CPU time of its vCPUs [ns].
    pub cpu_ns: u64,
    /// Times one of its vCPUs was switched onto a pCPU.
    pub context_switches: u64,
    /// Response times of its servers' requests, as the clients see them [ns].
    pub responses_ns: Vec<u64>,
    /// Event-channel notification latency: pending until the vCPU runs [ns].
    pub event_latency_ns: Vec<u64>,
    /// Requests its servers finished.
    pub requests_served: u64,
    /// Time its vCPUs spent blocked (no work) [ns], summed over vCPUs.
    pub blocked_ns: u64,
    /// I/O operations its I/O loops and disk readers completed.
    pub io_done: u64,
    /// Issue-to-completion latency of those operations [ns].
    pub io_latency_ns: Vec<u64>,
    /// Payload its tasks received: bulk stream data and disk blocks [bytes].
    pub bytes_in: u64,
    /// Payload its tasks sent and had acknowledged (bulk) or sent (streams) [bytes].
    pub bytes_out: u64,
    /// Times one of its stream clients ran out of buffered data.
    pub underruns: u64,
    /// I/O items that found no driver domain (cannot happen in a validated scenario; counted, never hidden).
    pub dropped: u64,
}

/// What the engine measures for a guest task within the measured window.
#[derive(Debug, Default, Clone)]
pub struct TaskMetrics {
    /// CPU time while it was the guest's current task [ns].
    pub cpu_ns: u64,
}

/// A distribution summary in milliseconds.
#[derive(Debug, Clone, Serialize, PartialEq)]
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

/// Nearest-rank percentile of sorted samples.
fn percentile(sorted: &[u64], p: f64) -> u64 {
    let rank = ((p / 100.0) * sorted.len() as f64).ceil() as usize;
    sorted[rank.clamp(1, sorted.len()) - 1]
}

impl Summary {
    /// Summary of nanosecond samples, in ms; `None` when there are none.
    pub fn of_ns(samples: &[u64]) -> Option<Summary> {
        if samples.is_empty() {
            return None;
        }
        let mut s = samples.to_vec();
        s.sort_unstable();
        let ms = |ns: u64| round6(ns as f64 / 1e6);
        let sum: u128 = s.iter().map(|&x| u128::from(x)).sum();
        Some(Summary {
            count: s.len() as u64,
            mean: round6(sum as f64 / s.len() as f64 / 1e6),
            p50: ms(percentile(&s, 50.0)),
            p90: ms(percentile(&s, 90.0)),
            p99: ms(percentile(&s, 99.0)),
            max: ms(*s.last().expect("non-empty")),
        })
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
    fn jain_index() {
        assert_eq!(jain(&[1.0, 1.0, 1.0]), Some(1.0));
        assert!((jain(&[1.0, 0.0]).unwrap() - 0.5).abs() < 1e-12);
    }
}
