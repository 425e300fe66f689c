//! CPU each vCPU received over time, bucketed for the whole run, and the lag it gives (paper 001).

/// Finest bucket of the per-vCPU CPU record behind Lag [ns].
pub(super) const USAGE_BUCKET_MIN_NS: u64 = 1_000_000;
/// Most (vCPU x bucket) cells of that record; longer or larger runs get coarser buckets.
pub(crate) const USAGE_MAX_CELLS: u64 = 4_000_000;

/// CPU time each vCPU received, in fixed buckets over the whole run. Kept whether or not detail is recorded,
/// because the report's Lag (paper 001, equation 1) is computed from it.
#[derive(Clone)]
pub struct VcpuUsage {
    bucket_ns: u64,
    nb: usize,
    nv: usize,
    /// CPU per bucket per vCPU [ns], row-major by vCPU.
    cells: Vec<u64>,
}

/// Every vCPU's Lag over time: `t_ns` are bucket boundaries, `lag_ns[v][k]` the Lag of vCPU `v` at `t_ns[k]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LagSeries {
    pub t_ns: Vec<u64>,
    pub lag_ns: Vec<Vec<i64>>,
}

impl VcpuUsage {
    pub fn new(nv: usize, end: u64) -> VcpuUsage {
        let min_bucket = end.div_ceil(USAGE_MAX_CELLS / nv.max(1) as u64).max(1);
        let bucket_ns = USAGE_BUCKET_MIN_NS.max(min_bucket);
        let nb = end.div_ceil(bucket_ns) as usize;
        VcpuUsage { bucket_ns, nb, nv, cells: vec![0; nb * nv] }
    }

    /// Width of a bucket [ns].
    pub fn bucket_ns(&self) -> u64 {
        self.bucket_ns
    }

    /// Records that vCPU `v` ran during `[start, end)` [ns].
    pub fn add(&mut self, v: usize, start: u64, end: u64) {
        let mut t = start;
        while t < end {
            let b = (t / self.bucket_ns) as usize;
            let b_end = ((b as u64 + 1) * self.bucket_ns).min(end);
            if b < self.nb {
                self.cells[v * self.nb + b] += b_end - t;
            }
            t = b_end;
        }
    }

    /// Lag(t, v) = (t - t0) x rate_v - Received(v, t0, t) (equation 1 of paper 001, from `t0` rather than 0) at
    /// every bucket boundary from the first one at or after `from` up to `until`. `rate_v` is the vCPU's
    /// entitlement in pCPUs: |P| x w(V_i) / |V_i|. Positive Lag: the vCPU is behind its share.
    pub fn lag(&self, rates: &[f64], from: u64, until: u64) -> LagSeries {
        let b0 = from.div_ceil(self.bucket_ns) as usize;
        let b1 = ((until / self.bucket_ns) as usize).min(self.nb);
        let t0 = b0 as u64 * self.bucket_ns;
        let t_ns: Vec<u64> = (b0..=b1.max(b0)).map(|b| (b as u64 * self.bucket_ns).min(until.max(t0))).collect();
        let lag_ns = (0..self.nv)
            .map(|v| {
                let mut received = 0u64;
                let mut out = Vec::with_capacity(t_ns.len());
                for (k, &t) in t_ns.iter().enumerate() {
                    if k > 0 {
                        received += self.cells[v * self.nb + b0 + k - 1];
                    }
                    let entitled = (t - t0) as f64 * rates.get(v).copied().unwrap_or(0.0);
                    out.push((entitled - received as f64).round() as i64);
                }
                out
            })
            .collect();
        LagSeries { t_ns, lag_ns }
    }
}

crate::size::heap_size!(VcpuUsage { cells });
