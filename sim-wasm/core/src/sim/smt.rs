//! SMT: the hardware threads of one core share its execution units. A thread whose sibling also runs a vCPU
//! progresses at `smt_sibling_busy_pm` of its solo speed (the host cost profile). The guest's CPU work (a task's
//! burst) advances at that rate; guest time (slices, vruntime) and the hypervisor's accounting stay wall time, as
//! Xen's and the guest's clocks do not slow down. When a sibling starts or stops running, the other threads'
//! running bursts are re-timed: the work done so far is charged at the old rate, the rest is timed at the new one.
//! Kernel work (switches, upcalls, the I/O stacks) is not slowed: it is short, and its costs are measured figures.
//!
//! Also what the report says about the cores: the time sibling threads ran vCPUs of different domains at once
//! (`core_shared_ns`) and the time a thread sat idle while its core ran a vCPU on a sibling and a runnable vCPU
//! waited for a pCPU (`forced_idle_ns`: the idle capacity core scheduling forces, since a thread may only take a
//! vCPU of the domain its core runs).
//!
//! With one thread per core nothing here runs, so those hosts behave exactly as before.

use super::*;

/// The host's cores as the engine sees them.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Topology {
    /// Hardware threads per core; 1 = no SMT.
    pub(crate) threads_per_core: usize,
}

impl Topology {
    pub(crate) fn smt(&self) -> bool {
        self.threads_per_core > 1
    }

    /// The pCPUs of `p`'s core, `p` included.
    pub(crate) fn core_of(&self, p: usize) -> std::ops::Range<usize> {
        let t = self.threads_per_core.max(1);
        let first = p / t * t;
        first..first + t
    }
}

/// What the report measures of the cores, over the measured window.
#[derive(Debug, Clone, Default)]
pub(crate) struct CoreMetrics {
    /// Sibling threads ran vCPUs of two or more domains at once, summed over cores [ns].
    pub(crate) core_shared_ns: u64,
    /// Thread time idle while a sibling ran a vCPU and a runnable vCPU waited, summed over threads [ns].
    pub(crate) forced_idle_ns: u64,
    /// Wall time of each task's CPU that did no work because a sibling thread was busy [ns].
    pub(crate) lost_ns: Vec<u64>,
    /// Up to when the figures above are counted [ns].
    pub(crate) counted_to: Nanos,
}

impl Simulation {
    /// The speed vCPU `v` runs at now [per mille of a thread alone].
    pub(super) fn smt_rate(&self, v: VcpuId) -> u64 {
        let topo = self.host.topology;
        let Some(p) = self.host.vcpus[v.0].on_pcpu.filter(|_| topo.smt()) else { return 1000 };
        let busy = topo.core_of(p.0).any(|q| q != p.0 && self.host.running[q].is_some());
        if busy {
            u64::from(self.costs.smt_sibling_busy_pm.clamp(1, 1000))
        } else {
            1000
        }
    }

    /// The work `e` ns of wall time on a pCPU does for `v`'s task `t`, which started at `start`, at the current
    /// rate; records what the sibling cost it.
    pub(super) fn smt_work(&mut self, v: VcpuId, t: TaskId, start: Nanos, e: u64) -> u64 {
        let rate = self.smt_rate(v);
        if rate == 1000 {
            return e;
        }
        let work = e * rate / 1000;
        // The part of the interval inside the measured window loses in proportion.
        let (a, b) = (start.max(self.warmup), self.now.min(self.end));
        if b > a && e > 0 {
            let inside = (b - a).0;
            let lost = (e - work) as u128 * inside as u128 / e as u128;
            let m = &mut self.measure.cores;
            if m.lost_ns.len() < self.guests.tasks.len() {
                m.lost_ns.resize(self.guests.tasks.len(), 0);
            }
            m.lost_ns[t.0] += lost as u64;
        }
        work
    }

    /// Wall time `v` needs for `work` ns of its task's work at the current rate (rounded up, so the burst is done
    /// when it fires).
    pub(super) fn smt_wall(&self, v: VcpuId, work: u64) -> u64 {
        let rate = self.smt_rate(v);
        if rate == 1000 {
            work
        } else {
            (work as u128 * 1000).div_ceil(u128::from(rate)) as u64
        }
    }

    /// Wall time until task `t` of `v` ends its burst or its guest slice, whichever comes first.
    pub(super) fn smt_left(&self, v: VcpuId, t: TaskId) -> u64 {
        let task = &self.guests.tasks[t.0];
        match task.burst_left {
            Some(b) => self.smt_wall(v, b).min(task.slice_left),
            None => task.slice_left,
        }
    }

    /// `p` is about to start or stop running a vCPU: its siblings' tasks are charged up to now at the old rate.
    pub(super) fn smt_before_change(&mut self, p: PcpuId) {
        if !self.host.topology.smt() {
            return;
        }
        for q in self.host.topology.core_of(p.0) {
            if let (true, Some(w)) = (q != p.0, self.host.running[q]) {
                self.charge(w);
            }
        }
    }

    /// `p` started or stopped running a vCPU: its siblings' running bursts end at the new rate.
    pub(super) fn smt_after_change(&mut self, p: PcpuId) {
        if !self.host.topology.smt() {
            return;
        }
        for q in self.host.topology.core_of(p.0) {
            let Some(w) = self.host.running[q].filter(|_| q != p.0) else { continue };
            let vc = &self.host.vcpus[w.0];
            let (Some(start), Some(t)) = (vc.exec_start, vc.current) else { continue };
            let at = start + Nanos(self.smt_left(w, t));
            if self.host.vcpus[w.0].guest_timer.arm(at) {
                self.push_guest_timer(w, at);
            }
        }
    }

    /// Counts the core figures for the time since they were last counted up to `to`: the host did not change
    /// in between (every change is an event).
    pub(super) fn smt_count(&mut self, to: Nanos) {
        let topo = self.host.topology;
        if !topo.smt() {
            return;
        }
        let from = self.measure.cores.counted_to;
        self.measure.cores.counted_to = to;
        let (a, b) = (from.max(self.warmup), to.min(self.end));
        if b <= a {
            return;
        }
        let dt = (b - a).0;
        let waiting = self.host.vcpus.iter().any(|v| v.state == VState::Runnable && !v.paused && v.on_pcpu.is_none());
        let (running, vcpu_dom) = (&self.host.running, &self.host.vcpu_dom);
        let t = topo.threads_per_core;
        let (mut shared, mut idle) = (0u64, 0u64);
        for core in 0..running.len() / t {
            let threads = core * t..(core + 1) * t;
            let mut doms = threads.clone().filter_map(|q| running[q].map(|v| vcpu_dom[v.0]));
            if let Some(d) = doms.next() {
                shared += u64::from(doms.any(|e| e != d));
                if waiting {
                    idle += threads.filter(|&q| running[q].is_none()).count() as u64;
                }
            }
        }
        self.measure.cores.core_shared_ns += shared * dt;
        self.measure.cores.forced_idle_ns += idle * dt;
    }

    /// The wall time of task `t`'s CPU in the window that a busy sibling thread took from its work [ns].
    pub(crate) fn smt_lost_ns(&self, t: usize) -> u64 {
        self.measure.cores.lost_ns.get(t).copied().unwrap_or(0)
    }
}

#[cfg(test)]
mod tests {
    use super::Topology;

    #[test]
    fn a_core_is_its_consecutive_threads() {
        let topo = Topology { threads_per_core: 2 };
        assert_eq!(topo.core_of(0), 0..2);
        assert_eq!(topo.core_of(3), 2..4);
        assert!(topo.smt());
        let flat = Topology { threads_per_core: 1 };
        assert_eq!(flat.core_of(5), 5..6);
        assert!(!flat.smt());
    }
}
