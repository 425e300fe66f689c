//! The hybrid scheduling framework of paper 001 (Weng et al., VEE 2009, section 3): high-throughput (HIT) domains
//! are scheduled asynchronously, concurrent (CON) domains are co-scheduled; potential energy (PE) is shared out by
//! weight every L slots and dissipated by running; run queues are sorted by PE.
//!
//! PE is kept in nanoseconds of pCPU time: one slot of running dissipates PE_unit = one slot, so the paper's
//! PE_total = |P| x PE_unit x L is exactly the host's CPU time over the allocation interval. Dissipation is charged
//! exactly (per ns run) rather than sampled at slot ends. At each allocation every vCPU of an active domain gets
//! its domain's weighted portion (water-filled so a domain never gets more than its vCPUs can use), split equally
//! among the domain's vCPUs, as 3.3 says. The paper "resets" PE there; we add the portion to what is left and
//! bound the balance to one interval either way, because a plain reset throws away the PE of a vCPU that its
//! crowded pCPU could not serve in time and starves it for good (seen in the Corollary 1 sweep). A HIT vCPU with
//! less than a slot of PE runs only until it is spent.
//!
//! Slots are per pCPU, as in the paper's Credit-based prototype (`.tick = hsched_tick`, "invoked every clock
//! tick"): each pCPU's slot tick runs on its own clock (see `sim::timing`); the BSP (pCPU 0) allocates PE in every
//! L-th of its ticks, the other pCPUs re-sort their run queues at theirs. HIT vCPUs therefore start and stop on
//! their own pCPU's slot boundaries (asynchronously); only a co-scheduling aligns pCPUs.
//!
//! Scheduling and balancing (3.3, and the skeleton of 4.3), at each slot and whenever a pCPU must choose:
//! 1. a head with PE <= 0 (or no head) makes the pCPU look at the other run queues for the vCPU with the highest
//!    PE, never taking a CON vCPU onto a pCPU whose run queue holds one of its siblings;
//! 2. a CON head with positive PE co-schedules its domain: its pCPU "sends an IPI" (`Ctx::resched`) to every pCPU
//!    holding a runnable sibling, and all of them run the domain until the same slot end (one co-scheduling at a
//!    time, like the paper's global `syn_domain_id`);
//! 3. a HIT head with positive PE runs.
//!
//! CON vCPUs run only inside a co-scheduling, so a CON domain's vCPUs start and stop together. A CON domain may
//! also be co-scheduled with no PE left, but only onto pCPUs that have nothing better to do (work conservation
//! without hurting anyone's entitlement). Caps are not part of the paper's scheduler: `cap_pct` is ignored here.

use super::common::Versions;
use super::params::{self, Params};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, Timers, VcpuSched, WakeCause, MASTER_PCPU};
use crate::model::{DomId, PcpuId, VcpuId};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::scenario::{DomainType, Scenario};
use crate::time::Nanos;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;

/// Shortest slice given to a vCPU with a little PE left [ns].
const MIN_SLICE: Nanos = Nanos::from_us(100);

/// A domain's type as a parameter sets it (the scenario's `type` otherwise): throughput (HIT, asynchronous) or
/// concurrent (CON, co-scheduled).
// No doc comments on the variants: the schema then lists them as one `enum`, which the checks word plainly.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(rename = "hybrid_domain_type")]
pub enum TypeName {
    Throughput,
    Concurrent,
}

impl From<TypeName> for DomainType {
    fn from(t: TypeName) -> DomainType {
        match t {
            TypeName::Throughput => DomainType::Throughput,
            TypeName::Concurrent => DomainType::Concurrent,
        }
    }
}

/// Paper 001's hybrid scheduler (and the strict gang scheduler, which shares its slots and potential energy). A
/// domain's type (HIT/CON) comes from its `type`; a change `domain_type.NAME` switches it at run time (hybrid
/// only).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(extend("patternProperties" = {
    "^domain_type\\..+$": {
        "enum": ["throughput", "concurrent"],
        "description": "Type of the named domain: throughput (HIT, asynchronous) or concurrent (CON, co-scheduled)."
    }
}))]
pub struct HybridParams {
    /// Slot: the scheduling unit and the PE dissipated per slot of running [ms].
    #[schemars(range(min = 1, max = 1000))]
    pub slot_ms: u64,
    /// L: potential energy is shared out by weight every L slots.
    #[schemars(range(min = 1, max = 1000))]
    pub alloc_slots: u64,
    /// Domain types set by parameters, by domain name (they override the scenario's `type`); a file may also
    /// give them as `domain_type.NAME` keys.
    #[serde(skip_serializing_if = "IndexMap::is_empty")]
    pub domain_type: IndexMap<String, TypeName>,
}

impl Default for HybridParams {
    /// Slots of 10 ms (Xen's scheduling tick the paper builds on); L = 3 (Credit's 30 ms accounting period).
    fn default() -> HybridParams {
        HybridParams { slot_ms: 10, alloc_slots: 3, domain_type: IndexMap::new() }
    }
}

impl Params for HybridParams {
    const SCHEDULER: &'static str = "hybrid";
    const DEF: &'static str = "hybrid_params";
}

impl HybridParams {
    /// Reads a file's `params`: `slot_ms`, `alloc_slots`, and `domain_type.NAME` keys or a `domain_type` map.
    pub fn from_value(v: &Value) -> Result<HybridParams, String> {
        params::from_value(v)
    }

    /// Sets one parameter by name: `slot_ms`, `alloc_slots`, or `domain_type.NAME` ("throughput"/"concurrent").
    pub fn set(&mut self, param: &str, v: &Value) -> Result<(), String> {
        params::set(self, param, v)
    }

    pub fn slot(&self) -> Nanos {
        Nanos::from_ms(self.slot_ms)
    }
}

/// Shares `total` PE among domains in proportion to `weights`, each at most its `bound` (water filling in
/// integers: a domain that cannot use its portion keeps its bound and the rest is re-split among the others).
pub(crate) fn share_by_weight(total: i64, weights: &[u32], bounds: &[i64]) -> Vec<i64> {
    let n = weights.len();
    let mut alloc = vec![0i64; n];
    let mut open: Vec<usize> = (0..n).filter(|&i| bounds[i] > 0 && weights[i] > 0).collect();
    let mut left = total;
    while !open.is_empty() && left > 0 {
        let w: i64 = open.iter().map(|&i| i64::from(weights[i])).sum();
        let portion = |i: usize| (i128::from(left) * i128::from(weights[i]) / i128::from(w)) as i64;
        let saturated: Vec<usize> = open.iter().copied().filter(|&i| bounds[i] <= portion(i)).collect();
        if saturated.is_empty() {
            for &i in &open {
                alloc[i] = portion(i);
            }
            break;
        }
        for &i in &saturated {
            alloc[i] = bounds[i];
            left -= bounds[i];
        }
        open.retain(|i| !saturated.contains(i));
    }
    alloc
}

#[derive(Debug, Clone)]
struct HVcpu {
    dom: usize,
    /// Potential energy [ns of pCPU time].
    pe: i64,
    /// The pCPU whose run queue it belongs to (queued, running, or last ran/woke on).
    processor: usize,
    on_runq: bool,
    runnable: bool,
    /// Runnable at some point since the last allocation (its domain takes part in the next one).
    active: bool,
    /// When it started running, while it runs [ns].
    run_start: Option<Nanos>,
    /// Given a pCPU by the initial mapping (counts towards that pCPU's load).
    placed: bool,
}

#[derive(Debug, Clone)]
struct HDom {
    name: String,
    weight: u32,
    vcpus: Vec<VcpuId>,
    con: bool,
}

/// A co-scheduling in progress: the domain and when its slot ends.
#[derive(Debug, Clone, Copy)]
struct Cosched {
    dom: usize,
    until: Nanos,
}

#[derive(Clone)]
pub struct Hybrid {
    params: HybridParams,
    pcpus: usize,
    vcpus: Vec<HVcpu>,
    doms: Vec<HDom>,
    /// Per pCPU: queued vCPUs in decreasing PE (FIFO among equals).
    runq: Vec<Vec<VcpuId>>,
    /// Per pCPU: the sibling it must run for the co-scheduling in progress (the IPI's message).
    forced: Vec<Option<VcpuId>>,
    cosched: Option<Cosched>,
    /// Where the next steal search starts, so no peer is always looked at first.
    balance_bias: usize,
    /// Slot ticks each pCPU has taken (the BSP allocates PE every `alloc_slots` of its own).
    ticks: Vec<u64>,
    versions: Versions,
}

/// Load-time checks of a hybrid (`every_domain` false) or gang (true) policy, number `i` of the scenario.
/// Co-scheduling needs a pCPU per co-scheduled vCPU (paper 001 2.3: |C(V_i)| <= |P|): every domain under `gang`,
/// the concurrent ones (by `type` or `domain_type.NAME`) under `hybrid`; type parameters and changes name domains.
pub fn check_scenario(sc: &Scenario, i: usize, every_domain: bool, p: &mut Vec<String>) {
    let pol = &sc.policies[i];
    // Flat `domain_type.NAME` keys or a `domain_type` map; a value that does not read is reported by the parameter
    // checks.
    let declared = HybridParams::from_value(&pol.params).map(|h| h.domain_type).unwrap_or_default();
    let types: Vec<(&str, TypeName)> = declared.iter().map(|(n, t)| (n.as_str(), *t)).collect();
    for (name, _) in &types {
        if every_domain {
            p.push(format!("policies[{i}].params.domain_type.{name}: gang co-schedules every domain; it has no types"));
        } else if !sc.domains.iter().any(|d| d.name == *name) {
            p.push(format!("policies[{i}].params.domain_type.{name}: no domain '{name}'"));
        }
    }
    for (d, dom) in sc.domains.iter().enumerate() {
        let set = types.iter().find(|(n, _)| *n == dom.name).map(|(_, t)| *t);
        let con = every_domain || set.map_or(dom.kind == DomainType::Concurrent, |t| t == TypeName::Concurrent);
        if con && dom.vcpus > sc.host.pcpus {
            p.push(format!(
                "domains[{d}].vcpus: {} co-scheduled vCPUs under policy '{}' need as many pCPUs (the host has {})",
                dom.vcpus, pol.id, sc.host.pcpus
            ));
        }
    }
    // A domain's type is changed by name (paper 001's `xm sched-pe`): the name must exist.
    for (j, c) in sc.changes.iter().enumerate().filter(|(_, c)| c.policy == pol.id) {
        if let Some(name) = c.param.strip_prefix("domain_type.") {
            if !sc.domains.iter().any(|d| d.name == name) {
                p.push(format!("changes[{j}].param: no domain '{name}' to change the type of"));
            }
        }
    }
}

fn type_name(con: bool) -> &'static str {
    if con {
        "CON"
    } else {
        "HIT"
    }
}

/// A vCPU's domain type as its priority label: co-scheduled (concurrent) or not (high-throughput).
fn type_pri(con: bool) -> Pri {
    Pri::new(PriClass::Other, type_name(con))
}

impl Hybrid {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo], types: &[DomainType]) -> Result<Hybrid, String> {
        let params = HybridParams::from_value(params)?;
        let nv: usize = domains.iter().map(|d| d.vcpus.len()).sum();
        let mut vcpus = vec![
            HVcpu {
                dom: 0,
                pe: 0,
                processor: 0,
                on_runq: false,
                runnable: false,
                active: true,
                run_start: None,
                placed: false
            };
            nv
        ];
        let mut doms = Vec::with_capacity(domains.len());
        for (d, info) in domains.iter().enumerate() {
            for v in &info.vcpus {
                vcpus[v.0].dom = d;
            }
            let con = types.get(d) == Some(&DomainType::Concurrent);
            doms.push(HDom { name: info.name.clone(), weight: info.weight, vcpus: info.vcpus.clone(), con });
        }
        let mut h = Hybrid {
            params: HybridParams { domain_type: IndexMap::new(), ..params.clone() },
            pcpus,
            vcpus,
            doms,
            runq: vec![Vec::new(); pcpus],
            forced: vec![None; pcpus],
            cosched: None,
            balance_bias: 0,
            ticks: vec![0; pcpus],
            versions: Versions::new(pcpus),
        };
        for (name, t) in &params.domain_type {
            h.set_type(name, (*t).into())?;
        }
        for (d, dom) in h.doms.iter().enumerate() {
            if dom.con && dom.vcpus.len() > pcpus {
                return Err(format!(
                    "domains[{d}].type: concurrent domain '{}' has {} vCPUs but the host has {pcpus} pCPUs (co-scheduling needs one pCPU per vCPU)",
                    dom.name,
                    dom.vcpus.len()
                ));
            }
        }
        // The first allocation happens at boot, as if every domain were busy.
        h.allocate();
        Ok(h)
    }

    /// PE of a vCPU [ns] (tests and the run-queue view).
    pub fn pe(&self, v: VcpuId) -> i64 {
        self.vcpus[v.0].pe
    }

    /// Whether a domain is co-scheduled (CON).
    pub fn is_concurrent(&self, d: DomId) -> bool {
        self.doms[d.0].con
    }

    fn touch(&mut self, p: usize) {
        self.versions.touch(PcpuId(p));
    }

    fn con(&self, v: VcpuId) -> bool {
        self.doms[self.vcpus[v.0].dom].con
    }

    fn siblings(&self, v: VcpuId) -> impl Iterator<Item = VcpuId> + '_ {
        self.doms[self.vcpus[v.0].dom].vcpus.iter().copied().filter(move |&s| s != v)
    }

    /// The CON constraint: no sibling of `v` belongs to pCPU `p`'s run queue (queued or running there).
    fn fits(&self, v: VcpuId, p: usize) -> bool {
        !self.con(v) || self.siblings(v).all(|s| self.vcpus[s.0].processor != p)
    }

    /// Physical CPU time allocation (3.3): PE_total = |P| x PE_unit x L shared by weight among active domains.
    fn allocate(&mut self) {
        let interval = self.params.slot().0 as i64 * self.params.alloc_slots as i64;
        let total = interval * self.pcpus as i64;
        let active: Vec<usize> =
            self.doms.iter().map(|d| d.vcpus.iter().filter(|v| self.vcpus[v.0].active).count()).collect();
        let weights: Vec<u32> = self.doms.iter().map(|d| d.weight).collect();
        let bounds: Vec<i64> = active.iter().map(|&n| n as i64 * interval).collect();
        let shares = share_by_weight(total, &weights, &bounds);
        for (d, dom) in self.doms.iter().enumerate() {
            if active[d] == 0 {
                continue;
            }
            let each = shares[d] / active[d] as i64;
            for v in &dom.vcpus {
                let hv = &mut self.vcpus[v.0];
                if hv.active {
                    hv.pe = (hv.pe + each).clamp(-interval, interval);
                }
                hv.active = hv.runnable;
            }
        }
        for p in 0..self.pcpus {
            self.sort_runq(p);
        }
    }

    /// Sorts a run queue by decreasing PE (stable: FIFO among equals).
    fn sort_runq(&mut self, p: usize) {
        let mut q = std::mem::take(&mut self.runq[p]);
        q.sort_by_key(|v| std::cmp::Reverse(self.vcpus[v.0].pe));
        self.runq[p] = q;
        self.touch(p);
    }

    /// PE dissipation: the running vCPU loses the pCPU time it used since it started (or was last charged).
    fn charge(&mut self, v: VcpuId, now: Nanos) {
        let hv = &mut self.vcpus[v.0];
        if let Some(start) = hv.run_start {
            hv.pe -= now.saturating_sub(start).0 as i64;
            hv.run_start = Some(now);
        }
    }

    /// Inserts in decreasing PE, after every queued vCPU with at least as much.
    fn runq_insert(&mut self, p: usize, v: VcpuId) {
        let pe = self.vcpus[v.0].pe;
        let pos = self.runq[p].iter().position(|u| self.vcpus[u.0].pe < pe).unwrap_or(self.runq[p].len());
        self.runq[p].insert(pos, v);
        self.vcpus[v.0].on_runq = true;
        self.vcpus[v.0].processor = p;
        self.touch(p);
    }

    fn runq_remove(&mut self, v: VcpuId) {
        let p = self.vcpus[v.0].processor;
        self.runq[p].retain(|&u| u != v);
        self.vcpus[v.0].on_runq = false;
        self.touch(p);
    }

    fn cosched_active(&self, now: Nanos) -> Option<Cosched> {
        self.cosched.filter(|c| now < c.until)
    }

    /// Ends the co-scheduling in progress; idle pCPUs may have skipped CON work while it ran, so they look again.
    fn end_cosched(&mut self, ctx: &mut Ctx) {
        if self.cosched.take().is_some() {
            self.forced.iter_mut().for_each(|f| *f = None);
            for q in 0..self.pcpus {
                if ctx.host.running[q].is_none() {
                    ctx.resched(PcpuId(q));
                }
            }
        }
    }

    /// Whether `v` (queued) may be chosen now: HIT always; CON only by starting a co-scheduling (none in
    /// progress), with positive PE, or without PE if no pCPU it would take has anything with more PE to run.
    fn eligible(&self, v: VcpuId, ctx: &Ctx) -> bool {
        if !self.con(v) {
            return true;
        }
        if self.cosched_active(ctx.now).is_some() {
            return false;
        }
        if self.vcpus[v.0].pe > 0 {
            return true;
        }
        let dom = self.vcpus[v.0].dom;
        // Every pCPU the co-scheduling would take, its own included, must have nothing with more PE to run.
        let bar = self.vcpus[v.0].pe;
        let lower = |u: &VcpuId| self.vcpus[u.0].dom == dom || self.vcpus[u.0].pe <= bar;
        self.doms[dom].vcpus.iter().filter(|s| self.vcpus[s.0].runnable).all(|s| {
            let q = self.vcpus[s.0].processor;
            ctx.host.running[q].is_none_or(|u| lower(&u)) && self.runq[q].iter().all(lower)
        })
    }

    /// Rule 1: the highest-PE eligible vCPU at the head of another pCPU's run queue that may move to `p`.
    fn steal(&self, p: usize, ctx: &Ctx) -> Option<VcpuId> {
        let mut best: Option<VcpuId> = None;
        for k in 0..self.pcpus {
            let q = (self.balance_bias + k) % self.pcpus;
            if q == p {
                continue;
            }
            let cand = self.runq[q].iter().copied().find(|&u| self.eligible(u, ctx));
            if let Some(u) = cand.filter(|&u| self.fits(u, p)) {
                if best.is_none_or(|b| self.vcpus[u.0].pe > self.vcpus[b.0].pe) {
                    best = Some(u);
                }
            }
        }
        best
    }

    /// The eligible CON vCPU with the most PE at the head of its kind in any run queue (None while a
    /// co-scheduling is in progress).
    fn best_con(&self, ctx: &Ctx) -> Option<VcpuId> {
        let mut best: Option<VcpuId> = None;
        for q in 0..self.pcpus {
            let cand = self.runq[q].iter().copied().find(|&u| self.con(u) && self.eligible(u, ctx));
            if let Some(u) = cand {
                if best.is_none_or(|b| self.vcpus[u.0].pe > self.vcpus[b.0].pe) {
                    best = Some(u);
                }
            }
        }
        best
    }

    /// Rule 2: `v` leads a co-scheduling of its domain; every pCPU holding a runnable sibling gets an IPI.
    fn start_cosched(&mut self, p: usize, v: VcpuId, ctx: &mut Ctx) {
        let dom = self.vcpus[v.0].dom;
        let until = ctx.now + self.params.slot();
        self.cosched = Some(Cosched { dom, until });
        let sibs: Vec<VcpuId> = self.siblings(v).filter(|s| self.vcpus[s.0].runnable).collect();
        for s in sibs {
            let q = self.vcpus[s.0].processor;
            debug_assert_ne!(q, p, "CON siblings never share a run queue");
            self.forced[q] = Some(s);
            ctx.resched(PcpuId(q));
        }
        let name = self.doms[dom].name.clone();
        ctx.note(PcpuId(p), |w| write!(w, "co-scheduling {name}: IPI to its siblings' pCPUs"));
    }

    /// Least-loaded pCPU (fewest vCPUs belonging to it) among those `v` may belong to.
    fn least_loaded(&self, v: VcpuId) -> usize {
        let mut load = vec![0usize; self.pcpus];
        for (u, hv) in self.vcpus.iter().enumerate() {
            if u != v.0 && hv.placed {
                load[hv.processor] += 1;
            }
        }
        (0..self.pcpus).filter(|&p| self.fits(v, p)).min_by_key(|&p| (load[p], p)).unwrap_or(0)
    }

    /// Sets a domain's type; turning it CON spreads its vCPUs over distinct run queues (4.4's "adjustment").
    fn set_type(&mut self, name: &str, t: DomainType) -> Result<(), String> {
        let d = self.doms.iter().position(|d| d.name == name).ok_or_else(|| {
            let names: Vec<&str> = self.doms.iter().map(|d| d.name.as_str()).collect();
            format!("domain_type.{name}: no domain '{name}' (domains: {})", names.join(", "))
        })?;
        let con = t == DomainType::Concurrent;
        if con && self.doms[d].vcpus.len() > self.pcpus {
            return Err(format!(
                "domain_type.{name}: '{name}' has {} vCPUs, more than the {} pCPUs co-scheduling needs",
                self.doms[d].vcpus.len(),
                self.pcpus
            ));
        }
        self.doms[d].con = con;
        if con {
            // Running vCPUs keep their pCPU; the others move off any run queue a sibling already holds.
            let mut vs = self.doms[d].vcpus.clone();
            vs.sort_by_key(|v| (self.vcpus[v.0].run_start.is_none(), v.0));
            let mut taken = Vec::new();
            for v in vs {
                let p = self.vcpus[v.0].processor;
                if taken.contains(&p) {
                    let q = (0..self.pcpus).find(|q| !taken.contains(q)).expect("vCPUs <= pCPUs");
                    if self.vcpus[v.0].on_runq {
                        self.runq_remove(v);
                        self.runq_insert(q, v);
                    } else {
                        self.vcpus[v.0].processor = q;
                    }
                    taken.push(q);
                } else {
                    taken.push(p);
                }
            }
        }
        self.versions.touch_all();
        Ok(())
    }

    fn describe(&self, v: VcpuId, ctx: &Ctx) -> String {
        format!("{} ({}, PE {} us)", ctx.name(v), type_name(self.con(v)), self.vcpus[v.0].pe / 1000)
    }

    fn decision(&self, next: Option<VcpuId>, slice: Nanos, ctx: &Ctx, why: impl FnOnce() -> String) -> Pick {
        let reason = if ctx.explain {
            match next {
                Some(n) => format!("runs {}: {}", self.describe(n, ctx), why()),
                None => format!("idle: {}", why()),
            }
        } else {
            String::new()
        };
        Pick { next, slice, reason }
    }
}

impl Policy for Hybrid {
    fn timers(&self) -> Timers {
        // Each pCPU's own slot tick (`hsched_tick`, started together at boot as 3.0.4's tickers); the BSP allocates
        // PE in every L-th of its ticks (see `tick`), so there is no host-wide timer.
        Timers { tick: Some(self.params.slot()), account: None, tick_stops_idle: false, timer_slop: true }
    }

    /// Initial mapping (3.3): the least-loaded pCPU; for a CON domain, one without a sibling.
    fn init_vcpu(&mut self, v: VcpuId, _ctx: &mut Ctx) -> PcpuId {
        let p = self.least_loaded(v);
        self.vcpus[v.0].processor = p;
        self.vcpus[v.0].placed = true;
        PcpuId(p)
    }

    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        self.vcpus[v.0].runnable = true;
        self.vcpus[v.0].active = true;
        let mut p = self.vcpus[v.0].processor;
        if self.cosched_active(ctx.now).is_some_and(|c| c.dom == self.vcpus[v.0].dom) {
            // A sibling woke while its domain is co-scheduled: it joins at once.
            self.runq_insert(p, v);
            self.forced[p] = Some(v);
            ctx.resched(PcpuId(p));
            return;
        }
        if !self.con(v) && ctx.host.running[p].is_some() {
            // A HIT vCPU goes to an idle pCPU if there is one (Credit's wake-up placement).
            if let Some(q) = (0..self.pcpus).find(|&q| ctx.host.running[q].is_none() && self.forced[q].is_none()) {
                p = q;
            }
        }
        self.runq_insert(p, v);
        let preempt = match ctx.host.running[p] {
            None => true,
            // Like Credit's wake-up tickle (the hybrid scheduler is built on it, 4.2): a woken vCPU with more PE
            // than the running one preempts it, unless that one is part of a co-scheduling.
            Some(u) => {
                self.vcpus[v.0].pe > 0
                    && self.vcpus[v.0].pe > self.vcpus[u.0].pe
                    && self.cosched_active(ctx.now).is_none_or(|c| c.dom != self.vcpus[u.0].dom)
            }
        };
        if preempt {
            ctx.resched(PcpuId(p));
        }
        let name = &ctx.host.vcpu_name[v.0];
        ctx.note(PcpuId(p), |w| write!(w, "{name} wakes ({cause}) on pCPU{p}"));
    }

    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        self.charge(v, ctx.now);
        self.vcpus[v.0].runnable = false;
        if self.vcpus[v.0].on_runq {
            self.runq_remove(v);
        }
        let dom = self.vcpus[v.0].dom;
        if self.cosched_active(ctx.now).is_some_and(|c| c.dom == dom) {
            let others_run = ctx.host.running.iter().flatten().any(|&u| u != v && self.vcpus[u.0].dom == dom);
            let others_forced = self.forced.iter().flatten().any(|&u| u != v);
            if !others_run && !others_forced {
                self.end_cosched(ctx);
            }
        }
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now;
        let pi = p.0;
        self.touch(pi);
        if let Some(c) = cur {
            self.charge(c, now);
            self.vcpus[c.0].run_start = None;
            // It may have blocked and got work back before leaving its pCPU (the engine then calls no `wake`).
            self.vcpus[c.0].runnable = cur_runnable;
        }
        if self.cosched.is_some_and(|c| now >= c.until) {
            self.end_cosched(ctx);
        }
        let active = self.cosched_active(now);
        // A co-scheduled vCPU keeps its pCPU until the co-scheduling's slot ends: siblings stop together.
        if let (Some(c), Some(cs)) = (cur, active) {
            if cur_runnable && self.vcpus[c.0].dom == cs.dom {
                self.forced[pi] = None;
                self.vcpus[c.0].run_start = Some(now);
                return self.decision(Some(c), cs.until - now, ctx, || "co-scheduled with its siblings".into());
            }
        }
        if let Some(c) = cur.filter(|_| cur_runnable) {
            self.runq_insert(pi, c);
        }
        // The IPI of a co-scheduling: run the sibling it names.
        if let (Some(f), Some(cs)) = (self.forced[pi].take(), active) {
            if self.vcpus[f.0].runnable && self.vcpus[f.0].on_runq && self.vcpus[f.0].processor == pi {
                self.runq_remove(f);
                self.vcpus[f.0].run_start = Some(now);
                let leader = self.doms[cs.dom].name.clone();
                return self.decision(Some(f), cs.until - now, ctx, || format!("IPI: co-scheduling {leader}"));
            }
        }
        // Co-schedulings go by PE across the host, not by which pCPU happens to decide first at a slot boundary:
        // if a CON vCPU with more PE than our own choice waits anywhere, its domain is co-scheduled now.
        let mine = self.runq[pi].iter().copied().find(|&u| self.eligible(u, ctx));
        if let Some(u) = self.best_con(ctx).filter(|&u| mine.is_none_or(|m| self.vcpus[u.0].pe > self.vcpus[m.0].pe)) {
            if self.vcpus[u.0].processor != pi {
                let q = self.vcpus[u.0].processor;
                self.start_cosched(q, u, ctx);
                self.forced[q] = Some(u);
                ctx.resched(PcpuId(q));
                if let Some(f) = self.forced[pi].take() {
                    self.runq_remove(f);
                    self.vcpus[f.0].run_start = Some(now);
                    let until = self.cosched.map_or(now, |c| c.until);
                    return self.decision(Some(f), until - now, ctx, || "IPI: co-scheduling its domain".into());
                }
            }
        }
        let local = self.runq[pi].iter().copied().find(|&u| self.eligible(u, ctx));
        let local_pe = local.map(|u| self.vcpus[u.0].pe);
        let mut stolen = false;
        let next = if local_pe.is_some_and(|pe| pe > 0) {
            local
        } else {
            // Rule 1: our head has no PE left (or there is none): take the best from another pCPU.
            match self.steal(pi, ctx) {
                Some(u) if local_pe.is_none_or(|pe| self.vcpus[u.0].pe > pe) => {
                    stolen = true;
                    self.balance_bias = (self.balance_bias + 1) % self.pcpus;
                    Some(u)
                }
                _ => local,
            }
        };
        let Some(n) = next else {
            return self.decision(None, self.params.slot(), ctx, || "no eligible vCPU".into());
        };
        let from = self.vcpus[n.0].processor;
        self.runq_remove(n);
        self.vcpus[n.0].processor = pi;
        self.vcpus[n.0].run_start = Some(now);
        if self.con(n) {
            // Rule 2: a CON head co-schedules its whole domain.
            self.start_cosched(pi, n, ctx);
            let until = self.cosched.map_or(now + self.params.slot(), |c| c.until);
            return self.decision(Some(n), until - now, ctx, || {
                if stolen {
                    format!("stolen from pCPU{from}; leads the co-scheduling")
                } else {
                    "head of its run queue; leads the co-scheduling".into()
                }
            });
        }
        // Rule 3 (or a steal under rule 1): an asynchronous HIT vCPU runs for a slot, or only until its PE is
        // spent when it has less, so a pCPU's other vCPUs get their share within the allocation interval.
        let pe = self.vcpus[n.0].pe;
        let slot =
            if pe > 0 { Nanos(self.params.slot().0.min(pe as u64).max(MIN_SLICE.0)) } else { self.params.slot() };
        // Work left queued here may go to an idle pCPU.
        if !self.runq[pi].is_empty() {
            if let Some(q) = (0..self.pcpus).find(|&q| q != pi && ctx.host.running[q].is_none()) {
                ctx.resched(PcpuId(q));
            }
        }
        self.decision(Some(n), slot, ctx, || {
            if stolen {
                format!("stolen from pCPU{from} (highest PE)")
            } else {
                "head of its run queue".into()
            }
        })
    }

    /// A slot boundary of pCPU `p` (3.3, "PE dissipation" and "Scheduling and balancing"): on the BSP every L-th
    /// slot is an allocation event, on the others (and the BSP's other slots) the run queue is re-sorted by PE;
    /// then `p` selects its vCPU for the new slot, unless it runs a member of the co-scheduling in progress, which
    /// keeps its pCPU until the co-scheduling's slot ends. Each pCPU's slots run on its own clock, so HIT vCPUs
    /// are scheduled asynchronously; only a co-scheduling (IPIs from its initiator) makes pCPUs switch together.
    fn tick(&mut self, p: PcpuId, ctx: &mut Ctx) {
        self.ticks[p.0] += 1;
        if p == MASTER_PCPU && self.ticks[p.0].is_multiple_of(self.params.alloc_slots) {
            self.account(ctx);
        } else {
            self.sort_runq(p.0);
        }
        let cosched = self.cosched_active(ctx.now).map(|c| c.dom);
        let in_cosched = ctx.host.running[p.0].is_some_and(|v| Some(self.vcpus[v.0].dom) == cosched);
        if !in_cosched {
            ctx.resched(p);
        }
    }

    fn account(&mut self, ctx: &mut Ctx) {
        // Charge running vCPUs up to now so the old interval's use is not carried into the new one.
        for q in 0..self.pcpus {
            if let Some(v) = ctx.host.running[q] {
                self.charge(v, ctx.now);
                self.vcpus[v.0].active = true;
            }
        }
        self.allocate();
        ctx.note(PcpuId(0), |w| w.write_str("PE allocation by weight"));
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        let mut p = self.params.clone();
        p.set(param, value)?;
        // A type is applied, not kept: the domain's own state carries it.
        for (name, t) in std::mem::take(&mut p.domain_type) {
            self.set_type(&name, t.into())?;
        }
        self.params = p;
        Ok(())
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        VcpuSched { pri: type_pri(self.con(v)), credit: Some(self.vcpus[v.0].pe / 1000) }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        self.runq[p.0].clone()
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }
}

crate::size::no_heap!(HVcpu);
crate::size::heap_size!(HDom { name, vcpus });
crate::size::heap_size!(Hybrid { vcpus, doms, runq, forced, ticks, versions });

/// The hybrid scheduler's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "hybrid",
    caps: Caps::CO_SCHEDULES,
    build: |s| registry::boxed(Hybrid::new(s.params, s.pcpus, s.domains, s.types)),
    check_param: |k, v| HybridParams::default().set(k, v),
    check_scenario: |sc, i, p| check_scenario(sc, i, false, p),
    params: params::declared::<HybridParams>(),
};

#[cfg(test)]
mod tests;
