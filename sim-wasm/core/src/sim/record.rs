//! What the trace records besides segments and decisions: run-queue snapshots (only when a pCPU's queue may
//! have changed) and the belief changes and partial-boost marks the policy leaves after each hook.

use super::*;

/// The trace and the bookkeeping that keeps it small.
pub(super) struct Recording {
    pub(super) trace: Trace,
    /// Whether the trace is recorded (see [`SimOptions::trace`]).
    pub(super) on: bool,
    /// A policy hook ran since the last run-queue snapshot.
    pub(super) rq_dirty: bool,
    /// The run-queue version each pCPU was last snapshotted at (`u64::MAX` before its first snapshot).
    pub(super) rq_seen: Vec<u64>,
    /// Reused to build each run-queue snapshot (the trace copies it only when it changed).
    pub(super) rq_scratch: Vec<RqEntry>,
    /// Reused for the policy's belief changes and partial-boost marks after each hook.
    pub(super) belief_buf: Vec<(TaskId, i64)>,
    pub(super) boost_buf: Vec<(VcpuId, policy::BoostMark)>,
    /// Scheduling decisions made (`do_schedule` calls and scenario changes), recorded or not.
    pub(super) decisions_made: u64,
    /// A replay run's beliefs and partial boosts over the whole run (its trace records neither).
    pub(super) inference: Option<InferenceBuckets>,
}

impl Recording {
    pub(super) fn new(trace: Trace, on: bool, pcpus: usize) -> Recording {
        Recording {
            trace,
            on,
            rq_dirty: true,
            rq_seen: vec![u64::MAX; pcpus],
            rq_scratch: Vec::new(),
            belief_buf: Vec::new(),
            boost_buf: Vec::new(),
            decisions_made: 0,
            inference: None,
        }
    }
}

impl Simulation {
    /// Records the belief changes and partial-boost marks a hook left (rare next to hooks: kept off the hot path).
    #[inline(never)]
    pub(super) fn take_marks(&mut self) {
        let (mut beliefs, mut boosts) =
            (std::mem::take(&mut self.rec.belief_buf), std::mem::take(&mut self.rec.boost_buf));
        let t_ns = self.now.0;
        for &(t, b) in &beliefs {
            let rec = BeliefRec { t_ns, task: t.0 as u32, belief: b };
            if self.rec.on {
                self.rec.trace.push_belief(rec);
            }
            if let Some(o) = self.rec.inference.as_mut() {
                o.belief(rec);
            }
            self.note_inferred(t);
        }
        for &(v, kind) in &boosts {
            let rec = BoostRec { t_ns, vcpu: v.0 as u32, kind: kind.as_str() };
            if self.rec.on {
                self.rec.trace.push_boost(rec);
            }
            if let Some(o) = self.rec.inference.as_mut() {
                o.boost(rec);
            }
        }
        beliefs.clear();
        boosts.clear();
        (self.rec.belief_buf, self.rec.boost_buf) = (beliefs, boosts);
    }

    /// Records each pCPU's run queue if it changed (the UI's run-queue view and credit/priority history).
    pub(super) fn snapshot_runqueues(&mut self) {
        if !self.rec.on || !self.rec.rq_dirty {
            return;
        }
        self.rec.rq_dirty = false;
        let versions = self.policy.runqueue_versions();
        let pcpus = versions.iter().zip(&self.host.running).zip(self.rec.rq_seen.iter_mut()).enumerate();
        for (p, ((&ver, running), seen)) in pcpus {
            // Who runs here is part of the snapshot too; the policy's version covers its own state.
            let version = ver ^ (running.map_or(0, |v| v.0 as u64 + 1) << 48);
            if *seen == version {
                continue;
            }
            *seen = version;
            let policy = &self.policy;
            let entry = |v: VcpuId| {
                let s = policy.vcpu_sched(v);
                RqEntry { vcpu: v.0 as u32, pri: s.pri.label, class: s.pri.class, credit: s.credit }
            };
            let running = running.map(entry);
            self.rec.rq_scratch.clear();
            self.rec.rq_scratch.extend(policy.runqueue(PcpuId(p)).into_iter().map(entry));
            self.rec.trace.push_runqueue(p, self.now.0, running, &self.rec.rq_scratch);
        }
    }
}
