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
mod tests;
