//! `tlb_shootdown`: a thread that computes, then flushes a range of every other vCPU's TLB: an IPI to each other
//! vCPU of its domain, then a spin until every one of them has acknowledged. A vCPU acknowledges only while it
//! runs: the IPI waits for a descheduled one (the engine's pending-event path), so one preempted sibling holds the
//! sender spinning. The run-time behaviour is the engine's (`sim/lock.rs`).

use super::{CheckCx, DomKinds, Estimate, EstimateCx, Kind};
use crate::model::Work;
use crate::time::us_to_ns;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TlbShootdownSpec {
    /// CPU the thread computes between two shootdowns [us] (CPU time, not a timer: a guest timer would reach the
    /// thread only when its vCPU runs).
    pub interval_us: f64,
    /// CPU each target vCPU spends in its IPI handler flushing the range, before the task it interrupted goes on
    /// [us].
    pub cpu_us: f64,
    /// vCPUs each shootdown flushes, taken in turn from the one after the last it flushed (a range only some
    /// vCPUs have cached, `mm_cpumask`); 0, the default, flushes every other vCPU of the domain.
    #[serde(default)]
    pub targets: u32,
}

impl Kind for TlbShootdownSpec {
    fn needs_driver(&self) -> bool {
        false
    }
    fn cpu_us(&self) -> Option<f64> {
        Some(self.interval_us)
    }
    fn validate(&self, cx: &CheckCx, p: &mut Vec<String>) {
        if self.cpu_us < 0.0 || !self.cpu_us.is_finite() {
            p.push(format!("{}.workload.cpu_us: must be a finite number of at least 0", cx.at));
        }
    }
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate) {
        // Per shootdown: the burst's end, an IPI and an acknowledgement per sibling, the release.
        e.rate += (4.0 + 3.0 * cx.dom_vcpus) / EstimateCx::cpu(self.interval_us);
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.tlb = true;
    }
    fn work(&self, _own_block_ns: u64) -> Work {
        Work::Tlb {
            interval_ns: us_to_ns(self.interval_us).max(1),
            flush_ns: us_to_ns(self.cpu_us),
            waiting: 0,
            sent_at: crate::time::Nanos::ZERO,
            sending: false,
            targets: self.targets,
            rotor: 0,
        }
    }
}
