//! Xen's Simple EDF scheduler (SEDF, `xen/common/sched_sedf.c` of Xen 2.0-4.5; the default before Credit) as
//! paper 004 ran it on Xen 3.0.2 and thesis 003 describes it.
//!
//! Each domain reserves `slice` of CPU in every `period`. Per pCPU, a run queue holds the vCPUs whose period has
//! begun and whose slice is not used up, sorted by absolute deadline (the end of the period): the head runs
//! (earliest deadline first) until its slice is used or the next waiting period begins. A vCPU that used its slice
//! waits on the wait queue, sorted by the start of its next period. When no reservation is due, extra time goes in
//! 500 us quanta to extra-time-aware vCPUs: first the L0 queue (vCPUs that lost part of a slice by blocking, by a
//! penalty score), then the L1 queue (weighted round robin by a utilisation score). Domains without a reservation
//! run only in extra time ("best effort", extra weight 1). Weight mode turns weights into slices of a 100 ms period.
//! A vCPU that wakes in the period it blocked in forfeits the rest of that period's slice and is compensated in L0
//! extra time (UNBLOCK_EXTRA_SUPPORT, the mode compiled into Xen 3.0); one that wakes later starts a new period.
//! Placement is static (round robin over pCPUs, no load balancing, as in Xen's SEDF).

use super::common::Versions;
use super::params::{self, Params};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, ShareBasis, Timers, VcpuSched, WakeCause};
use crate::model::{DomId, PcpuId, VcpuId};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::time::{ms_to_ns, Nanos};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use std::fmt::Write;

/// Extra-time quantum (EXTRA_QUANTUM) [ns].
pub const EXTRA_QUANTUM: u64 = 500_000;
/// Period of weight-driven and best-effort domains (WEIGHT_PERIOD) [ns].
pub const WEIGHT_PERIOD: u64 = 100_000_000;
/// Part of a weight period never handed out by weight (WEIGHT_SAFETY) [ns].
pub const WEIGHT_SAFETY: u64 = 5_000_000;
/// dom0's reservation at boot: 15 ms every 20 ms [ns].
pub const DOM0_SLICE: u64 = 15_000_000;
pub const DOM0_PERIOD: u64 = 20_000_000;
/// Idle time when nothing at all is queued (the `SECONDS(1)` of sedf_do_schedule) [ns].
const IDLE_FOREVER: u64 = 1_000_000_000;

/// L0: penalty (compensation for slice lost by blocking); L1: utilisation-weighted extra time.
const PEN_Q: usize = 0;
const UTIL_Q: usize = 1;

/// One domain's SEDF settings (xm sched-sedf). period_ms with slice_ms: a reservation of slice every period
/// (time-driven). weight without period_ms and with extratime: a weighted share of the extra time only. weight
/// otherwise: weight mode, a slice of a 100 ms period proportional to the weight, from what the time-driven
/// domains leave (less 5 ms).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(rename = "sedf_domain")]
pub struct DomSpec {
    /// Period [ms].
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0.1, max = 10_000))]
    pub period_ms: Option<f64>,
    /// CPU reserved in every period [ms]; at most the period; 0 = extra time only.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "f64", range(min = 0, max = 10_000))]
    pub slice_ms: Option<f64>,
    /// Latency hint [ms]: after a long block the period shrinks to this (same utilisation) and doubles back each
    /// period; 0 = off.
    #[schemars(range(min = 0, max = 10_000))]
    pub latency_ms: f64,
    /// May run in extra time (the L0 penalty and L1 utilisation queues) once its slice is used.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "bool", extend("default" = true))]
    pub extratime: Option<bool>,
    /// Weight (see above).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u32", range(min = 1, max = 65_535))]
    pub weight: Option<u32>,
}

impl DomSpec {
    /// Period [ns].
    fn period(&self) -> Option<u64> {
        self.period_ms.map(ms_to_ns)
    }
    /// Slice reserved in each period [ns].
    fn slice(&self) -> Option<u64> {
        self.slice_ms.map(ms_to_ns)
    }
    /// Latency hint [ns]; 0 = off.
    fn latency(&self) -> u64 {
        ms_to_ns(self.latency_ms)
    }

    /// The slice fits the period; `path` names the entry in errors.
    fn check(&self, path: &str) -> Result<(), String> {
        match (self.slice(), self.period()) {
            (Some(sl), Some(p)) if sl > p => Err(format!("{path}.slice_ms: the slice is longer than the period")),
            _ => Ok(()),
        }
    }
}

/// Which Xen release's creation defaults apply.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub enum SedfVersion {
    #[default]
    #[serde(rename = "3.0")]
    V3_0,
    #[serde(rename = "4.x")]
    V4,
}

/// Xen's SEDF. Domains not named get Xen's defaults, which depend on version: in Xen 3.0 ("3.0", the default) the
/// first driver domain (dom0) gets 15 ms every 20 ms with extra time and an extra-time score by utilisation,
/// guests are best effort (no slice, extra time with extra weight 1, period 100 ms); in Xen 4.1-4.5 ("4.x") every
/// domain, dom0 included, is created best effort with extra weight 1. Extra time is handed out in 500 us quanta.
/// No admission control, as in Xen.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct SedfParams {
    /// Which release's creation defaults apply to domains not named in domains: "3.0" (dom0 15 ms every 20 ms)
    /// or "4.x" (every domain best effort with extra weight 1, as Xen 4.1-4.5 create them). Fixed at boot.
    pub version: SedfVersion,
    /// By domain name.
    pub domains: IndexMap<String, DomSpec>,
    /// For every guest domain not named in domains.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "DomSpec")]
    pub guests: Option<DomSpec>,
}

impl Params for SedfParams {
    const SCHEDULER: &'static str = "sedf";
    const DEF: &'static str = "sedf_params";
    const FIXED: &'static [&'static str] = &["version"];

    fn check(&self) -> Result<(), String> {
        for (name, s) in &self.domains {
            s.check(&format!("domains.{name}"))?;
        }
        self.guests.as_ref().map_or(Ok(()), |g| g.check("guests"))
    }
}

impl SedfParams {
    /// Reads the SEDF keys of a policy's `params`; `extra` names keys a scheduler built on SEDF reads itself.
    pub fn from_value(v: &Value, extra: &[&str]) -> Result<SedfParams, String> {
        match v {
            Value::Object(m) if extra.iter().any(|k| m.contains_key(*k)) => {
                let own: Map<String, Value> = m
                    .iter()
                    .filter(|(k, _)| !extra.contains(&k.as_str()))
                    .map(|(k, x)| (k.clone(), x.clone()))
                    .collect();
                params::from_value(&Value::Object(own))
            }
            _ => params::from_value(v),
        }
    }

    /// Xen 4.x defaults (`version: "4.x"`): `sedf_alloc_vdata` of 4.1-4.5 creates every vCPU, dom0's too, best
    /// effort with extra weight 1, so dom0 has no reservation and shares extra time equally with the guests.
    /// Xen 3.0 (the default here, paper 004) gave dom0 15 ms every 20 ms and, its extra weight left 0, an L1 score
    /// by utilisation that wins about 96 of every 97 extra quanta against a best-effort guest. Xen 4.x also takes a
    /// vCPU off the L0 (penalty) queue after one extra-time run, repaid or not.
    fn xen4(&self) -> bool {
        self.version == SedfVersion::V4
    }

    /// Checks a run-time change (`domains.NAME.KEY`, `guests.KEY`; the version is fixed at boot).
    pub fn check_change(param: &str, v: &Value) -> Result<(), String> {
        params::change(&mut SedfParams::default(), param, v)
    }
}

/// Checks a policy's SEDF parameters against the scenario's domain names (at load, so a bad file is rejected with
/// the field named before anything runs).
pub fn check_params(v: &Value, names: &[&str], extra: &[&str]) -> Result<(), String> {
    let p = SedfParams::from_value(v, extra)?;
    for (name, spec) in &p.domains {
        if !names.contains(&name.as_str()) {
            return Err(format!("domains.{name}: no domain named '{name}' in this scenario"));
        }
        resolve(Some(spec), false, &format!("domains.{name}"))?;
    }
    if let Some(g) = &p.guests {
        resolve(Some(g), false, "guests")?;
    }
    Ok(())
}

/// A domain's reservation once Xen's defaults and weight mode are applied.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Resv {
    period: u64,
    slice: u64,
    latency: u64,
    extra: bool,
    /// Real-time weight (weight mode; the slice is computed from it).
    weight: u32,
    /// Extra-time weight; 0 = the L1 score follows the reservation's utilisation.
    extraweight: u32,
}

fn resolve(spec: Option<&DomSpec>, is_dom0: bool, path: &str) -> Result<Resv, String> {
    let best_effort = Resv { period: WEIGHT_PERIOD, slice: 0, latency: 0, extra: true, weight: 0, extraweight: 1 };
    let Some(s) = spec else {
        return Ok(if is_dom0 {
            Resv { period: DOM0_PERIOD, slice: DOM0_SLICE, extraweight: 0, ..best_effort }
        } else {
            best_effort
        });
    };
    let extra = s.extratime.unwrap_or(true);
    let r = match (s.weight, s.period()) {
        // Weight-driven with extra time only (sedf_adjdom): a weighted share of the spare time.
        (Some(w), None) if extra => Resv { extraweight: w, ..best_effort },
        (Some(w), _) => {
            Resv { period: WEIGHT_PERIOD, slice: 0, latency: s.latency(), extra, weight: w, extraweight: 0 }
        }
        (None, Some(p)) => {
            Resv { period: p, slice: s.slice().unwrap_or(0), latency: s.latency(), extra, weight: 0, extraweight: 0 }
        }
        (None, None) => return Err(format!("{path}: give period_ms (with slice_ms) or weight")),
    };
    Ok(r)
}

/// How the vCPU runs right now.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum RunKind {
    Edf,
    ExtraPen,
    ExtraUtil,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum OnQ {
    None,
    Run,
    Wait,
}

/// Per-vCPU SEDF state (`struct sedf_vcpu_info`); times are absolute or spans [ns].
#[derive(Debug, Clone)]
pub struct SVcpu {
    pub dom: DomId,
    pub processor: PcpuId,
    pub period: u64,
    pub slice: u64,
    period_orig: u64,
    slice_orig: u64,
    latency: u64,
    pub extra_aware: bool,
    want_pen: bool,
    extraweight: u32,
    /// Absolute deadline: the end of the current period.
    pub deadl: u64,
    sched_start: u64,
    /// CPU used in the current period's slice.
    pub cputime: u64,
    block_abs: u64,
    score: [i64; 2],
    short_block_lost: i64,
    pub asleep: bool,
    pub run: RunKind,
    q: OnQ,
    extraq: [bool; 2],
    /// Extra time received so far.
    pub extra_ns: u64,
}

impl SVcpu {
    pub fn period_begin(&self) -> u64 {
        self.deadl.saturating_sub(self.period)
    }
    /// Slice left in the current period.
    pub fn budget(&self) -> u64 {
        self.slice.saturating_sub(self.cputime)
    }
}

#[derive(Clone)]
pub struct Sedf {
    params: SedfParams,
    pub vcpus: Vec<SVcpu>,
    pub runq: Vec<Vec<VcpuId>>,
    pub waitq: Vec<Vec<VcpuId>>,
    extraq: Vec<[Vec<VcpuId>; 2]>,
    /// When the decision in force on each pCPU ends (current_slice_expires) [ns].
    slice_expires: Vec<u64>,
    versions: Versions,
    /// What each pCPU runs since the last decision.
    current: Vec<Option<VcpuId>>,
    /// Keep the rest of the slice when a vCPU wakes in the period it blocked in (xenco), instead of SEDF's
    /// forfeit-and-compensate.
    pub resume_short_unblock: bool,
    domains: Vec<DomainInfo>,
}

impl Sedf {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Sedf, String> {
        Sedf::with_params(SedfParams::from_value(params, &[])?, pcpus, domains)
    }

    pub fn with_params(params: SedfParams, pcpus: usize, domains: &[DomainInfo]) -> Result<Sedf, String> {
        let nv: usize = domains.iter().map(|d| d.vcpus.len()).sum();
        let blank = SVcpu {
            dom: DomId(0),
            processor: PcpuId(0),
            period: 0,
            slice: 0,
            period_orig: 0,
            slice_orig: 0,
            latency: 0,
            extra_aware: true,
            want_pen: false,
            extraweight: 0,
            deadl: 0,
            sched_start: 0,
            cputime: 0,
            block_abs: 0,
            score: [0, 0],
            short_block_lost: 0,
            asleep: true,
            run: RunKind::Edf,
            q: OnQ::None,
            extraq: [false, false],
            extra_ns: 0,
        };
        let mut s = Sedf {
            params,
            vcpus: vec![blank; nv],
            runq: vec![Vec::new(); pcpus],
            waitq: vec![Vec::new(); pcpus],
            extraq: vec![[Vec::new(), Vec::new()]; pcpus],
            slice_expires: vec![0; pcpus],
            versions: Versions::new(pcpus),
            current: vec![None; pcpus],
            resume_short_unblock: false,
            domains: domains.to_vec(),
        };
        for (d, info) in domains.iter().enumerate() {
            for v in &info.vcpus {
                s.vcpus[v.0].dom = DomId(d);
                // Static round-robin placement in vCPU order (SEDF never migrates).
                s.vcpus[v.0].processor = PcpuId(v.0 % pcpus.max(1));
            }
        }
        s.apply_params()?;
        Ok(s)
    }

    /// Resolves every domain's reservation (defaults, weight mode) and installs it in its vCPUs.
    fn apply_params(&mut self) -> Result<(), String> {
        for (name, _) in &self.params.domains {
            if !self.domains.iter().any(|d| &d.name == name) {
                return Err(format!("domains.{name}: no domain named '{name}' in this scenario"));
            }
        }
        // Xen's dom0 is the first driver domain; other driver domains are created like guests.
        let dom0 = self.domains.iter().position(|d| d.is_driver);
        let mut resv = Vec::with_capacity(self.domains.len());
        for (d, info) in self.domains.iter().enumerate() {
            let named = self.params.domains.get(&info.name);
            let (spec, path) = match named {
                Some(s) => (Some(s), format!("domains.{}", info.name)),
                None if Some(d) != dom0 => (self.params.guests.as_ref(), "guests".to_string()),
                None => (None, String::new()),
            };
            resv.push(resolve(spec, Some(d) == dom0 && !self.params.xen4(), &path)?);
        }
        // Weight mode (sedf_adjust_weights): per pCPU, the time-driven domains' utilisation projected on a weight
        // period is set aside; the rest less a safety margin is divided by weight.
        let pcpus = self.runq.len();
        let mut sumw = vec![0u64; pcpus];
        let mut sumt = vec![0u64; pcpus];
        for v in &self.vcpus {
            let r = &resv[v.dom.0];
            if r.weight > 0 {
                sumw[v.processor.0] += u64::from(r.weight);
            } else {
                sumt[v.processor.0] += WEIGHT_PERIOD * r.slice / r.period;
            }
        }
        for v in 0..self.vcpus.len() {
            let r = resv[self.vcpus[v].dom.0];
            let p = self.vcpus[v].processor.0;
            let slice = if r.weight > 0 {
                u64::from(r.weight) * WEIGHT_PERIOD.saturating_sub(WEIGHT_SAFETY + sumt[p]) / sumw[p]
            } else {
                r.slice
            };
            let c = &mut self.vcpus[v];
            c.period = r.period;
            c.period_orig = r.period;
            c.slice = slice;
            c.slice_orig = slice;
            c.latency = r.latency;
            c.extraweight = r.extraweight;
            let was = c.extra_aware;
            c.extra_aware = r.extra;
            if was != r.extra {
                self.extraq_check(VcpuId(v));
            }
        }
        self.touch_all();
        Ok(())
    }

    pub fn touch(&mut self, p: PcpuId) {
        self.versions.touch(p);
    }

    fn touch_all(&mut self) {
        self.versions.touch_all();
    }

    fn runq_insert(&mut self, v: VcpuId) {
        let p = self.vcpus[v.0].processor.0;
        let key = self.vcpus[v.0].deadl;
        let q = &self.runq[p];
        let pos = q.iter().position(|u| key < self.vcpus[u.0].deadl).unwrap_or(q.len());
        self.runq[p].insert(pos, v);
        self.vcpus[v.0].q = OnQ::Run;
        self.touch(PcpuId(p));
    }

    fn waitq_insert(&mut self, v: VcpuId) {
        let p = self.vcpus[v.0].processor.0;
        let key = self.vcpus[v.0].period_begin();
        let q = &self.waitq[p];
        let pos = q.iter().position(|u| key < self.vcpus[u.0].period_begin()).unwrap_or(q.len());
        self.waitq[p].insert(pos, v);
        self.vcpus[v.0].q = OnQ::Wait;
        self.touch(PcpuId(p));
    }

    fn del_from_queue(&mut self, v: VcpuId) {
        let p = self.vcpus[v.0].processor.0;
        match self.vcpus[v.0].q {
            OnQ::Run => self.runq[p].retain(|&u| u != v),
            OnQ::Wait => self.waitq[p].retain(|&u| u != v),
            OnQ::None => {}
        }
        self.vcpus[v.0].q = OnQ::None;
        self.touch(PcpuId(p));
    }

    fn extraq_del(&mut self, v: VcpuId, i: usize) {
        if self.vcpus[v.0].extraq[i] {
            let p = self.vcpus[v.0].processor.0;
            self.extraq[p][i].retain(|&u| u != v);
            self.vcpus[v.0].extraq[i] = false;
            self.touch(PcpuId(p));
        }
    }

    /// Inserts by score (lower first, FIFO among equals) after lowering every queued score by `sub`: the vCPU that
    /// just had extra time is charged its stride, the others move up (extraq_add_sort_update).
    fn extraq_add_sort_update(&mut self, v: VcpuId, i: usize, sub: i64) {
        let p = self.vcpus[v.0].processor.0;
        for u in &self.extraq[p][i] {
            self.vcpus[u.0].score[i] -= sub;
        }
        let key = self.vcpus[v.0].score[i];
        let q = &self.extraq[p][i];
        let pos = q.iter().position(|u| key < self.vcpus[u.0].score[i]).unwrap_or(q.len());
        self.extraq[p][i].insert(pos, v);
        self.vcpus[v.0].extraq[i] = true;
        self.touch(PcpuId(p));
    }

    /// Keeps L1 membership in line with the extra-time flag after a parameter change.
    fn extraq_check(&mut self, v: VcpuId) {
        let c = &self.vcpus[v.0];
        if c.extraq[UTIL_Q] && !c.extra_aware && c.run != RunKind::ExtraUtil {
            self.extraq_del(v, UTIL_Q);
        } else if !c.extraq[UTIL_Q] && c.extra_aware && !c.asleep {
            self.extraq_add_sort_update(v, UTIL_Q, 0);
        }
    }

    /// Charges an EDF run; a vCPU whose slice is used (or that blocked) leaves the run queue (desched_edf_dom).
    fn desched_edf(&mut self, now: u64, v: VcpuId) {
        let c = &mut self.vcpus[v.0];
        c.cputime += now.saturating_sub(c.sched_start);
        if c.cputime < c.slice && !c.asleep {
            return;
        }
        self.del_from_queue(v);
        let c = &mut self.vcpus[v.0];
        if c.cputime >= c.slice {
            c.cputime -= c.slice;
            if c.period < c.period_orig {
                // Latency scaling: the shortened period doubles back towards the original.
                c.period *= 2;
                c.slice *= 2;
                if c.period > c.period_orig || c.slice > c.slice_orig {
                    c.period = c.period_orig;
                    c.slice = c.slice_orig;
                }
            }
            c.deadl += c.period;
        }
        if !self.vcpus[v.0].asleep {
            self.waitq_insert(v);
        } else {
            self.extraq_del(v, PEN_Q);
            self.extraq_del(v, UTIL_Q);
        }
    }

    /// Charges an extra-time run and requeues the vCPU by its new score (desched_extra_dom).
    fn desched_extra(&mut self, now: u64, v: VcpuId) {
        let i = if self.vcpus[v.0].run == RunKind::ExtraPen { PEN_Q } else { UTIL_Q };
        let ran = now.saturating_sub(self.vcpus[v.0].sched_start);
        {
            let c = &mut self.vcpus[v.0];
            c.run = RunKind::Edf;
            c.cputime = 0;
            c.extra_ns += ran;
        }
        self.extraq_del(v, i);
        // SEDF only runs the head, whose score is the queue's least, so lowering the others by it keeps every score
        // at or above zero. A scheduler built on SEDF (xenco) may pick out of turn: then the others are lowered by
        // no more than their head's score, else they go negative and a vCPU queued later with a fresh score, however
        // the others then run, never reaches the head (found starving xenco's stream server for over a second).
        let head = self.extraq[self.vcpus[v.0].processor.0][i].first().map(|u| self.vcpus[u.0].score[i]);
        let mut oldscore = head.map_or(self.vcpus[v.0].score[i], |h| h.min(self.vcpus[v.0].score[i]));
        let mut requeue = true;
        let xen4 = self.params.xen4();
        let c = &mut self.vcpus[v.0];
        if i == PEN_Q {
            c.short_block_lost -= ran as i64;
            // Xen 4.x compiles out the "until repaid" test (KAF: else dom0 could take the CPU for seconds): one L0
            // quantum repays any loss.
            if c.short_block_lost <= 0 || xen4 {
                // The loss is repaid: no more place in L0.
                c.short_block_lost = 0;
                c.want_pen = false;
                requeue = false;
            } else {
                c.score[PEN_Q] = ((c.period as i64) << 10) / c.short_block_lost;
                oldscore = 0;
            }
        } else if c.extraweight == 0 {
            // Score = inverse utilisation (fixed point, 10 bits): small reservations get extra time less often.
            c.score[UTIL_Q] = ((c.period as i64) << 10) / (c.slice.max(1) as i64);
        } else {
            // 100% utilisation is worth an extra weight of 128.
            c.score[UTIL_Q] = (1 << 17) / i64::from(c.extraweight);
        }
        if !self.vcpus[v.0].asleep {
            let c = &self.vcpus[v.0];
            let back = (c.extra_aware && i == UTIL_Q) || (c.want_pen && i == PEN_Q);
            if requeue && back {
                self.extraq_add_sort_update(v, i, oldscore);
            }
        } else {
            self.del_from_queue(v);
            self.extraq_del(v, PEN_Q);
            self.extraq_del(v, UTIL_Q);
        }
    }

    /// Periods that began move to the run queue; zero-slice vCPUs and missed deadlines move on (update_queues).
    fn update_queues(&mut self, now: u64, p: PcpuId) {
        while let Some(&v) = self.waitq[p.0].first() {
            if self.vcpus[v.0].period_begin() > now {
                break;
            }
            self.del_from_queue(v);
            self.runq_insert(v);
        }
        while let Some(&v) = self.runq[p.0].first() {
            let c = &mut self.vcpus[v.0];
            if c.slice == 0 {
                // Nothing reserved: straight to the next period that starts in the future.
                c.deadl += c.period;
                if c.period_begin() <= now {
                    // Strictly in the future, so the wait queue never holds a period that is already due.
                    c.deadl += ((now - c.period_begin()) / c.period + 1) * c.period;
                }
                self.del_from_queue(v);
                self.waitq_insert(v);
                continue;
            }
            if c.deadl < now || c.cputime > c.slice {
                // A missed deadline: a fresh slice in the next period aligned to the old ones.
                c.deadl += c.period;
                if c.deadl < now {
                    c.deadl += (now - c.deadl).div_ceil(c.period) * c.period;
                }
                c.cputime = 0;
                let later = c.period_begin() > now;
                self.del_from_queue(v);
                if later {
                    self.waitq_insert(v);
                } else {
                    self.runq_insert(v);
                }
                continue;
            }
            // Only the head matters for this decision; the others are checked when they reach it.
            break;
        }
    }

    /// Extra time until `end_xt`: L0 first, then L1, else idle (sedf_do_extra_schedule).
    pub fn extra_pick(&self, now: u64, end_xt: u64, p: PcpuId) -> Option<(VcpuId, RunKind)> {
        if end_xt.saturating_sub(now) < EXTRA_QUANTUM {
            return None;
        }
        if let Some(&v) = self.extraq[p.0][PEN_Q].first() {
            return Some((v, RunKind::ExtraPen));
        }
        self.extraq[p.0][UTIL_Q].first().map(|&v| (v, RunKind::ExtraUtil))
    }

    /// Slice a vCPU lost to an early block and is still owed in L0 extra time [ns]: what it has not received of the
    /// slice of the period it blocked in.
    pub fn owed_slice(&self, v: VcpuId) -> u64 {
        let c = &self.vcpus[v.0];
        if c.want_pen {
            c.short_block_lost.max(0) as u64
        } else {
            0
        }
    }

    /// The extra-time queues of a pCPU (L0 then L1), for schedulers built on SEDF.
    pub fn extra_queue(&self, p: PcpuId, pen: bool) -> &[VcpuId] {
        &self.extraq[p.0][if pen { PEN_Q } else { UTIL_Q }]
    }

    /// The bookkeeping half of `do_schedule`: charge what ran and bring the queues up to `now`.
    pub fn desched(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, now: u64) {
        self.touch(p);
        if let Some(c) = cur {
            self.vcpus[c.0].asleep = !cur_runnable;
            if !cur_runnable {
                self.vcpus[c.0].block_abs = now;
            }
            if self.vcpus[c.0].run == RunKind::Edf {
                self.desched_edf(now, c);
            } else {
                self.desched_extra(now, c);
            }
        }
        self.update_queues(now, p);
    }

    /// Start of the next waiting period on `p` [ns].
    pub fn next_release(&self, p: PcpuId) -> Option<u64> {
        self.waitq[p.0].first().map(|w| self.vcpus[w.0].period_begin())
    }

    /// SEDF's own choice after `desched`: the EDF head, else extra time, else idle; with how long it holds [ns].
    pub fn default_pick(&self, p: PcpuId, now: u64) -> (Option<(VcpuId, RunKind)>, u64) {
        let release = self.next_release(p);
        if let Some(&h) = self.runq[p.0].first() {
            let left = self.vcpus[h.0].budget();
            let t = release.map_or(left, |r| left.min(r.saturating_sub(now)));
            return (Some((h, RunKind::Edf)), t);
        }
        match release {
            Some(r) => match self.extra_pick(now, r, p) {
                Some(x) => (Some(x), EXTRA_QUANTUM),
                None => (None, r - now),
            },
            None => (None, IDLE_FOREVER),
        }
    }

    /// Installs the choice: the vCPU's run kind and start, and when the decision ends.
    pub fn commit(&mut self, p: PcpuId, next: Option<(VcpuId, RunKind)>, time: u64, now: u64) -> Nanos {
        // A zero or negative slice means SEDF is behind schedule; Xen then runs an extra quantum.
        let time = if time == 0 { EXTRA_QUANTUM } else { time };
        if let Some((v, kind)) = next {
            let c = &mut self.vcpus[v.0];
            c.run = kind;
            c.sched_start = now;
        }
        self.slice_expires[p.0] = now + time;
        self.current[p.0] = next.map(|(v, _)| v);
        self.touch(p);
        Nanos(time)
    }

    /// Whether a woken vCPU should interrupt what runs on its pCPU (should_switch).
    fn should_switch(&self, cur: Option<VcpuId>, other: VcpuId) -> bool {
        let o = &self.vcpus[other.0];
        let Some(cur) = cur else { return true };
        if o.period_begin() < self.slice_expires[o.processor.0] {
            return true;
        }
        let c = &self.vcpus[cur.0];
        match c.run {
            RunKind::Edf => false,
            RunKind::ExtraPen => o.want_pen && o.score[PEN_Q] < c.score[PEN_Q],
            RunKind::ExtraUtil => o.want_pen,
        }
    }

    /// The wake-up bookkeeping of `sedf_wake`; returns whether the vCPU's pCPU should reschedule.
    pub fn wake_vcpu(&mut self, v: VcpuId, now: u64, running: Option<VcpuId>) -> bool {
        if self.vcpus[v.0].q != OnQ::None {
            return false;
        }
        let resume = self.resume_short_unblock;
        let c = &mut self.vcpus[v.0];
        c.asleep = false;
        let mut want_pen_add = false;
        if c.deadl == 0 {
            // First wake: the first period starts now, with a full slice.
            c.deadl = now + c.period;
        } else if now < c.period_begin() {
            // Woken in extra time (the slice of this period is used): back on the extra queues only.
            want_pen_add = c.want_pen;
        } else if now < c.deadl {
            if resume && c.budget() >= EXTRA_QUANTUM {
                // Keep the rest of this period's slice (xenco): the deadline and the reservation are unchanged.
            } else {
                // Short block: no more real-time in this period; the lost slice is repaid in L0 extra time.
                c.deadl += c.period;
                if c.block_abs != 0 {
                    c.short_block_lost = c.slice.saturating_sub(c.cputime) as i64;
                    if c.short_block_lost > 0 {
                        c.score[PEN_Q] = ((c.period as i64) << 10) / c.short_block_lost;
                        c.want_pen = true;
                        want_pen_add = true;
                    }
                }
                c.cputime = 0;
            }
        } else if c.latency > 0 && c.period_orig > c.latency {
            // Long block with a latency hint: a short period with the same utilisation, doubling back.
            c.period = c.latency;
            c.slice = c.period * c.slice_orig / c.period_orig;
            c.deadl = now + c.period;
            c.cputime = 0;
        } else {
            // Long block: a new period starts now.
            c.deadl = now + c.period;
            c.cputime = 0;
        }
        if want_pen_add {
            self.extraq_add_sort_update(v, PEN_Q, 0);
        }
        if self.vcpus[v.0].extra_aware {
            self.extraq_add_sort_update(v, UTIL_Q, 0);
        }
        if self.vcpus[v.0].period_begin() > now {
            self.waitq_insert(v);
        } else {
            self.runq_insert(v);
        }
        self.should_switch(running, v)
    }

    /// The sleep bookkeeping of `sedf_sleep` for a vCPU that is not running.
    pub fn sleep_vcpu(&mut self, v: VcpuId, running: bool) {
        self.vcpus[v.0].asleep = true;
        if !running {
            self.del_from_queue(v);
            self.extraq_del(v, PEN_Q);
            self.extraq_del(v, UTIL_Q);
        }
    }

    pub fn sched_label(&self, v: VcpuId) -> VcpuSched {
        let c = &self.vcpus[v.0];
        let pri = match (c.q, c.run) {
            (_, RunKind::ExtraPen) => Pri::new(PriClass::Extra, "L0"),
            (_, RunKind::ExtraUtil) => Pri::new(PriClass::Extra, "L1"),
            (OnQ::Run, _) => Pri::new(PriClass::Reserved, "EDF"),
            (OnQ::Wait, _) if c.extraq[PEN_Q] => Pri::new(PriClass::Waiting, "WAIT+L0"),
            (OnQ::Wait, _) if c.extraq[UTIL_Q] => Pri::new(PriClass::Waiting, "WAIT+L1"),
            (OnQ::Wait, _) => Pri::new(PriClass::Waiting, "WAIT"),
            (OnQ::None, _) => Pri::new(PriClass::Blocked, "ASLEEP"),
        };
        // Slice left in this period [us].
        VcpuSched { pri, credit: Some((c.budget() / 1000) as i64) }
    }

    /// Queued vCPUs of a pCPU in the order they would run: EDF, then L0, L1, then the waiting rest.
    pub fn queued(&self, p: PcpuId, running: Option<VcpuId>) -> Vec<VcpuId> {
        let mut out: Vec<VcpuId> = Vec::new();
        let all = self.runq[p.0].iter().chain(&self.extraq[p.0][PEN_Q]).chain(&self.extraq[p.0][UTIL_Q]);
        for &v in all.chain(&self.waitq[p.0]) {
            if Some(v) != running && !out.contains(&v) {
                out.push(v);
            }
        }
        out
    }

    pub fn set(&mut self, param: &str, value: &Value) -> Result<(), String> {
        let mut params = self.params.clone();
        params::change(&mut params, param, value)?;
        let old = std::mem::replace(&mut self.params, params);
        if let Err(e) = self.apply_params() {
            self.params = old;
            return Err(e);
        }
        Ok(())
    }

    pub fn explain_pick(&self, next: Option<(VcpuId, RunKind)>, time: u64, ctx: &Ctx) -> String {
        match next {
            Some((v, kind)) => {
                let c = &self.vcpus[v.0];
                let how = match kind {
                    RunKind::Edf => {
                        format!("EDF, deadline {:.3} ms, {} us of slice left", c.deadl as f64 / 1e6, c.budget() / 1000)
                    }
                    RunKind::ExtraPen => "L0 extra time (repaying a slice lost by blocking)".to_string(),
                    RunKind::ExtraUtil => "L1 extra time".to_string(),
                };
                format!("runs {} for {} us: {how}", ctx.name(v), time / 1000)
            }
            None => format!("idle for {} us", time / 1000),
        }
    }
}

impl Policy for Sedf {
    fn timers(&self) -> Timers {
        Timers { timer_slop: true, ..Timers::default() }
    }

    fn timed_idle(&self) -> bool {
        true
    }

    fn init_vcpu(&mut self, v: VcpuId, _ctx: &mut Ctx) -> PcpuId {
        self.vcpus[v.0].processor
    }

    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        let p = self.vcpus[v.0].processor;
        let running = ctx.host.running[p.0];
        if self.wake_vcpu(v, ctx.now.0, running) {
            ctx.resched(p);
        }
        let name = &ctx.host.vcpu_name[v.0];
        let label = self.sched_label(v).pri.label;
        ctx.note(p, |w| write!(w, "{name} woke on {cause}: {label}"));
    }

    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        let p = self.vcpus[v.0].processor;
        let running = ctx.host.running[p.0] == Some(v);
        self.sleep_vcpu(v, running);
        if running {
            ctx.resched(p);
        }
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now.0;
        self.desched(p, cur, cur_runnable, now);
        let (next, time) = self.default_pick(p, now);
        let slice = self.commit(p, next, time, now);
        let reason = if ctx.explain { self.explain_pick(next, slice.0, ctx) } else { String::new() };
        Pick { next: next.map(|(v, _)| v), slice, reason }
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        self.set(param, value)
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        self.sched_label(v)
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        self.queued(p, self.current[p.0])
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }

    fn share_rule(&self) -> ShareBasis {
        // Each vCPU's reservation as set at boot (a latency hint shrinks the period only for a while).
        let ndoms = self.vcpus.iter().map(|c| c.dom.0 + 1).max().unwrap_or(0);
        let mut reserved = vec![0.0; ndoms];
        for c in &self.vcpus {
            if c.period_orig > 0 {
                reserved[c.dom.0] += c.slice_orig as f64 / c.period_orig as f64;
            }
        }
        ShareBasis::Reserved(reserved)
    }
}

/// SEDF's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "sedf",
    caps: Caps::PLAIN,
    build: |s| registry::boxed(Sedf::new(s.params, s.pcpus, s.domains)),
    check_param: SedfParams::check_change,
    check_scenario: |sc, i, p| registry::check_named(sc, i, p, |v, names| check_params(v, names, &[])),
    params: params::declared::<SedfParams>(),
};

#[cfg(test)]
pub(crate) mod tests;

crate::size::no_heap!(SVcpu);
crate::size::heap_size!(Sedf { vcpus, runq, waitq, extraq, slice_expires, versions, current, domains });
