//! Strict gang scheduling (the VMware-style co-scheduling paper 001 compares against, section 6): every domain's
//! vCPUs run all together or not at all.
//!
//! Time is cut into global slots. At each slot boundary the whole host is re-planned: domains with work, in
//! decreasing potential energy (PE, shared by weight every L slots exactly as in [`super::hybrid`]), each take one
//! pCPU per vCPU while enough pCPUs are left; the pCPUs of an admitted domain are reserved for it for the whole
//! slot, even those of its vCPUs that have nothing to do (strict co-scheduling: no skew, and idle siblings hold
//! their pCPU). A domain is charged PE for every pCPU it holds. A domain that wakes mid-slot is admitted at once
//! if enough unreserved pCPUs are free. Leftover pCPUs stay idle: that is the cost of strictness. Caps are ignored.

use super::common::Versions;
use super::hybrid::{share_by_weight, HybridParams};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, Timers, VcpuSched, WakeCause};
use crate::model::{PcpuId, VcpuId};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::time::Nanos;
use serde_json::Value;
use std::fmt::Write;

#[derive(Debug, Clone)]
struct GDom {
    weight: u32,
    vcpus: Vec<VcpuId>,
    /// Potential energy [ns of pCPU time], shared by the domain's vCPUs.
    pe: i64,
    /// Had work at some point since the last allocation.
    active: bool,
    /// When it was last admitted (ties in PE go to whoever waited longer) [ns].
    last_admitted: Nanos,
}

#[derive(Clone)]
pub struct Gang {
    params: HybridParams,
    pcpus: usize,
    doms: Vec<GDom>,
    vcpu_dom: Vec<usize>,
    runnable: Vec<bool>,
    /// The vCPU each pCPU is reserved for this slot.
    plan: Vec<Option<VcpuId>>,
    /// When each pCPU's reservation began (for charging) [ns].
    held_since: Vec<Nanos>,
    slot_end: Nanos,
    /// The pCPU each vCPU was last planned on.
    last_pcpu: Vec<Option<usize>>,
    /// Slots since the last PE allocation.
    slots: u64,
    versions: Versions,
}

/// Checks a run-time change: the hybrid scheduler's slot parameters; gang has no domain types.
pub fn check_param(param: &str, value: &Value) -> Result<(), String> {
    if param.split('.').next() == Some("domain_type") {
        return Err(format!("{param}: the gang scheduler co-schedules every domain; it has no domain types"));
    }
    HybridParams::default().set(param, value)
}

impl Gang {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Gang, String> {
        let params = HybridParams::from_value(params)?;
        if !params.domain_type.is_empty() {
            return Err("domain_type: the gang scheduler co-schedules every domain; it has no domain types".into());
        }
        let mut vcpu_dom = Vec::new();
        for (d, info) in domains.iter().enumerate() {
            if info.vcpus.len() > pcpus {
                return Err(format!(
                    "domains[{d}].vcpus: '{}' has {} vCPUs but gang scheduling needs one pCPU per vCPU ({pcpus} pCPUs)",
                    info.name,
                    info.vcpus.len()
                ));
            }
            vcpu_dom.extend(info.vcpus.iter().map(|_| d));
        }
        let mut g = Gang {
            params,
            pcpus,
            doms: domains
                .iter()
                .map(|d| GDom {
                    weight: d.weight,
                    vcpus: d.vcpus.clone(),
                    pe: 0,
                    active: true,
                    last_admitted: Nanos::ZERO,
                })
                .collect(),
            runnable: vec![false; vcpu_dom.len()],
            last_pcpu: vec![None; vcpu_dom.len()],
            vcpu_dom,
            plan: vec![None; pcpus],
            held_since: vec![Nanos::ZERO; pcpus],
            slot_end: Nanos::ZERO,
            slots: 0,
            versions: Versions::new(pcpus),
        };
        g.allocate();
        // The first slot starts at boot; domains are admitted as they wake.
        g.slot_end = g.params.slot();
        Ok(g)
    }

    fn allocate(&mut self) {
        let interval = self.params.slot().0 as i64 * self.params.alloc_slots as i64;
        let weights: Vec<u32> = self.doms.iter().map(|d| if d.active { d.weight } else { 0 }).collect();
        let bounds: Vec<i64> = self.doms.iter().map(|d| d.vcpus.len() as i64 * interval).collect();
        let shares = share_by_weight(interval * self.pcpus as i64, &weights, &bounds);
        for (d, dom) in self.doms.iter_mut().enumerate() {
            if dom.active {
                dom.pe = shares[d];
            }
        }
        for d in 0..self.doms.len() {
            self.doms[d].active = self.has_work(d);
        }
    }

    fn has_work(&self, d: usize) -> bool {
        self.doms[d].vcpus.iter().any(|v| self.runnable[v.0])
    }

    fn admitted(&self, d: usize) -> bool {
        self.plan.iter().flatten().any(|v| self.vcpu_dom[v.0] == d)
    }

    /// Charges every held pCPU to its domain up to `now` (a domain pays for the pCPUs it holds, busy or not).
    fn charge_holds(&mut self, now: Nanos) {
        for p in 0..self.pcpus {
            if let Some(v) = self.plan[p] {
                let d = self.vcpu_dom[v.0];
                self.doms[d].pe -= now.saturating_sub(self.held_since[p]).0 as i64;
            }
            self.held_since[p] = now;
        }
    }

    /// Gives `d` one free (unreserved) pCPU per vCPU, if there are enough; a vCPU keeps the pCPU it last held
    /// when that one is free (fewer migrations).
    fn admit(&mut self, d: usize, now: Nanos) -> bool {
        let free: Vec<usize> = (0..self.pcpus).filter(|&p| self.plan[p].is_none()).collect();
        if free.len() < self.doms[d].vcpus.len() {
            return false;
        }
        let vcpus = self.doms[d].vcpus.clone();
        let mut left = Vec::new();
        for &v in &vcpus {
            match self.last_pcpu[v.0].filter(|p| self.plan[*p].is_none()) {
                Some(p) => {
                    self.plan[p] = Some(v);
                    self.held_since[p] = now;
                }
                None => left.push(v),
            }
        }
        for v in left {
            let p = (0..self.pcpus).find(|&p| self.plan[p].is_none()).expect("counted free pCPUs");
            self.plan[p] = Some(v);
            self.held_since[p] = now;
            self.last_pcpu[v.0] = Some(p);
        }
        self.doms[d].last_admitted = now;
        true
    }

    /// A new slot: re-plan the host in decreasing PE.
    fn replan(&mut self, now: Nanos) {
        self.charge_holds(now);
        self.plan.iter_mut().for_each(|x| *x = None);
        let mut order: Vec<usize> = (0..self.doms.len()).filter(|&d| self.has_work(d)).collect();
        order.sort_by_key(|&d| (std::cmp::Reverse(self.doms[d].pe), self.doms[d].last_admitted, d));
        for d in order {
            self.admit(d, now);
        }
        self.slot_end = now + self.params.slot();
        self.versions.touch_all();
    }
}

impl Policy for Gang {
    fn timers(&self) -> Timers {
        // The host-wide timer marks slot boundaries; PE is allocated every L of them.
        Timers { tick: None, account: Some(self.params.slot()), tick_stops_idle: false, timer_slop: true }
    }

    fn init_vcpu(&mut self, v: VcpuId, _ctx: &mut Ctx) -> PcpuId {
        PcpuId(self.doms[self.vcpu_dom[v.0]].vcpus.iter().position(|&u| u == v).unwrap_or(0))
    }

    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        self.runnable[v.0] = true;
        let d = self.vcpu_dom[v.0];
        self.doms[d].active = true;
        if !self.admitted(d) && !self.admit(d, ctx.now) {
            return;
        }
        if let Some(p) = self.plan.iter().position(|&x| x == Some(v)) {
            self.versions.touch(PcpuId(p));
            if ctx.host.running[p].is_none() {
                ctx.resched(PcpuId(p));
            }
            let name = &ctx.host.vcpu_name[v.0];
            ctx.note(PcpuId(p), |w| write!(w, "{name} wakes ({cause}) on its reserved pCPU{p}"));
        }
    }

    fn sleep(&mut self, v: VcpuId, _ctx: &mut Ctx) {
        // Its pCPU stays reserved for it until the slot ends.
        self.runnable[v.0] = false;
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now;
        if let Some(c) = cur {
            // It may have blocked and got work back before leaving its pCPU (the engine then calls no `wake`).
            self.runnable[c.0] = cur_runnable;
        }
        if self.slot_end <= now {
            // Only the slot timer re-plans; a pCPU asked early waits for it (strict slots).
            let slice = self.params.slot();
            return match self.plan[p.0].filter(|v| self.runnable[v.0]) {
                Some(v) => Pick { next: Some(v), slice, reason: String::new() },
                None => Pick { next: None, slice, reason: String::new() },
            };
        }
        let slice = self.slot_end - now;
        // A vCPU moved to this pCPU by the new plan may still be on its old one until that one reschedules (at
        // this same instant); the old one hands it over then.
        let elsewhere = |v: &VcpuId| ctx.host.running.iter().enumerate().any(|(q, r)| q != p.0 && *r == Some(*v));
        let next = self.plan[p.0].filter(|v| self.runnable[v.0] && !elsewhere(v));
        if let Some(c) = cur.filter(|&c| self.plan[p.0] != Some(c)) {
            if let Some(q) = self.plan.iter().position(|&x| x == Some(c)) {
                ctx.resched(PcpuId(q));
            }
        }
        let reason = if ctx.explain {
            match (next, self.plan[p.0]) {
                (Some(v), _) => format!("runs {}: its domain holds the host's pCPUs together this slot", ctx.name(v)),
                (None, Some(v)) => format!("idle: reserved for {} (blocked) until the slot ends", ctx.name(v)),
                (None, None) => "idle: no domain fits in the pCPUs left this slot".into(),
            }
        } else {
            String::new()
        };
        Pick { next, slice, reason }
    }

    fn account(&mut self, ctx: &mut Ctx) {
        self.slots += 1;
        if self.slots >= self.params.alloc_slots {
            self.slots = 0;
            self.charge_holds(ctx.now);
            self.allocate();
        }
        self.replan(ctx.now);
        for p in 0..self.pcpus {
            ctx.resched(PcpuId(p));
        }
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        if param.split('.').next() == Some("domain_type") {
            return Err(format!("{param}: the gang scheduler co-schedules every domain; it has no domain types"));
        }
        self.params.set(param, value)
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let pe = self.doms[self.vcpu_dom[v.0]].pe;
        VcpuSched { pri: Pri::new(PriClass::Other, "GANG"), credit: Some(pe / 1000) }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        // Strict gangs have no per-pCPU queue: show the domains waiting for the next slot on pCPU0.
        if p.0 != 0 {
            return Vec::new();
        }
        (0..self.doms.len())
            .filter(|&d| self.has_work(d) && !self.admitted(d))
            .flat_map(|d| self.doms[d].vcpus.iter().copied().filter(|v| self.runnable[v.0]))
            .collect()
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }
}

crate::size::heap_size!(GDom { vcpus });
crate::size::heap_size!(Gang { doms, vcpu_dom, runnable, plan, held_since, last_pcpu, versions });

/// The gang scheduler's registry row: the hybrid scheduler's parameters, every domain co-scheduled.
pub const ROW: Scheduler = Scheduler {
    name: "gang",
    caps: Caps::CO_SCHEDULES,
    build: |s| registry::boxed(Gang::new(s.params, s.pcpus, s.domains)),
    check_param,
    check_scenario: |sc, i, p| super::hybrid::check_scenario(sc, i, true, p),
    params: super::params::declared::<HybridParams>(),
};

#[cfg(test)]
mod tests {

    use crate::sim::test_support::*;

    use crate::trace::Segment;

    /// Paper 001's co-scheduling guarantees, checked on the trace of the hybrid and gang schedulers: no run queue ever
    /// holds two vCPUs of a CON domain (so two siblings never time-share a pCPU), and a CON domain's vCPUs start and
    /// stop together (every stretch one of them runs is run by all of them, on distinct pCPUs, over the same times).
    #[test]
    fn con_domains_are_co_scheduled() {
        for scheduler in ["hybrid", "gang"] {
            let sc = cosched_scenario(scheduler, true);
            let sim = run(&sc, "p");
            assert_cpu_conserved(&sim);
            assert_no_double_running(&sim);
            let change_at = if scheduler == "hybrid" { 600_000_000 } else { u64::MAX };
            // Gang co-schedules every domain; hybrid the CON ones (and web once it turns CON).
            let con = |d: usize, t: u64| scheduler == "gang" || d < 2 || (d == 2 && t >= change_at);
            for (d, dom) in sc.domains.iter().enumerate() {
                let n = dom.vcpus as usize;
                let mut by_start: std::collections::BTreeMap<u64, Vec<&Segment>> = Default::default();
                for s in sim.trace().segments().iter().filter(|s| sim.host.vcpus[s.vcpu as usize].dom.0 == d) {
                    by_start.entry(s.start).or_default().push(s);
                }
                for (start, segs) in &by_start {
                    // A stretch that began before a type change may run on alone until its slot ends.
                    if !con(d, *start) || (d == 2 && *start < change_at.saturating_add(10_000_000)) {
                        continue;
                    }
                    let mut pcpus: Vec<u32> = segs.iter().map(|s| s.pcpu).collect();
                    pcpus.sort_unstable();
                    pcpus.dedup();
                    assert_eq!(
                        segs.len(),
                        n,
                        "{scheduler}: {} starts {} of {n} vCPUs at {start}",
                        dom.name,
                        segs.len()
                    );
                    assert_eq!(pcpus.len(), n, "{scheduler}: {} siblings share a pCPU at {start}", dom.name);
                    assert!(
                        segs.iter().all(|s| s.end == segs[0].end),
                        "{scheduler}: {} stops apart: {segs:?}",
                        dom.name
                    );
                }
            }
            if scheduler == "hybrid" {
                for p in 0..sim.host.pcpus.len() {
                    for snap in sim.trace().runqueue_history(p) {
                        let mut doms: Vec<usize> = snap
                            .queued
                            .iter()
                            .chain(snap.running.iter())
                            .map(|e| sim.host.vcpus[e.vcpu as usize].dom.0)
                            .filter(|&d| con(d, snap.t_ns))
                            .collect();
                        doms.sort_unstable();
                        let n = doms.len();
                        doms.dedup();
                        assert_eq!(doms.len(), n, "pCPU{p} holds two vCPUs of a CON domain at {}: {snap:?}", snap.t_ns);
                    }
                }
            }
        }
    }
}
