//! `barrier`: a concurrent job, one thread per vCPU of its domain, in phases of compute then a barrier at which
//! threads spin or block until the last arrives.

use super::{Builder, CheckCx, Estimate, EstimateCx, Kind};
use crate::model::{BarrierGroup, BarrierPhase, TaskId, Work};
use crate::time::us_to_ns;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct BarrierSpec {
    /// Compute per phase per thread [us].
    pub compute_us: f64,
    /// Phases until the job is done; 0 = forever.
    pub phases: u32,
    pub sync: SyncMode,
}

/// How a thread waits at the barrier.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SyncMode {
    /// Busy-waits (burns its CPU) until the last thread arrives.
    Spin,
    /// Blocks; the last thread to arrive wakes it with an IPI.
    Block,
}

impl Kind for BarrierSpec {
    fn needs_driver(&self) -> bool {
        false
    }
    fn validate(&self, cx: &CheckCx, p: &mut Vec<String>) {
        if cx.pinned {
            p.push(format!("{}.vcpu: a barrier job runs one thread on every vCPU; it cannot be pinned", cx.at));
        }
    }
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate) {
        // Each thread: compute, arrive, wait or spin, release; a phase per compute time at best.
        // (`phases` bounds the work, but a starved job may take the whole run, so it is not counted.)
        e.rate += cx.dom_vcpus.min(cx.pcpus) * 6.0 / EstimateCx::cpu(self.compute_us);
    }
    /// One thread per vCPU of the domain, in a new barrier group.
    fn build(&self, b: &mut Builder) -> Option<TaskId> {
        let g = b.groups.len();
        let mut members = Vec::new();
        for k in 0..b.vcpus as usize {
            let work = Work::Barrier {
                group: g,
                member: k,
                compute_ns: us_to_ns(self.compute_us).max(1),
                spin: self.sync == SyncMode::Spin,
                phase: BarrierPhase::Compute,
            };
            members.push((b.add)(k, format!("{}.{k}", b.name), work));
        }
        b.groups.push(BarrierGroup {
            key: b.key.clone(),
            members,
            arrived: 0,
            phases: self.phases,
            phases_done: 0,
            done_at: None,
            spin_ns: 0,
            spin_ns_by_member: vec![0; b.vcpus as usize],
        });
        None
    }
}
