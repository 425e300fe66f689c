//! Xen's null scheduler (`xen/common/sched/null.c`, Xen 4.10 and later), for static partitioning: each pCPU runs
//! either nothing or always the same vCPU.
//!
//! When the host boots each vCPU is assigned to a pCPU of its own if one is free, its initial pCPU first, else
//! the first free one (`pick_res`, `unit_assign`); the vCPUs left over wait, in creation order, on one wait queue
//! (`null_unit_insert`). A pCPU runs its assigned vCPU whenever that vCPU is runnable and idles otherwise
//! (`null_schedule`); it never takes another domain's vCPU while its own sleeps, and an assigned vCPU never moves.
//! A waiting vCPU is assigned only when a pCPU is left without one (`unit_deassign` on removal or migration, or a
//! free pCPU's `null_schedule` scanning the wait queue). Nothing in a scenario removes a vCPU or a pCPU, so here
//! the wait queue is served only by pCPUs that had no vCPU at boot: a vCPU beyond the pCPU count never runs, as
//! Xen's "not assigned to any CPU" warning says. There are no time slices, weights or caps.

use super::common::Versions;
use super::params::{self, Params};
use super::registry::{self, Caps, Scheduler};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, ShareBasis, Timers, VcpuSched, WakeCause};
use crate::model::{DomId, PcpuId, VcpuId};
use crate::time::Nanos;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;

/// How long a decision holds when nothing else reschedules the pCPU: null sets no timer (`next_time = -1`), so
/// this only bounds the time between decisions in the log [ns].
const NO_TIMER: Nanos = Nanos(1_000_000_000);

/// Xen's null scheduler has no parameters.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct NullParams {
    /// Scheduling granularity (Xen's `sched-gran`, 4.13+): "cpu" schedules each hardware thread on its own; "core"
    /// (or "socket") makes all threads of a core (socket) one unit that only runs vCPUs of one domain at a time,
    /// leaving threads idle when that domain has too few runnable vCPUs. Needs host.threads_per_core above 1 to
    /// matter. Fixed at boot.
    #[serde(skip_serializing_if = "super::gran::Gran::is_cpu")]
    pub sched_gran: super::gran::Gran,
}

impl Params for NullParams {
    const SCHEDULER: &'static str = "null";
    const DEF: &'static str = "null_params";
    const FIXED: &'static [&'static str] = &["sched_gran"];
}

#[derive(Clone)]
pub struct Null {
    /// The vCPU assigned to each pCPU (`null_pcpu.unit`).
    assigned: Vec<Option<VcpuId>>,
    /// vCPUs assigned to no pCPU, in the order they queued (`null_private.waitq`).
    waitq: Vec<VcpuId>,
    /// Each vCPU's pCPU: where it is assigned, or where it would start.
    processor: Vec<PcpuId>,
    /// Whether each vCPU has work (woken and not slept since).
    runnable: Vec<bool>,
    dom: Vec<DomId>,
    ndoms: usize,
    versions: Versions,
}

impl Null {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Null, String> {
        params::from_value::<NullParams>(params)?;
        let nv: usize = domains.iter().map(|d| d.vcpus.len()).sum();
        let mut dom = vec![DomId(0); nv];
        for (d, info) in domains.iter().enumerate() {
            for v in &info.vcpus {
                dom[v.0] = DomId(d);
            }
        }
        Ok(Null {
            assigned: vec![None; pcpus],
            waitq: Vec::new(),
            processor: vec![PcpuId(0); nv],
            runnable: vec![false; nv],
            dom,
            ndoms: domains.len(),
            versions: Versions::new(pcpus),
        })
    }

    /// The pCPU a vCPU is assigned to, if any (tests).
    pub fn assigned_to(&self, v: VcpuId) -> Option<PcpuId> {
        self.assigned.iter().position(|&a| a == Some(v)).map(PcpuId)
    }

    /// The vCPUs waiting for a pCPU, in order (tests).
    pub fn waiting(&self) -> &[VcpuId] {
        &self.waitq
    }
}

impl Policy for Null {
    fn timers(&self) -> Timers {
        Timers { timer_slop: true, ..Timers::default() }
    }

    /// `null_unit_insert`: the vCPU's own pCPU if free, else the first free one, else the wait queue.
    fn init_vcpu(&mut self, v: VcpuId, ctx: &mut Ctx) -> PcpuId {
        let own = PcpuId(v.0 % ctx.host.pcpus.max(1));
        let free = if self.assigned[own.0].is_none() {
            Some(own)
        } else {
            self.assigned.iter().position(Option::is_none).map(PcpuId)
        };
        match free {
            Some(p) => {
                self.assigned[p.0] = Some(v);
                self.processor[v.0] = p;
            }
            None => {
                self.waitq.push(v);
                self.processor[v.0] = own;
            }
        }
        self.versions.touch_all();
        self.processor[v.0]
    }

    /// `null_unit_wake`: an assigned vCPU pokes its own pCPU; a waiting one pokes the free pCPUs, if any.
    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        self.runnable[v.0] = true;
        self.versions.touch_all();
        let p = self.processor[v.0];
        if ctx.host.running[p.0] == Some(v) {
            return;
        }
        let name = &ctx.host.vcpu_name[v.0];
        if self.assigned[p.0] == Some(v) {
            ctx.note(p, |w| write!(w, "{name} woke on {cause}: runs on its own pCPU{}", p.0));
            ctx.resched(p);
            return;
        }
        ctx.note(p, |w| write!(w, "{name} woke on {cause}: waits for a free pCPU"));
        for q in 0..self.assigned.len() {
            if self.assigned[q].is_none() {
                ctx.resched(PcpuId(q));
            }
        }
    }

    fn sleep(&mut self, v: VcpuId, _ctx: &mut Ctx) {
        // A running vCPU's pCPU reschedules (the engine does it) and idles; the assignment stays.
        self.runnable[v.0] = false;
        self.versions.touch_all();
    }

    /// `null_schedule`: the assigned vCPU if it can run, else idle; a pCPU with none takes the first waiting vCPU.
    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        if let Some(c) = cur {
            self.runnable[c.0] = cur_runnable;
        }
        let mut how = "its assigned vCPU";
        if self.assigned[p.0].is_none() && !self.waitq.is_empty() {
            let v = self.waitq.remove(0);
            self.assigned[p.0] = Some(v);
            self.processor[v.0] = p;
            how = "assigned from the wait queue";
        }
        self.versions.touch_all();
        let next = self.assigned[p.0].filter(|v| self.runnable[v.0]);
        let reason = if !ctx.explain {
            String::new()
        } else if let Some(n) = next {
            format!("runs {}: {how}", ctx.name(n))
        } else if let Some(a) = self.assigned[p.0] {
            format!("pCPU{} idles: its vCPU {} has no work", p.0, ctx.name(a))
        } else {
            format!("pCPU{} idles: no vCPU is assigned to it", p.0)
        };
        Pick { next, slice: if next.is_some() { NO_TIMER } else { Nanos::ZERO }, reason }
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        params::change(&mut NullParams::default(), param, value)
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let pri = if self.waitq.contains(&v) {
            Pri::new(PriClass::Waiting, "WAITQ")
        } else if self.runnable[v.0] {
            Pri::new(PriClass::Reserved, "ASSIGNED")
        } else {
            Pri::new(PriClass::Blocked, "ASLEEP")
        };
        VcpuSched { pri, credit: None }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        // The wait queue belongs to no pCPU; it is shown under pCPU 0, as other schedulers' global queues are.
        if p.0 == 0 {
            self.waitq.clone()
        } else {
            Vec::new()
        }
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }

    fn share_rule(&self) -> ShareBasis {
        // An assigned vCPU owns its pCPU; a waiting one is entitled to nothing.
        let mut reserved = vec![0.0; self.ndoms];
        for v in self.assigned.iter().flatten() {
            reserved[self.dom[v.0].0] += 1.0;
        }
        ShareBasis::Reserved(reserved)
    }
}

crate::size::heap_size!(Null { assigned, waitq, processor, runnable, dom, versions });

/// The null scheduler's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "null",
    caps: Caps::PLAIN,
    build: |s| super::gran::wrap(s, registry::boxed(Null::new(s.params, s.pcpus, s.domains))),
    check_param: |k, v| params::change(&mut NullParams::default(), k, v),
    check_scenario: registry::no_scenario_check,
    params: params::declared::<NullParams>(),
};

#[cfg(test)]
mod tests;
