//! Task-aware VM scheduling (paper 000, 3.2-3.4): gray-box inference of I/O-bound guest tasks from the
//! address-space switches the hypervisor sees (Algorithm 1), and partial boosting: its parameters and Credit's
//! hooks that boost a vCPU holding an I/O-bound task when an event for it is pending (with block and portmap
//! correlation, 3.5), and revoke the boost once the guest runs something else.
//!
//! A task switch is positive evidence when the previous task ran no longer than IOthreshold after being scheduled
//! in response to a pending event; negative evidence when it ran longer; otherwise ambiguous. The degree of belief
//! moves by PositiveEv / NegativeEv within a clamp; a task is inferred I/O-bound when it exceeds BelThreshold.
//! Those inference tunables may differ per domain (the paper tracks a Windows guest with a 2 ms IOthreshold beside
//! Linux guests at 0.5 ms, section 5); the partial-boosting ones are the policy's.

use super::{write_partial_boost, Credit, Tickled, MIN_TIMER, PRI_BOOST};
use crate::model::{TaskId, VcpuId};
use crate::policy::{BoostMark, Ctx, DomainInfo, Facts};
use crate::time::Nanos;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// Tunables of Algorithm 1, the inference of I/O-bound tasks (defaults from paper 000, section 5).
#[derive(Debug, Clone, PartialEq)]
pub struct Evidence {
    /// IOthreshold: longest run after an event that still counts as I/O-bound behaviour [ns].
    pub io_threshold: Nanos,
    /// PositiveEv: belief added for a short run after an event [belief units].
    pub positive_ev: i64,
    /// NegativeEv: belief taken for a run longer than IOthreshold [belief units].
    pub negative_ev: i64,
    /// BelThreshold: a task is I/O-bound while its belief is above this [belief units].
    pub bel_threshold: i64,
    /// Clamp of the degree of belief [belief units], so a task's history cannot outweigh its present for long.
    pub belief_min: i64,
    pub belief_max: i64,
}

impl Default for Evidence {
    fn default() -> Evidence {
        Evidence {
            io_threshold: Nanos::from_us(500),
            positive_ev: 5,
            negative_ev: 20,
            bel_threshold: 20,
            belief_min: -100,
            belief_max: 300,
        }
    }
}

impl Evidence {
    /// The tunables as a scenario gives them (times in microseconds, evidence as numbers truncated to whole
    /// belief units).
    fn from_spec(io_threshold_us: f64, positive_ev: f64, negative_ev: f64, bel: f64, min: f64, max: f64) -> Evidence {
        Evidence {
            io_threshold: Nanos((io_threshold_us * 1000.0).round() as u64),
            positive_ev: positive_ev as i64,
            negative_ev: negative_ev as i64,
            bel_threshold: bel as i64,
            belief_min: min as i64,
            belief_max: max as i64,
        }
    }

    /// A copy with a domain's overrides applied; `label` names the domain's entry in errors.
    fn with(&self, label: &str, o: &EvidenceOverrides) -> Result<Evidence, String> {
        let mut e = self.clone();
        let us = |x: f64| Nanos((x * 1000.0).round() as u64);
        if let Some(x) = o.io_threshold_us {
            e.io_threshold = us(x);
        }
        for (field, given) in [
            (&mut e.positive_ev, o.positive_ev),
            (&mut e.negative_ev, o.negative_ev),
            (&mut e.bel_threshold, o.bel_threshold),
            (&mut e.belief_min, o.belief_min),
            (&mut e.belief_max, o.belief_max),
        ] {
            if let Some(x) = given {
                *field = x as i64;
            }
        }
        if e.belief_min > e.belief_max {
            return Err(format!("{label}: belief_min {} is above belief_max {}", e.belief_min, e.belief_max));
        }
        Ok(e)
    }
}

/// Network correlation of partial boosts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Correlation {
    // Boost on any pending event (NC).
    #[default]
    None,
    // Boost only for ports whose packets have been waking I/O-bound tasks (3.5.2).
    Portmap,
}

/// Task-aware VM scheduling (paper 000, 3.2-3.4): infer I/O-bound guest tasks from address-space switches and
/// partially boost a vCPU with a pending event for one. Defaults from the paper.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(inline)]
pub struct TavsSpec {
    /// Fraction of a vCPU's CPU use partial boosting may take; 0 = plain Credit.
    #[schemars(range(min = 0, max = 1))]
    pub pb_ratio: f64,
    /// IOthreshold [us]: a run after an event no longer than this is I/O-bound evidence (2000 for GUI guests).
    /// Per domain in domains.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub io_threshold_us: f64,
    /// PositiveEv: belief added for a run no longer than IOthreshold right after an event (Algorithm 1). Per
    /// domain in domains.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub positive_ev: f64,
    /// NegativeEv: belief taken for a run longer than IOthreshold. Per domain in domains.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub negative_ev: f64,
    /// BelThreshold: a task is I/O-bound when its degree of belief exceeds this. Per domain in domains.
    #[schemars(range(min = -1_000_000, max = 1_000_000))]
    pub bel_threshold: f64,
    /// Lower clamp of the degree of belief. Per domain in domains.
    #[schemars(range(min = -1_000_000, max = 1_000_000))]
    pub belief_min: f64,
    /// Upper clamp of the degree of belief. Per domain in domains.
    #[schemars(range(min = -1_000_000, max = 1_000_000))]
    pub belief_max: f64,
    /// Longest a partial boost lasts [ms].
    #[schemars(range(min = 0, max = 1000))]
    pub max_boost_ms: f64,
    /// Network correlation: none (NC) boosts on any pending event; portmap boosts only for ports whose packets
    /// have been waking I/O-bound tasks (000 3.5.2).
    pub correlation: Correlation,
    /// Hypervisor CPU per observed guest address-space switch, charged to the running vCPU [ns] (5.5's tracking
    /// overhead). 30 ns is about 100 cycles at 3 GHz: a paravirtualized guest's CR3 load already traps to Xen, so
    /// tracking adds only Algorithm 1's bookkeeping; an HVM guest's extra VMEXIT costs 1000+ cycles.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub track_cost_ns: f64,
    /// End a partial boost when the guest, its pending events handled, returns to a task that is not I/O-bound
    /// without a task switch (000 3.4: the boost covers handling the event). false = only a task switch or the 10
    /// ms cap ends it (an ablation).
    pub revoke_on_resume: bool,
    /// The vCPU a partial boost preempts is requeued at the head of its priority class, not the tail, so a short
    /// burst of event handling does not cost it its turn (KeepOnRunQ's rule, 000 4.2, applied to the partial
    /// boost's preemption; the paper does not say where that vCPU goes). Without it a driver domain preempted
    /// mid-pass by the boost it caused waits behind every CPU-bound slice. false = Credit's requeue at the tail
    /// (an ablation).
    pub preempted_keeps_place: bool,
    /// Bits of each port's saturating counter (implies correlation portmap).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32", range(min = 1, max = 8), extend("default" = 2))]
    pub portmap_bits: Option<u32>,
    /// Block correlation (000 3.5.1): a block request is marked I/O-bound when one of the last N tasks scheduled
    /// on the vCPU before the request reached the driver is I/O-bound, and only a marked request's completion
    /// partially boosts; 0 = no block correlation (NC).
    #[schemars(range(min = 0, max = 64))]
    pub inspection_window: u32,
    /// Per-domain inference tunables by domain name (paper 000 tracks a Windows guest with a 2 ms IOthreshold
    /// beside Linux guests at 0.5 ms). Each entry overrides only the keys it gives; the keys above are the default
    /// for every domain. A change may set one with the param tavs.domains.NAME.KEY.
    pub domains: IndexMap<String, EvidenceOverrides>,
}

/// One domain's inference tunables; a key left out keeps the policy-wide value.
// The ranges are the policy-wide keys' (a test keeps them equal).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(inline)]
pub struct EvidenceOverrides {
    /// IOthreshold [us]: a run after an event no longer than this is I/O-bound evidence (2000 for GUI guests).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0, max = 1_000_000))]
    pub io_threshold_us: Option<f64>,
    /// PositiveEv: belief added for a run no longer than IOthreshold right after an event (Algorithm 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0, max = 1_000_000))]
    pub positive_ev: Option<f64>,
    /// NegativeEv: belief taken for a run longer than IOthreshold.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0, max = 1_000_000))]
    pub negative_ev: Option<f64>,
    /// BelThreshold: a task is I/O-bound when its degree of belief exceeds this.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = -1_000_000, max = 1_000_000))]
    pub bel_threshold: Option<f64>,
    /// Lower clamp of the degree of belief.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = -1_000_000, max = 1_000_000))]
    pub belief_min: Option<f64>,
    /// Upper clamp of the degree of belief.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = -1_000_000, max = 1_000_000))]
    pub belief_max: Option<f64>,
}

impl Default for TavsSpec {
    fn default() -> TavsSpec {
        TavsSpec {
            pb_ratio: 0.125,
            io_threshold_us: 500.0,
            positive_ev: 5.0,
            negative_ev: 20.0,
            bel_threshold: 20.0,
            belief_min: -100.0,
            belief_max: 300.0,
            max_boost_ms: 10.0,
            correlation: Correlation::None,
            track_cost_ns: 30.0,
            revoke_on_resume: true,
            preempted_keeps_place: true,
            portmap_bits: None,
            inspection_window: 0,
            domains: IndexMap::new(),
        }
    }
}

impl TavsSpec {
    /// The tunables the policy runs with; checks the belief clamps, policy-wide and per domain.
    pub fn resolve(&self) -> Result<TavsParams, String> {
        let evidence = Evidence::from_spec(
            self.io_threshold_us,
            self.positive_ev,
            self.negative_ev,
            self.bel_threshold,
            self.belief_min,
            self.belief_max,
        );
        if evidence.belief_min > evidence.belief_max {
            return Err(format!(
                "tavs: belief_min {} is above belief_max {}",
                evidence.belief_min, evidence.belief_max
            ));
        }
        for (name, o) in &self.domains {
            evidence.with(&format!("tavs.domains.{name}"), o)?;
        }
        // Counter bits given imply portmap correlation (the schema says so); portmap alone uses 2-bit counters.
        let portmap_bits = match (self.correlation, self.portmap_bits) {
            (_, Some(b)) => Some(b),
            (Correlation::Portmap, None) => Some(2),
            (Correlation::None, None) => None,
        };
        Ok(TavsParams {
            pb_ratio: self.pb_ratio,
            evidence,
            domains: self.domains.clone(),
            max_boost: Nanos((self.max_boost_ms * 1e6).round() as u64),
            portmap_bits,
            inspection_window: self.inspection_window as usize,
            track_cost: Nanos(self.track_cost_ns.round() as u64),
            revoke_on_resume: self.revoke_on_resume,
            preempted_keeps_place: self.preempted_keeps_place,
        })
    }
}

/// Tunables of task-aware scheduling as the policy runs with them (declared, with their defaults, by [`TavsSpec`]).
#[derive(Debug, Clone, PartialEq)]
pub struct TavsParams {
    /// Fraction of a vCPU's CPU use that partial boosting may take (0 = plain Credit).
    pub pb_ratio: f64,
    /// Inference tunables of every domain `domains` does not override.
    pub evidence: Evidence,
    /// Per-domain overrides of `evidence`, by domain name, as given (`tavs.domains.NAME.KEY`); only the keys given
    /// are overridden, so a later change of the policy-wide value still reaches the others.
    pub domains: IndexMap<String, EvidenceOverrides>,
    /// Longest a partial boost may last [ns] (a tick).
    pub max_boost: Nanos,
    /// Network correlation: `None` boosts on any pending event (NC); `Some(n)` keeps an n-bit saturating
    /// counter per destination port and boosts only when its top bit is set (portmap, 3.5.2).
    pub portmap_bits: Option<u32>,
    /// Block correlation: how many recently scheduled tasks of the vCPU a block request is attributed to
    /// (inspection window, 3.5.1); 0 = none (a pending completion boosts like any event).
    pub inspection_window: usize,
    /// Hypervisor CPU per observed guest address-space switch, charged to the running vCPU [ns]. Default 30 ns:
    /// about 100 cycles at the paper's 3 GHz, since a paravirtualized guest's CR3 load already traps to Xen to have
    /// the new page-table base validated and tracking only adds Algorithm 1's bookkeeping (a TSC read, a few loads
    /// and stores on the task's record). An HVM guest's extra VMEXIT would cost ~1000+ cycles (3.2).
    pub track_cost: Nanos,
    /// Revoke a partial boost when the guest, its events handled, returns to a task that is not I/O-bound without
    /// a switch (000 3.4: the boost lasts while the vCPU handles the pending event). Off = only a task switch or
    /// the cap ends it (an ablation).
    pub revoke_on_resume: bool,
    /// The vCPU a partial boost preempts goes back to the head of its priority class, not the tail, so a short
    /// burst of event handling does not cost it its turn. Paper 000 says where the revoked vCPU goes (by its
    /// priority, 3.4) but not where the one it preempted goes; this is KeepOnRunQ's rule (4.2: a vCPU preempted
    /// by the I/O path keeps its place) applied to the other preemption the I/O path makes. Without it a driver
    /// domain caught mid-pass by the boost it just caused queues behind every CPU-bound vCPU's slice and is not
    /// boosted again while it waits (it never blocks). Off = Credit's requeue at the tail (an ablation).
    pub preempted_keeps_place: bool,
}

impl TavsParams {
    /// The inference tunables of each vCPU: its domain's overrides over the policy-wide ones.
    pub fn per_vcpu(&self, domains: &[DomainInfo]) -> Result<Vec<Evidence>, String> {
        let mut out = vec![self.evidence.clone(); domains.iter().map(|d| d.vcpus.len()).sum()];
        for (name, o) in &self.domains {
            let d = domains
                .iter()
                .find(|d| &d.name == name)
                .ok_or_else(|| format!("tavs.domains.{name}: no domain named '{name}'"))?;
            let e = self.evidence.with(&format!("tavs.domains.{name}"), o)?;
            for v in &d.vcpus {
                out[v.0] = e.clone();
            }
        }
        Ok(out)
    }
}

#[derive(Debug, Clone, Default)]
struct TaskInf {
    /// The vCPU the task last ran on: its domain's tunables judge it.
    vcpu: Option<usize>,
    belief: i64,
    first_scheduled: bool,
    after_event: bool,
    last_scheduled: Nanos,
}

/// The longest inspection window kept per vCPU [tasks] (the parameter's maximum).
const RECENT_KEPT: usize = 64;

/// What the hypervisor has inferred about guest tasks.
#[derive(Debug, Clone, Default)]
pub struct Inference {
    /// Each vCPU's inference tunables (its domain's), and those of tasks not seen yet.
    ev: Vec<Evidence>,
    fallback: Evidence,
    tasks: Vec<TaskInf>,
    /// The task whose address space each vCPU has loaded.
    current: Vec<Option<TaskId>>,
    /// Tasks seen on each vCPU.
    seen: Vec<Vec<TaskId>>,
    /// The tasks most recently scheduled on each vCPU, newest last (the block inspection window).
    recent: Vec<std::collections::VecDeque<TaskId>>,
    /// Belief changes not yet handed to the trace.
    changes: Vec<(TaskId, i64)>,
}

impl Inference {
    /// An inference over vCPUs judged by `ev` (one entry per vCPU); `fallback` for tasks never seen running.
    pub fn new(ev: Vec<Evidence>, fallback: Evidence) -> Inference {
        let nvcpus = ev.len();
        Inference {
            ev,
            fallback,
            current: vec![None; nvcpus],
            seen: vec![Vec::new(); nvcpus],
            recent: vec![Default::default(); nvcpus],
            ..Inference::default()
        }
    }

    /// New tunables (a scenario change); beliefs so far are kept, as the paper's on-the-fly IOthreshold change.
    pub fn set_evidence(&mut self, ev: Vec<Evidence>, fallback: Evidence) {
        self.ev = ev;
        self.fallback = fallback;
    }

    fn evidence_of(&self, t: TaskId) -> &Evidence {
        match self.tasks.get(t.0).and_then(|x| x.vcpu) {
            Some(v) => &self.ev[v],
            None => &self.fallback,
        }
    }

    fn task(&mut self, t: TaskId) -> &mut TaskInf {
        if self.tasks.len() <= t.0 {
            self.tasks.resize(t.0 + 1, TaskInf::default());
        }
        &mut self.tasks[t.0]
    }

    /// Algorithm 1, VCPUSchedule: the vCPU's current task starts a fresh observation.
    pub fn vcpu_scheduled(&mut self, v: VcpuId, had_pending_event: bool, now: Nanos) {
        if let Some(t) = self.current[v.0] {
            let ti = self.task(t);
            ti.last_scheduled = now;
            ti.first_scheduled = true;
            ti.after_event = had_pending_event;
        }
    }

    /// Algorithm 1, TaskSwitch: classify the observation of `prev` and start observing `next`.
    pub fn task_switch(&mut self, v: VcpuId, prev: Option<TaskId>, next: Option<TaskId>, now: Nanos) {
        self.current[v.0] = next;
        let p = self.ev[v.0].clone();
        if let Some(n) = next {
            if !self.seen[v.0].contains(&n) {
                self.seen[v.0].push(n);
            }
            let recent = &mut self.recent[v.0];
            recent.retain(|&t| t != n);
            recent.push_back(n);
            if recent.len() > RECENT_KEPT {
                recent.pop_front();
            }
        }
        // Whether the next task runs in the wake of a pending event (positive evidence passes it on).
        let mut next_after_event = false;
        if let Some(t) = prev {
            self.task(t).vcpu = Some(v.0);
            let ti = self.task(t).clone();
            let run_time = now.saturating_sub(ti.last_scheduled);
            let mut delta = 0;
            if run_time <= p.io_threshold {
                if ti.first_scheduled {
                    // Ambiguity: likely cut short by the task the event woke; that task inherits the event.
                    next_after_event = ti.after_event;
                } else if ti.after_event {
                    delta = p.positive_ev;
                    next_after_event = true;
                }
            } else {
                delta = -p.negative_ev;
            }
            if delta != 0 {
                let b = (ti.belief + delta).clamp(p.belief_min, p.belief_max);
                if b != ti.belief {
                    self.task(t).belief = b;
                    self.changes.push((t, b));
                }
            }
        }
        if let Some(n) = next {
            let ni = self.task(n);
            ni.vcpu = Some(v.0);
            ni.first_scheduled = false;
            ni.last_scheduled = now;
            ni.after_event = next_after_event;
        }
    }

    pub fn belief(&self, t: TaskId) -> i64 {
        self.tasks.get(t.0).map_or(0, |x| x.belief)
    }

    /// Whether `t`'s belief is above its domain's BelThreshold.
    pub fn is_io_bound(&self, t: TaskId) -> bool {
        self.belief(t) > self.evidence_of(t).bel_threshold
    }

    /// Whether any task seen on `v` is inferred I/O-bound.
    pub fn has_io_bound_task(&self, v: VcpuId) -> bool {
        self.seen[v.0].iter().any(|&t| self.is_io_bound(t))
    }

    /// Block correlation (3.5.1): whether one of the last `window` tasks scheduled on `v` is I/O-bound.
    pub fn window_has_io_bound(&self, v: VcpuId, window: usize) -> bool {
        self.recent[v.0].iter().rev().take(window).any(|&t| self.is_io_bound(t))
    }

    pub fn current(&self, v: VcpuId) -> Option<TaskId> {
        self.current[v.0]
    }

    /// Moves the belief changes since the last call to the end of `out`.
    pub fn drain_changes(&mut self, out: &mut Vec<(TaskId, i64)>) {
        if !self.changes.is_empty() {
            out.append(&mut self.changes);
        }
    }
}

/// Network correlation (000 3.5.2): per (domain, destination port), an n-bit saturating counter of whether
/// packets to that port woke an I/O-bound task.
#[derive(Debug, Clone, Default)]
pub struct Portmap {
    counters: std::collections::BTreeMap<(usize, u16), u32>,
}

impl Portmap {
    /// Whether a packet to `port` in domain `dom` is predicted to be for an I/O-bound task (top bit set).
    pub fn predicts_io(&self, bits: u32, dom: usize, port: u16) -> bool {
        let c = self.counters.get(&(dom, port)).copied().unwrap_or(0);
        c >= 1 << (bits - 1)
    }

    /// Records whether the packet woke an I/O-bound task.
    pub fn update(&mut self, bits: u32, dom: usize, port: u16, woke_io_bound: bool) {
        let max = (1u32 << bits) - 1;
        let c = self.counters.entry((dom, port)).or_insert(0);
        *c = if woke_io_bound { (*c + 1).min(max) } else { c.saturating_sub(1) };
    }
}

/// Task-aware scheduling's per-vCPU state: what is inferred about guest tasks, the events pending for each vCPU,
/// the partial boosts in progress and their accounting, and the correlations' history. Credit keeps one whether
/// or not the extension is on (a change may switch it on mid-run, and PBratio counts CPU from the start).
#[derive(Clone)]
pub(super) struct TavsState {
    inf: Inference,
    pending: Vec<bool>,
    /// A partial boost in progress: when it began and the priority to restore.
    pboost: Vec<Option<(Nanos, i8)>>,
    /// The vCPU queued right behind a partially boosted one when its boost began (`None`: it was last), so
    /// that the boost does not cost it its turn: once revoked it goes back to the place it left.
    pb_place: Vec<Option<VcpuId>>,
    /// CPU each vCPU used in all and while partially boosted [ns].
    cpu_used: Vec<u64>,
    pb_used: Vec<u64>,
    boosts: u64,
    /// Partial boosts during which an I/O-bound task ran (the paper's h = 1), and whether the boost in progress
    /// on each vCPU has already counted as one: PBHR is per boost, however many I/O-bound tasks it runs.
    hits: u64,
    pb_hit: Vec<bool>,
    /// Partial boosts given and revoked since the trace last took them (only while explaining).
    boost_marks: Vec<(VcpuId, BoostMark)>,
    /// Network correlation history, and per vCPU the ports of packets pending since it last ran.
    portmap: Portmap,
    pending_ports: Vec<Vec<u16>>,
    /// Block correlation: each request in flight (by task and issue time) and whether it was marked I/O-bound
    /// when the guest handed it over; and per vCPU, the mark of the completion about to be held pending.
    block_marks: std::collections::BTreeMap<(usize, u64), bool>,
    block_event: Vec<Option<bool>>,
    /// After a vCPU starts running with packets for exactly one port: the port whose counter the next guest
    /// task switch (or the lack of one) will update.
    awaiting: Vec<Option<u16>>,
}

impl TavsState {
    /// The state of `nv` vCPUs, each judged by its entry of `ev`; `fallback` for tasks never seen running.
    pub(super) fn new(ev: Vec<Evidence>, fallback: Evidence, nv: usize) -> TavsState {
        TavsState {
            inf: Inference::new(ev, fallback),
            pending: vec![false; nv],
            pboost: vec![None; nv],
            pb_place: vec![None; nv],
            cpu_used: vec![0; nv],
            pb_used: vec![0; nv],
            boosts: 0,
            hits: 0,
            pb_hit: vec![false; nv],
            boost_marks: Vec::new(),
            portmap: Portmap::default(),
            block_marks: Default::default(),
            block_event: vec![None; nv],
            pending_ports: vec![Vec::new(); nv],
            awaiting: vec![None; nv],
        }
    }

    /// New inference tunables (a scenario change); beliefs so far are kept.
    pub(super) fn set_evidence(&mut self, ev: Vec<Evidence>, fallback: Evidence) {
        self.inf.set_evidence(ev, fallback);
    }

    /// Charges `used` ns of CPU to `v`, and to its partial-boost allowance while it is boosted.
    pub(super) fn charge(&mut self, v: VcpuId, used: u64) {
        self.cpu_used[v.0] += used;
        if self.pboost[v.0].is_some() {
            self.pb_used[v.0] += used;
        }
    }

    /// Whether `v` runs partially boosted.
    pub(super) fn boosted(&self, v: VcpuId) -> bool {
        self.pboost[v.0].is_some()
    }

    /// `t`'s degree of belief and whether it is inferred I/O-bound.
    pub(super) fn belief(&self, t: TaskId) -> (i64, bool) {
        (self.inf.belief(t), self.inf.is_io_bound(t))
    }

    /// Partial boosts given and those during which an I/O-bound task ran.
    pub(super) fn partial_boosts(&self) -> (u64, u64) {
        (self.boosts, self.hits)
    }

    /// Moves the belief changes and boost marks since the last call to the ends of `beliefs` and `boosts`.
    pub(super) fn drain_marks(&mut self, beliefs: &mut Vec<(TaskId, i64)>, boosts: &mut Vec<(VcpuId, BoostMark)>) {
        self.inf.drain_changes(beliefs);
        if !self.boost_marks.is_empty() {
            boosts.append(&mut self.boost_marks);
        }
    }

    /// `v` starts running: Algorithm 1's VCPUSchedule, and the port whose counter its next task switch updates.
    pub(super) fn scheduled(&mut self, v: VcpuId, now: Nanos) {
        let had = std::mem::take(&mut self.pending[v.0]);
        self.inf.vcpu_scheduled(v, had, now);
        // The counter is updated only when a single port's packets arrived (else: ambiguous).
        let ports = std::mem::take(&mut self.pending_ports[v.0]);
        self.awaiting[v.0] = if ports.len() == 1 { Some(ports[0]) } else { None };
    }

    /// The slice of `v` about to run: what is left of its partial boost (at least `MIN_TIMER`), if that is less.
    pub(super) fn boost_slice(&self, v: VcpuId, tp: &TavsParams, now: Nanos, slice: Nanos) -> Nanos {
        match self.pboost[v.0] {
            Some((start, _)) => tp.max_boost.saturating_sub(now.saturating_sub(start)).max(MIN_TIMER).min(slice),
            None => slice,
        }
    }
}

/// Credit's task-aware hooks: partial boosting and the correlations that decide which events boost.
impl Credit {
    /// Block correlation: whether the request the driver domain maps was issued while an I/O-bound task ran.
    pub(super) fn mark_block_request(&mut self, v: VcpuId, task: TaskId, issued_at: Nanos) {
        let Some(tp) = self.params.tavs.as_ref() else { return };
        if tp.inspection_window > 0 {
            let marked = self.tavs.inf.window_has_io_bound(v, tp.inspection_window);
            self.tavs.block_marks.insert((task.0, issued_at.0), marked);
        }
    }

    /// Block correlation: the completion about to be held pending boosts only if its request was marked.
    pub(super) fn mark_block_done(&mut self, v: VcpuId, task: TaskId, issued_at: Nanos, held: bool) {
        let Some(tp) = self.params.tavs.as_ref() else { return };
        // Without block correlation every completion counts as possibly the I/O-bound task's.
        let marked = tp.inspection_window == 0 || self.tavs.block_marks.remove(&(task.0, issued_at.0)).unwrap_or(false);
        self.tavs.block_event[v.0] = held.then_some(marked);
    }

    /// An event for `v` is held pending: boost `v` partially if it has an I/O-bound task the event may be for
    /// (block and portmap correlation, PBratio), so that task runs soon.
    pub(super) fn partial_boost_on_event(&mut self, v: VcpuId, port: Option<u16>, ctx: &mut Ctx) {
        let Some(tp) = self.params.tavs.as_ref() else { return };
        self.tavs.pending[v.0] = true;
        // Block correlation: a completion boosts only if its request was attributed to an I/O-bound task.
        let block = self.tavs.block_event[v.0].take();
        if block == Some(false) {
            return;
        }
        // Only I/O notifications boost: a guest timer, an IPI or the block unplug timer is no I/O event.
        if port.is_none() && block.is_none() && !self.is_driver[v.0] {
            return;
        }
        if let Some(port) = port {
            if !self.tavs.pending_ports[v.0].contains(&port) {
                self.tavs.pending_ports[v.0].push(port);
            }
            // Portmap correlation: boost only if packets to this port have been waking I/O-bound tasks.
            if let Some(bits) = tp.portmap_bits {
                if !self.tavs.portmap.predicts_io(bits, self.vcpus[v.0].dom.0, port) {
                    return;
                }
            }
        }
        let c = &self.vcpus[v.0];
        if !c.on_runq || c.parked || self.tavs.pboost[v.0].is_some() || c.pri == PRI_BOOST {
            return;
        }
        if !self.tavs.inf.has_io_bound_task(v) {
            return;
        }
        // PBratio: partial boosting may take at most this fraction of the vCPU's CPU use.
        if (self.tavs.pb_used[v.0] as f64) >= tp.pb_ratio * self.tavs.cpu_used[v.0] as f64 {
            return;
        }
        let keeps_place = tp.preempted_keeps_place;
        let saved = c.pri;
        let p = self.vcpus[v.0].processor;
        let q = &self.runq[p.0];
        self.tavs.pb_place[v.0] = q.iter().position(|&u| u == v).and_then(|i| q.get(i + 1).copied());
        self.runq_remove(v);
        self.tavs.pboost[v.0] = Some((ctx.now, saved));
        self.tavs.pb_hit[v.0] = false;
        self.vcpus[v.0].pri = PRI_BOOST;
        self.runq_insert(p, v);
        self.tavs.boosts += 1;
        if ctx.keep_marks {
            self.tavs.boost_marks.push((v, BoostMark::Boost));
        }
        let how = self.tickle(v, ctx);
        if keeps_place && matches!(how, Tickled::Preempts(_)) {
            self.idd.keep_front(p);
        }
        // Kept as its facts and worded only if the decision log is read (`write_partial_boost`).
        let how = how.facts();
        ctx.note_facts(p, || Facts {
            write: write_partial_boost,
            args: [v.0 as i64, saved as i64, how[0], how[1], how[2], how[3], 0, 0, 0, 0],
            word: "",
        });
    }

    /// A guest address-space switch: evidence for the inference, the portmap's posterior correlation, and the
    /// end of a partial boost when the guest moves on to a task that is not I/O-bound.
    pub(super) fn observe_task_switch(&mut self, v: VcpuId, prev: Option<TaskId>, next: Option<TaskId>, ctx: &mut Ctx) {
        let Some(tp) = self.params.tavs.as_ref() else { return };
        self.tavs.inf.task_switch(v, prev, next, ctx.now);
        // Posterior correlation: the first task the guest schedules after the packets arrived.
        if let Some(port) = self.tavs.awaiting[v.0].take() {
            if let Some(bits) = tp.portmap_bits {
                let io = next.is_some_and(|t| self.tavs.inf.is_io_bound(t));
                self.tavs.portmap.update(bits, self.vcpus[v.0].dom.0, port, io);
            }
        }
        if self.tavs.pboost[v.0].is_none() {
            return;
        }
        match next {
            Some(t) if self.tavs.inf.is_io_bound(t) => {
                if !std::mem::replace(&mut self.tavs.pb_hit[v.0], true) {
                    self.tavs.hits += 1;
                }
            }
            _ => self.revoke_pboost(v, "scheduled a task that is not I/O-bound", ctx),
        }
    }

    /// The guest handled its events and went back to the task it was running: if that task is not I/O-bound, the
    /// guest has scheduled a task that is not I/O-bound (000 3.4), so the boost ends here rather than letting that
    /// task run boosted up to the 10 ms cap.
    pub(super) fn observe_resume(&mut self, v: VcpuId, task: TaskId, ctx: &mut Ctx) {
        let Some(tp) = self.params.tavs.as_ref() else { return };
        if tp.revoke_on_resume && self.tavs.pboost[v.0].is_some() && !self.tavs.inf.is_io_bound(task) {
            self.revoke_pboost(v, "returned to a task that is not I/O-bound", ctx);
        }
    }

    /// Revokes the CPU from a partially boosted vCPU at once, charging the boosted run to the PBratio allowance
    /// before the boost state is gone.
    fn revoke_pboost(&mut self, v: VcpuId, why: &str, ctx: &mut Ctx) {
        let p = self.vcpus[v.0].processor;
        self.burn(v, ctx.now);
        self.end_pboost(v);
        ctx.resched(p);
        if ctx.keep_marks {
            self.tavs.boost_marks.push((v, BoostMark::Revoke));
        }
        let name = &ctx.host.vcpu_name[v.0];
        ctx.note(p, |w| write!(w, "{name} {why}: partial boost revoked"));
    }

    /// `v` is descheduled: packets delivered in its run that woke no task at all count against their port, and
    /// its partial boost ends. Returns the vCPU it was queued in front of when the boost began (kept if the guest
    /// revoked the boost before this deschedule).
    pub(super) fn tavs_descheduled(&mut self, v: VcpuId) -> Option<VcpuId> {
        if let (Some(port), Some(bits)) =
            (self.tavs.awaiting[v.0].take(), self.params.tavs.as_ref().and_then(|t| t.portmap_bits))
        {
            self.tavs.portmap.update(bits, self.vcpus[v.0].dom.0, port, false);
        }
        self.end_pboost(v);
        self.tavs.pb_place[v.0].take()
    }

    /// Ends a partial boost: the vCPU gets back the priority the credit policy gave it.
    fn end_pboost(&mut self, v: VcpuId) -> bool {
        match self.tavs.pboost[v.0].take() {
            Some((_, saved)) => {
                self.vcpus[v.0].pri = saved;
                let p = self.vcpus[v.0].processor;
                self.touch(p);
                true
            }
            None => false,
        }
    }
}

crate::size::no_heap!(TaskInf, Evidence);
crate::size::heap_size!(Inference { ev, tasks, current, seen, recent, changes });
crate::size::heap_size!(Portmap { counters });
crate::size::heap_size!(TavsState {
    inf,
    pending,
    pboost,
    pb_place,
    cpu_used,
    pb_used,
    pb_hit,
    boost_marks,
    portmap,
    pending_ports,
    block_marks,
    block_event,
    awaiting,
});

#[cfg(test)]
mod tests {
    use super::super::tests::{credit_on, doms, Harness};
    use super::super::PRI_UNDER;
    use super::*;
    use crate::model::PcpuId;
    use crate::policy::{Action, Policy};
    use crate::report::RunOptions;

    use crate::sim::test_support::*;

    use serde_json::json;

    /// Fig. 2 of the paper: after an event, T2 preempts T1 and runs briefly (positive); a long run is negative;
    /// T1's short run before the preemption is ambiguous.
    #[test]
    fn evidence_follows_algorithm_1() {
        let mut inf = Inference::new(vec![Evidence::default()], Evidence::default());
        let v = VcpuId(0);
        let (t1, t2, t4) = (TaskId(1), TaskId(2), TaskId(4));
        inf.task_switch(v, None, Some(t1), Nanos(0));
        inf.vcpu_scheduled(v, true, Nanos::from_ms(100));
        // T2 preempts T1 at once: ambiguity for T1.
        inf.task_switch(v, Some(t1), Some(t2), Nanos::from_ms(100) + Nanos::from_us(10));
        assert_eq!(inf.belief(t1), 0);
        // T2 runs 200 us, below IOthreshold: positive.
        inf.task_switch(v, Some(t2), Some(t4), Nanos::from_ms(100) + Nanos::from_us(210));
        assert_eq!(inf.belief(t2), 5);
        // T4 runs 30 ms: negative.
        inf.task_switch(v, Some(t4), Some(t2), Nanos::from_ms(130) + Nanos::from_us(210));
        assert_eq!(inf.belief(t4), -20);
        // Without a pending event, T2's short run proves nothing.
        inf.task_switch(v, Some(t2), Some(t4), Nanos::from_ms(130) + Nanos::from_us(300));
        assert_eq!(inf.belief(t2), 5);
    }

    #[test]
    fn belief_is_clamped_and_thresholded() {
        let mut inf = Inference::new(vec![Evidence::default()], Evidence::default());
        let v = VcpuId(0);
        let (io, cpu) = (TaskId(0), TaskId(1));
        let mut now = Nanos(0);
        inf.task_switch(v, None, Some(cpu), now);
        for _ in 0..200 {
            inf.vcpu_scheduled(v, true, now);
            now += Nanos::from_us(1);
            inf.task_switch(v, Some(cpu), Some(io), now);
            now += Nanos::from_us(100);
            inf.task_switch(v, Some(io), Some(cpu), now);
            now += Nanos::from_ms(20);
            inf.task_switch(v, Some(cpu), Some(cpu), now);
        }
        assert_eq!(inf.belief(io), 300);
        assert_eq!(inf.belief(cpu), -100);
        assert!(inf.is_io_bound(io) && !inf.is_io_bound(cpu));
        assert!(inf.has_io_bound_task(v));
    }

    /// Fig. 4: a 2-bit counter predicts I/O after two hits and keeps predicting through one miss.
    #[test]
    fn portmap_counter_saturates() {
        let mut m = Portmap::default();
        assert!(!m.predicts_io(2, 0, 7));
        m.update(2, 0, 7, true);
        assert!(!m.predicts_io(2, 0, 7));
        m.update(2, 0, 7, true);
        assert!(m.predicts_io(2, 0, 7));
        m.update(2, 0, 7, true);
        m.update(2, 0, 7, true);
        m.update(2, 0, 7, false);
        assert!(m.predicts_io(2, 0, 7), "one miss does not undo a saturated history");
        m.update(2, 0, 7, false);
        assert!(!m.predicts_io(2, 0, 7));
        assert!(!m.predicts_io(2, 1, 7), "ports are per domain");
        let mut one = Portmap::default();
        one.update(1, 0, 9, true);
        assert!(one.predicts_io(1, 0, 9));
        one.update(1, 0, 9, false);
        assert!(!one.predicts_io(1, 0, 9), "a 1-bit counter forgets at once");
    }

    /// Task-aware tunables as a Credit policy's `tavs` gives them.
    fn tavs(v: serde_json::Value) -> Result<TavsParams, String> {
        super::super::CreditParams::from_value(&serde_json::json!({ "tavs": v })).map(|p| p.tavs.unwrap())
    }

    #[test]
    fn params_are_checked() {
        assert_eq!(
            tavs(serde_json::json!({"pb_ratio": 2})).unwrap_err(),
            "tavs.pb_ratio: expected a number in 0..=1, got 2"
        );
        assert!(tavs(serde_json::json!({"belief_min": 10, "belief_max": 5})).is_err());
        let p = tavs(serde_json::json!({"io_threshold_us": 2000})).unwrap();
        assert_eq!(p.evidence.io_threshold, Nanos::from_ms(2));
        let bad_key = serde_json::json!({"domains": {"d1": {"pb_ratio": 0.5}}});
        assert!(tavs(bad_key).unwrap_err().contains("tavs.domains.d1: unknown parameter 'pb_ratio'"));
        let bad_clamp = serde_json::json!({"belief_max": 50, "domains": {"d1": {"belief_min": 60}}});
        assert_eq!(tavs(bad_clamp).unwrap_err(), "tavs.domains.d1: belief_min 60 is above belief_max 50");
        // Counter bits imply portmap correlation; portmap alone counts with 2 bits.
        assert_eq!(tavs(serde_json::json!({"portmap_bits": 4})).unwrap().portmap_bits, Some(4));
        assert_eq!(tavs(serde_json::json!({"correlation": "portmap"})).unwrap().portmap_bits, Some(2));
        assert_eq!(tavs(serde_json::json!({})).unwrap().portmap_bits, None);
    }

    /// A domain's overrides are checked with the same ranges as the policy-wide keys they override.
    #[test]
    fn per_domain_ranges_are_the_policy_wide_ones() {
        let schema = crate::policy::params::generate::<TavsSpec>();
        let each = schema.pointer("/properties/domains/additionalProperties/properties").unwrap();
        for (k, o) in each.as_object().unwrap() {
            let wide = &schema["properties"][k];
            assert_eq!(
                (&o["minimum"], &o["maximum"], &o["type"]),
                (&wide["minimum"], &wide["maximum"], &wide["type"]),
                "{k}"
            );
        }
        assert_eq!(each.as_object().unwrap().len(), 6);
    }

    fn two_domains() -> Vec<DomainInfo> {
        (0..2)
            .map(|i| DomainInfo {
                name: format!("d{i}"),
                weight: 256,
                cap_pct: 0,
                vcpus: vec![VcpuId(i)],
                is_driver: false,
            })
            .collect()
    }

    /// The same observations on two domains: the one whose PositiveEv, BelThreshold and IOthreshold are
    /// overridden infers differently; the other keeps the policy-wide tunables.
    #[test]
    fn per_domain_evidence_changes_only_that_domain() {
        let params = serde_json::json!({"positive_ev": 4, "domains": {"d1": {"positive_ev": 10, "bel_threshold": 25}}});
        let p = tavs(params.clone()).unwrap();
        let doms = two_domains();
        let mut inf = Inference::new(p.per_vcpu(&doms).unwrap(), p.evidence.clone());
        // Tasks 0 and 1 are I/O loops in d0 and d1; 2 and 3 their domains' busy loops.
        let mut now = Nanos(0);
        for (v, cpu) in [(VcpuId(0), TaskId(2)), (VcpuId(1), TaskId(3))] {
            inf.task_switch(v, None, Some(cpu), now);
        }
        for _ in 0..3 {
            for (v, io, cpu) in [(VcpuId(0), TaskId(0), TaskId(2)), (VcpuId(1), TaskId(1), TaskId(3))] {
                inf.vcpu_scheduled(v, true, now);
                inf.task_switch(v, Some(cpu), Some(io), now + Nanos::from_us(1));
                inf.task_switch(v, Some(io), Some(cpu), now + Nanos::from_us(301));
            }
            now += Nanos::from_ms(30);
        }
        assert_eq!(inf.belief(TaskId(0)), 12, "d0 keeps the policy-wide PositiveEv 4");
        assert_eq!(inf.belief(TaskId(1)), 30, "d1 adds its own PositiveEv 10");
        assert!(!inf.is_io_bound(TaskId(0)), "12 is below d0's BelThreshold 20");
        assert!(inf.is_io_bound(TaskId(1)), "30 is above d1's BelThreshold 25");
        // A change of d0's IOthreshold below the 300 us runs turns d0's next observation negative, not d1's.
        let mut spec: super::super::CreditSpec =
            crate::policy::params::from_value(&serde_json::json!({ "tavs": params })).unwrap();
        crate::policy::params::set(&mut spec, "tavs.domains.d0.io_threshold_us", &serde_json::json!(100)).unwrap();
        let p2 = spec.resolve().unwrap().tavs.unwrap();
        inf.set_evidence(p2.per_vcpu(&doms).unwrap(), p2.evidence.clone());
        for (v, io, cpu) in [(VcpuId(0), TaskId(0), TaskId(2)), (VcpuId(1), TaskId(1), TaskId(3))] {
            inf.vcpu_scheduled(v, true, now);
            inf.task_switch(v, Some(cpu), Some(io), now + Nanos::from_us(1));
            inf.task_switch(v, Some(io), Some(cpu), now + Nanos::from_us(301));
        }
        assert_eq!(inf.belief(TaskId(0)), 12 - 20);
        assert_eq!(inf.belief(TaskId(1)), 40);
        let unknown = tavs(serde_json::json!({"domains": {"nope": {}}})).unwrap();
        assert!(unknown.per_vcpu(&doms).unwrap_err().contains("tavs.domains.nope"));
    }

    /// Task-aware scheduling with PBratio 0 infers but never boosts: the schedule and every domain metric are
    /// exactly plain Credit's (paper 000 3.4: "if PBratio is zero, our scheduler runs in the same manner"). Tracking's
    /// own hypervisor cost (5.5, `track_cost_ns`) is a separate overhead and is zeroed here.
    #[test]
    fn pb_ratio_zero_is_plain_credit() {
        let sc = scenario(json!({
            "schema": 1, "id": "pb0", "title": "pb0", "seed": 9, "duration_ms": 8000, "warmup_ms": 3000,
            "host": { "pcpus": 2 },
            "domains": [
                { "name": "dom0", "role": "driver" },
                { "name": "mixed", "tasks": [server_task("srv", 7, [5, 50]), cpu_task("burn")] },
                { "name": "io", "tasks": [server_task("srv", 7, [5, 50])] },
                { "name": "a", "tasks": [cpu_task("burn")] }, { "name": "b", "tasks": [cpu_task("burn")] },
                { "name": "c", "tasks": [cpu_task("burn")] }
            ],
            "policies": [
                { "id": "credit", "scheduler": "credit" },
                { "id": "pb0", "scheduler": "credit", "params": { "tavs": { "pb_ratio": 0, "track_cost_ns": 0 } } },
                { "id": "pb", "scheduler": "credit", "params": { "tavs": { "pb_ratio": 0.125 } } }
            ]
        }));
        let (plain, zero, on) = (run(&sc, "credit"), run(&sc, "pb0"), run(&sc, "pb"));
        assert_eq!(plain.trace().segments(), zero.trace().segments());
        let opts = RunOptions { deterministic: true, ..RunOptions::default() };
        let (a, b) = (plain.report(&opts), zero.report(&opts));
        assert_eq!(a["domains"], b["domains"]);
        assert_eq!(a["fairness"], b["fairness"]);
        assert_eq!(b["partial_boosts"]["count"], 0);
        assert!(b["partial_boosts"].get("pbhr").is_none(), "no boost, no hit ratio (not 0)");
        // The inference did run, and with an allowance the same host is scheduled differently.
        assert!(b["tasks"]["mixed/srv"]["belief"].as_i64().unwrap() > 20);
        // The trace's belief history ends where the report's belief is.
        let srv = zero.meta().tasks.iter().position(|t| t.path == "mixed/srv").unwrap() as u32;
        let history = zero.trace().beliefs(Some(srv));
        assert_eq!(history.last().map(|r| r.belief), b["tasks"]["mixed/srv"]["belief"].as_i64());
        assert_ne!(plain.trace().segments(), on.trace().segments());
        // The trace marks every partial boost (the belief view draws them); the report counts those of the measured
        // window, as every other metric. Only TAVS has a BelThreshold to draw.
        let given = |from: u64| on.trace().boosts().iter().filter(|r| r.kind == "boost" && r.t_ns >= from).count();
        assert!(given(0) > given(Nanos::from_ms(3000).0), "some boosts fall in the warm-up");
        let measured = on.report(&opts)["partial_boosts"]["count"].as_u64();
        assert_eq!(Some(given(Nanos::from_ms(3000).0) as u64), measured);
        assert!(on.trace().boosts().windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
        assert!(zero.trace().boosts().is_empty() && plain.trace().boosts().is_empty());
        assert_eq!((plain.belief_threshold(), on.belief_threshold()), (None, Some(20)));
    }

    /// Task tracking's hypervisor cost is charged to the running vCPU: the domain's CPU time is unchanged, its tasks
    /// get that much less of it. At 1 us per observed switch and 9 us per message, a message takes 10 us.
    #[test]
    fn tracking_cost_is_charged_to_the_vcpu() {
        let sc = pipe_scenario(1, 1, 4, 4, 9.0, json!({ "track_cost_ns": 1000 }));
        let (off, on) = (run(&sc, "credit"), run(&sc, "tavs"));
        assert_eq!(
            off.measure.dom_metrics[0].cpu_ns, on.measure.dom_metrics[0].cpu_ns,
            "the vCPU's CPU time is the same"
        );
        assert_eq!(off.measure.dom_metrics[0].tracking_ns, 0);
        assert_eq!(off.measure.dom_metrics[0].messages, 11_111);
        assert_eq!(on.measure.dom_metrics[0].messages, 10_000);
        // One observed switch per message, and the first task's at boot.
        assert_eq!(on.measure.dom_metrics[0].tracking_ns, (10_000 + 1) * 1000);
        let r = on.report(&RunOptions::default());
        assert_eq!(r["domains"]["hack"]["tracking_ms"], 10.001);
        assert!(off.report(&RunOptions::default())["domains"]["hack"].get("tracking_ms").is_none());
        // A busy loop's progress does not count the hypervisor's tracking time as its own work.
        let sc = scenario(json!({
            "schema": 1, "id": "c", "title": "c", "seed": 1, "duration_ms": 100, "host": { "pcpus": 1 },
            "domains": [{ "name": "d", "tasks": [cpu_task("a"), cpu_task("b")] }],
            "policies": [{ "id": "tavs", "scheduler": "credit", "params": { "tavs": { "track_cost_ns": 1000000 } } }]
        }));
        let sim = run(&sc, "tavs");
        let r = sim.report(&RunOptions::default());
        let tracking = sim.measure.dom_metrics[0].tracking_ns as f64 / 1e6;
        assert!(tracking > 0.0);
        let progress = r["domains"]["d"]["throughput"]["progress_per_s"].as_f64().unwrap();
        assert!((progress - (100.0 - tracking) * 10.0).abs() < 1e-6, "{progress} vs {tracking}");
    }

    /// A scenario change of IOthreshold reaches the inference through `set_param`: it is in the decision log, a task
    /// that was below BelThreshold climbs above it afterwards, and the report times that from the change.
    #[test]
    fn io_threshold_change_takes_effect() {
        let sc = scenario(json!({
            "schema": 1, "id": "thr", "title": "thr", "seed": 1, "duration_ms": 3000, "warmup_ms": 0,
            "host": { "pcpus": 1 },
            "domains": [
                { "name": "dom0", "role": "driver" },
                { "name": "text", "tasks": [
                    { "name": "wget", "workload": { "type": "io_loop", "io": "net", "cpu_us": 250 } }, cpu_task("bzip2")] },
                { "name": "a", "tasks": [cpu_task("burn")] }, { "name": "b", "tasks": [cpu_task("burn")] }
            ],
            "policies": [
                { "id": "keep", "scheduler": "credit", "params": { "tavs": { "io_threshold_us": 100 } } },
                { "id": "raise", "scheduler": "credit", "params": { "tavs": { "io_threshold_us": 100 } } }
            ],
            "changes": [{ "at_ms": 1500, "policy": "raise", "param": "tavs.io_threshold_us", "value": 500 }]
        }));
        let (keep, raise) = (run(&sc, "keep"), run(&sc, "raise"));
        let log: Vec<String> =
            raise.trace().decisions(0, u64::MAX, usize::MAX).iter().map(|d| d.text.to_string()).collect();
        assert!(log.iter().any(|t| t == "change: tavs.io_threshold_us = 500"), "the change is logged");
        let opts = RunOptions::default();
        let (k, r) = (keep.report(&opts), raise.report(&opts));
        assert_eq!(k["tasks"]["text/wget"]["belief"], -100);
        assert!(k["tasks"]["text/wget"].get("io_bound_after_ms").is_none());
        assert!(r["tasks"]["text/wget"]["belief"].as_i64().unwrap() > 20);
        assert_eq!(r["tasks"]["text/wget"]["io_bound"], true);
        // Not before the change: from -100 it takes 25 positive observations.
        let after = r["tasks"]["text/wget"]["io_bound_after_ms"].as_f64().unwrap();
        assert!(after > 0.0 && after < 1500.0, "{after}");
        let wget = raise.meta().tasks.iter().position(|t| t.path == "text/wget").unwrap() as u32;
        let crossed = raise.trace().beliefs(Some(wget)).into_iter().find(|b| b.belief > 20).unwrap();
        assert_eq!(crossed.t_ns, 1_500_000_000 + (after * 1e6).round() as u64);
    }

    /// Five observations of `io` running 50 us right after an event on `v` make it I/O-bound (belief 25); the
    /// guest is back in `burn` afterwards. Returns the time after them.
    fn make_io_bound(c: &mut Credit, v: VcpuId, io: TaskId, burn: TaskId) -> Nanos {
        let mut t = Nanos::from_ms(1);
        c.tavs.inf.task_switch(v, None, Some(burn), t);
        for _ in 0..5 {
            c.tavs.inf.vcpu_scheduled(v, true, t);
            c.tavs.inf.task_switch(v, Some(burn), Some(io), t + Nanos::from_us(10));
            c.tavs.inf.task_switch(v, Some(io), Some(burn), t + Nanos::from_us(60));
            t += Nanos::from_ms(1);
        }
        assert!(c.tavs.inf.is_io_bound(io));
        t
    }

    /// A revoked partial boost sends the vCPU back to the place it left in the run queue (its turn is not lost),
    /// and the boosted run counts against its PBratio allowance. The vCPU the boost preempted goes back to the
    /// head of its class (`preempted_keeps_place`) and runs next; with that off, to the tail.
    #[test]
    fn revoked_partial_boost_keeps_the_place_and_is_charged() {
        for keeps in [true, false] {
            let params = serde_json::json!({"tavs": {"pb_ratio": 1.0, "preempted_keeps_place": keeps}});
            let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 1), (256, 0, 1), (256, 0, 1)], 1, &params);
            let (io, burn, v2) = (TaskId(0), TaskId(1), VcpuId(2));
            let t = make_io_bound(&mut c, v2, io, burn);
            c.tavs.cpu_used[2] = 10_000_000;
            h.running[0] = Some(VcpuId(0));
            for v in 1..4 {
                c.runq_insert(PcpuId(0), VcpuId(v));
            }
            c.event_pending(v2, Some(7), &mut h.ctx(t));
            assert_eq!(c.runqueue(PcpuId(0)), vec![v2, VcpuId(1), VcpuId(3)], "the boost jumps the queue");
            let d = c.do_schedule(PcpuId(0), Some(VcpuId(0)), true, &mut h.ctx(t));
            assert_eq!(d.next, Some(v2));
            h.running[0] = Some(v2);
            // The guest runs the I/O task for 40 us, then goes back to its busy loop: the boost is revoked.
            c.guest_task_switch(v2, Some(burn), Some(io), &mut h.ctx(t));
            c.guest_task_switch(v2, Some(io), Some(burn), &mut h.ctx(t + Nanos::from_us(40)));
            assert_eq!(c.tavs.pb_used[2], 40_000);
            let d = c.do_schedule(PcpuId(0), Some(v2), true, &mut h.ctx(t + Nanos::from_us(40)));
            if keeps {
                assert_eq!(d.next, Some(VcpuId(0)), "the preempted vCPU resumes first");
                assert_eq!(c.runqueue(PcpuId(0)), vec![VcpuId(1), v2, VcpuId(3)], "v2 is back before v3");
            } else {
                assert_eq!(d.next, Some(VcpuId(1)));
                assert_eq!(c.runqueue(PcpuId(0)), vec![v2, VcpuId(3), VcpuId(0)], "v2 before v3, v0 at the tail");
            }
        }
    }

    /// A partial boost whose event woke no task (a pure TCP ACK) ends when the guest, the event handled, returns to
    /// its busy loop; with `revoke_on_resume` off it lasts until the 10 ms cap.
    #[test]
    fn partial_boost_ends_when_the_guest_resumes_a_cpu_task() {
        for revoke in [true, false] {
            let params = serde_json::json!({"tavs": {"pb_ratio": 1.0, "revoke_on_resume": revoke}});
            let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 1)], 1, &params);
            let (io, burn, v1) = (TaskId(0), TaskId(1), VcpuId(1));
            let t = make_io_bound(&mut c, v1, io, burn);
            c.tavs.cpu_used[1] = 10_000_000;
            h.running[0] = Some(VcpuId(0));
            c.runq_insert(PcpuId(0), v1);
            c.event_pending(v1, Some(7), &mut h.ctx(t));
            let d = c.do_schedule(PcpuId(0), Some(VcpuId(0)), true, &mut h.ctx(t));
            assert_eq!(d.next, Some(v1));
            assert_eq!(d.slice, Nanos::from_ms(10), "a partial boost is capped at a tick");
            h.running[0] = Some(v1);
            h.actions.clear();
            c.guest_resumed(v1, burn, &mut h.ctx(t + Nanos::from_us(5)));
            assert_eq!(c.tavs.pboost[1].is_none(), revoke);
            assert_eq!(h.actions.contains(&Action::Resched(PcpuId(0))), revoke);
            if !revoke {
                continue;
            }
            // Returning to an I/O-bound task keeps the boost.
            let t2 = t + Nanos::from_ms(1);
            c.runq_insert(PcpuId(0), VcpuId(0));
            assert_eq!(c.do_schedule(PcpuId(0), Some(v1), true, &mut h.ctx(t2)).next, Some(VcpuId(0)));
            h.running[0] = Some(VcpuId(0));
            c.event_pending(v1, Some(7), &mut h.ctx(t2));
            assert_eq!(c.do_schedule(PcpuId(0), Some(VcpuId(0)), true, &mut h.ctx(t2)).next, Some(v1));
            c.tavs.inf.task_switch(v1, Some(burn), Some(io), t2);
            c.guest_resumed(v1, io, &mut h.ctx(t2 + Nanos::from_us(5)));
            assert!(c.tavs.pboost[1].is_some(), "the I/O-bound task keeps its boost");
        }
    }

    /// PBHR (000 5.2) counts boosts, h = 1 per boost during which an I/O-bound task ran: a boost that runs two
    /// I/O-bound tasks in a row is one hit, and one whose guest goes straight to its busy loop is a miss.
    #[test]
    fn pbhr_counts_each_boost_once() {
        let (mut h, mut c) = credit_on(&[(256, 0, 1), (256, 0, 1)], 1, &serde_json::json!({"tavs": {"pb_ratio": 1.0}}));
        let (io1, io2, burn, v1) = (TaskId(0), TaskId(1), TaskId(2), VcpuId(1));
        make_io_bound(&mut c, v1, io1, burn);
        let mut t = make_io_bound(&mut c, v1, io2, burn);
        c.tavs.cpu_used[1] = 10_000_000;
        for (tasks, hits) in [(&[io1, io2, burn][..], 1), (&[burn][..], 1), (&[io2, burn][..], 2)] {
            h.running[0] = Some(VcpuId(0));
            c.runq_insert(PcpuId(0), v1);
            c.event_pending(v1, Some(7), &mut h.ctx(t));
            assert_eq!(c.do_schedule(PcpuId(0), Some(VcpuId(0)), true, &mut h.ctx(t)).next, Some(v1));
            h.running[0] = Some(v1);
            let mut prev = burn;
            for &next in tasks {
                t += Nanos::from_us(20);
                c.guest_task_switch(v1, Some(prev), Some(next), &mut h.ctx(t));
                prev = next;
            }
            t += Nanos::from_us(20);
            c.do_schedule(PcpuId(0), Some(v1), true, &mut h.ctx(t));
            // Back to a queue of v1 alone for the next round.
            c.runq_remove(VcpuId(0));
            c.runq_remove(v1);
            assert_eq!(c.partial_boosts(), Some((c.tavs.boosts, hits)), "after {tasks:?}");
        }
        assert_eq!(c.tavs.boosts, 3);
    }

    /// Block correlation (000 3.5.1): a completion boosts only if an I/O-bound task was among the last N tasks
    /// scheduled on the vCPU when its request reached the driver; other completions and timers never boost.
    #[test]
    fn inspection_window_decides_which_completions_boost() {
        let info = doms(&[(256, 0, 1), (256, 0, 1)]);
        for (window, boosts) in [(1usize, false), (2, true)] {
            let mut h = Harness::new(info.clone(), 1);
            let params = serde_json::json!({"tavs": {"pb_ratio": 1.0, "inspection_window": window}});
            let mut c = Credit::new(&params, 1, &info).unwrap();
            let (io, burn, v1) = (TaskId(0), TaskId(1), VcpuId(1));
            let t = make_io_bound(&mut c, v1, io, burn);
            c.tavs.cpu_used[1] = 10_000_000;
            // The I/O task's read reaches the driver after the guest has switched back to its busy loop.
            c.block_request(v1, io, t);
            h.running[0] = Some(VcpuId(0));
            c.runq_insert(PcpuId(0), v1);
            // A guest timer pending for v1 never boosts it.
            c.event_pending(v1, None, &mut h.ctx(t));
            assert_eq!(c.pri(v1), PRI_UNDER);
            c.block_done(v1, io, t, true);
            c.event_pending(v1, None, &mut h.ctx(t + Nanos::from_ms(1)));
            assert_eq!(c.pri(v1) == PRI_BOOST, boosts, "window {window}");
            assert!(c.tavs.block_marks.is_empty(), "the request's mark is dropped once it completed");
        }
    }
}
