//! Credit's driver-domain (IDD) extensions of paper 000: priority inheritance (Algorithm 2: a guest's request
//! lifts the driver domain to the guest's priority until it is descheduled) and KeepOnRunQ (4.2: a vCPU preempted
//! by the driver domain goes back to the head of its priority class, not the tail). Both are `idd.*` parameters.

use super::{pri_name, Credit};
use crate::model::{PcpuId, VcpuId};
use crate::policy::Ctx;
use std::fmt::Write;

/// The driver-domain extensions' state: each vCPU's own priority while it runs with an inherited one, and each
/// pCPU's KeepOnRunQ mark.
#[derive(Debug, Clone)]
pub(super) struct IddState {
    /// A driver-domain vCPU's own priority while it runs with an inherited one.
    inherited: Vec<Option<i8>>,
    /// The running vCPU of this pCPU is being preempted by a driver domain (KeepOnRunQ).
    keep_front: Vec<bool>,
}

impl IddState {
    pub(super) fn new(pcpus: usize, nv: usize) -> IddState {
        IddState { inherited: vec![None; nv], keep_front: vec![false; pcpus] }
    }

    /// Whether `v` runs with an inherited priority.
    pub(super) fn inherits(&self, v: VcpuId) -> bool {
        self.inherited[v.0].is_some()
    }

    /// The vCPU running on `p` is being preempted and goes back to the head of its class when requeued.
    pub(super) fn keep_front(&mut self, p: PcpuId) {
        self.keep_front[p.0] = true;
    }

    /// Whether the vCPU leaving `p` is requeued at the head of its class (the mark is cleared).
    pub(super) fn take_keep_front(&mut self, p: PcpuId) -> bool {
        std::mem::take(&mut self.keep_front[p.0])
    }
}

crate::size::heap_size!(IddState { inherited, keep_front });

impl Credit {
    /// Priority inheritance: an event from a guest vCPU to a driver-domain vCPU of lower priority lifts the
    /// driver domain's vCPU to the guest's priority (kept until it is descheduled).
    pub(super) fn inherit_priority(&mut self, from: VcpuId, to: VcpuId, ctx: &mut Ctx) {
        if self.is_driver[from.0] || !self.is_driver[to.0] {
            return;
        }
        let (src, dst) = (self.vcpus[from.0].pri, self.vcpus[to.0].pri);
        if src <= dst {
            return;
        }
        if self.idd.inherited[to.0].is_none() {
            self.idd.inherited[to.0] = Some(dst);
        }
        self.vcpus[to.0].pri = src;
        let p = self.vcpus[to.0].processor;
        self.touch(p);
        if self.vcpus[to.0].on_runq {
            self.runq_remove(to);
            self.runq_insert(p, to);
            self.tickle(to, ctx);
        }
        let (a, b) = (&ctx.host.vcpu_name[to.0], &ctx.host.vcpu_name[from.0]);
        ctx.note(p, |w| write!(w, "{a} inherits {} from {b} (priority inheritance)", pri_name(src)));
    }

    /// A descheduled vCPU gets its own priority back if it ran with an inherited one.
    pub(super) fn end_inheritance(&mut self, v: VcpuId) {
        if let Some(own) = self.idd.inherited[v.0].take() {
            self.vcpus[v.0].pri = own;
        }
    }

    /// KeepOnRunQ: when woken driver-domain vCPU `v` preempts pCPU `p`, the vCPU it preempts will be requeued at
    /// the head of its class.
    pub(super) fn keep_on_runq_if_driver(&mut self, v: VcpuId, p: PcpuId) {
        if self.params.keep_on_runq && self.is_driver[v.0] {
            self.idd.keep_front(p);
        }
    }

    /// KeepOnRunQ: at the head of its priority class instead of the tail.
    pub(super) fn runq_insert_front(&mut self, p: PcpuId, v: VcpuId) {
        let pri = self.vcpus[v.0].pri;
        let q = &self.runq[p.0];
        let pos = q.iter().position(|u| self.vcpus[u.0].pri <= pri).unwrap_or(q.len());
        self.runq[p.0].insert(pos, v);
        self.touch(p);
        self.vcpus[v.0].on_runq = true;
        self.vcpus[v.0].processor = p;
    }
}
