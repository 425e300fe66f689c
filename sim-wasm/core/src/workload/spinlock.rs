//! `spinlock`: one thread per vCPU of its domain contending for the domain's one lock: work between
//! acquisitions, then the critical section under the lock. A waiter spins (burns its CPU) in ticket order; in
//! `"pv"` mode it spins up to Linux's `SPIN_THRESHOLD` and then halts until the releaser kicks it, and a running
//! thread may take a free lock ahead of queued ones (PV queued spinlocks allow stealing). The run-time state
//! machine is the engine's (`sim/lock.rs`).

use super::{Builder, CheckCx, DomKinds, Estimate, EstimateCx, Kind};
use crate::model::{LockPhase, TaskId, Work};
use crate::time::us_to_ns;
use serde::Deserialize;

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SpinlockSpec {
    /// CPU inside the critical section per acquisition [us].
    pub cs_us: f64,
    /// CPU between a release and the next request [us].
    pub between_us: f64,
    /// The guest's lock: "ticket" (FIFO, every waiter spins) or "pv" (paravirtual: spin, then halt until kicked).
    #[serde(default)]
    pub lock: LockKind,
}

/// The guest kernel's spinlock.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum LockKind {
    /// A ticket lock: the lock passes to the next ticket in order, spinning or not.
    #[default]
    Ticket,
    /// A paravirtual queued spinlock (`kernel/locking/qspinlock_paravirt.h`): spin, halt, be kicked.
    Pv,
}

impl Kind for SpinlockSpec {
    fn needs_driver(&self) -> bool {
        false
    }
    fn validate(&self, cx: &CheckCx, p: &mut Vec<String>) {
        if cx.pinned {
            p.push(format!("{}.vcpu: a spinlock job runs one thread on every vCPU; it cannot be pinned", cx.at));
        }
    }
    fn estimate(&self, cx: &EstimateCx, e: &mut Estimate) {
        // Each thread: request, spin or hold, release; at best one acquisition per critical section host-wide.
        let per = EstimateCx::cpu(self.cs_us) + EstimateCx::cpu(self.between_us);
        e.rate += cx.dom_vcpus.min(cx.pcpus) * 8.0 / per + 8.0 / EstimateCx::cpu(self.cs_us);
    }
    fn metrics(&self, m: &mut DomKinds) {
        m.lock = true;
    }
    /// One thread per vCPU of the domain; the domain's lock is set up at boot.
    fn build(&self, b: &mut Builder) -> Option<TaskId> {
        for k in 0..b.vcpus as usize {
            let work = Work::Lock {
                member: k,
                cs_ns: us_to_ns(self.cs_us).max(1),
                between_ns: us_to_ns(self.between_us).max(1),
                pv: self.lock == LockKind::Pv,
                phase: LockPhase::Between,
            };
            (b.add)(k, format!("{}.{k}", b.name), work);
        }
        None
    }
}
