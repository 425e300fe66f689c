//! A recorded run: the events of a trace played, through a [`Mapping`], into the simulator's own structures, so
//! that it has a report made by the report code, a trace the page's views read, and what [`super::fit`] needs.
//!
//! Accounting follows `perf sched timehist`: a pCPU's time between two scheduling events on it belongs to whatever
//! ran there, and only from the first event on a pCPU to its last (what ran before or after is not in the trace).
//! So a thread's CPU time equals timehist's run time, and a domain's context switches are the times a pCPU
//! switched to one of its vCPUs from anything else (as the simulator counts them).

use super::mapping::{domain_name, Mapping, Model, Survey};
use super::wake::WakeToRun;
use super::{read_file, Event, Format, NotATrace, PrevState, ReadOptions, ReadSummary, Task};
use crate::metrics::{round6, Samples, Summary};
use crate::policy::PriClass;
use crate::report::{Report, RunOptions};
use crate::scenario::Scenario;
use crate::sim::{SimOptions, Simulation};
use crate::time::Nanos;
use crate::trace::{RqEntry, Segment, Trace, VcpuState, VcpuUsage};
use serde::Serialize;
use serde_json::{json, Value};
use std::borrow::Cow;
use std::collections::BTreeMap;
use std::io::{BufRead, Seek, SeekFrom};

/// Memory for the recorded trace's detail [bytes]; past it only the per-domain aggregate is kept (as for runs).
pub const TRACE_BUDGET_BYTES: usize = 32 << 20;
/// Distinct wakers remembered per vCPU (the rest are counted together).
const MAX_WAKERS: usize = 8;

/// What woke a vCPU, as [`super::fit`] reads it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Waker {
    /// Another vCPU of the model (global index).
    Vcpu(usize),
    /// Interrupt context (the idle task was current: a device or a timer).
    Interrupt,
    /// A thread outside the model, or the record did not say.
    Other,
}

/// What the replay measured of one vCPU, for fitting.
#[derive(Debug, Clone, Default)]
pub struct VcpuStats {
    /// CPU used from one wake-up to the next block [ns].
    pub bursts: Samples,
    /// Time blocked between a block and the wake-up that ended it [ns].
    pub sleeps: Samples,
    /// Wake-ups by their waker.
    pub wakers: BTreeMap<Waker, u64>,
    /// Time blocked [ns].
    pub blocked_ns: u64,
    /// Time runnable or running [ns] (from its first known state).
    pub active_ns: u64,
}

/// A trace read and played.
pub struct RecordedRun {
    pub format: Format,
    pub read: ReadSummary,
    pub mapping: Mapping,
    pub model: Model,
    /// The trace's first event [ns, trace clock]; every time below counts from it.
    pub t0_ns: u64,
    /// Last event [ns from `t0_ns`].
    pub end_ns: u64,
    pub trace: Trace,
    pub wake: WakeToRun,
    pub stats: Vec<VcpuStats>,
    /// CPU time of each vCPU [ns] and each domain's switches to it.
    pub cpu_ns: Vec<u64>,
    pub dom_switches: Vec<u64>,
    pub busy_ns: u64,
    usage: VcpuUsage,
}

/// A pCPU as the replay tracks it.
#[derive(Debug, Clone, Default)]
struct Pcpu {
    /// Whether a scheduling event on it said what runs there.
    known: bool,
    /// The model's vCPU running there (None: idle or a thread outside the model).
    cur: Option<usize>,
    since: u64,
    /// Runnable vCPUs queued there.
    queue: Vec<usize>,
}

/// A vCPU as the replay tracks it.
#[derive(Debug, Clone, Copy, Default)]
struct VState {
    state: Option<VcpuState>,
    since: u64,
    cpu: Option<u32>,
    burst: u64,
}

struct Replayer<'m> {
    model: &'m Model,
    t0: u64,
    pcpus: Vec<Pcpu>,
    v: Vec<VState>,
    run: RecordedRun,
}

impl RecordedRun {
    /// Reads a trace twice (a survey, then the replay), both times streaming: any `BufRead + Seek` (a file, or
    /// bytes in a `Cursor`). Without a mapping the default one ([`Mapping::propose`]) is used.
    pub fn load<R: BufRead + Seek>(
        mut r: R,
        opts: &ReadOptions,
        mapping: Option<Mapping>,
    ) -> Result<RecordedRun, String> {
        let err = |e: NotATrace| e.0;
        let mut survey: Option<Survey> = None;
        let (mut first, mut last) = (u64::MAX, 0u64);
        let (format, first_read) = read_file(&mut r, opts, &mut |e: &Event<'_>| {
            let s = survey.get_or_insert_with(|| {
                Survey::new(matches!(e, Event::Run { .. } | Event::Stop { .. } | Event::Note { .. }))
            });
            s.add(e);
            first = first.min(e.t_ns());
            last = last.max(e.t_ns());
        })
        .map_err(err)?;
        let Some(mut survey) = survey else {
            // Damage before the first event says more than "no events".
            return Err(match first_read.damage {
                Some(d) => d.message,
                None => "the trace has no scheduling events (sched_switch, sched_wakeup, runstate changes)".to_string(),
            });
        };
        survey.xen = format == Format::Xentrace;
        let mapping = mapping.unwrap_or_else(|| Mapping::propose(&survey));
        let model = mapping.resolve(&survey)?;
        let end_ns = last.saturating_sub(first);
        if end_ns > 3_600 * 1_000_000_000 {
            return Err(format!("the trace spans {} s; a run is at most one hour", end_ns / 1_000_000_000));
        }
        r.seek(SeekFrom::Start(0)).map_err(|e| format!("cannot read the trace again: {e}"))?;
        let mut rp = Replayer::new(&model, format, mapping.clone(), first, end_ns);
        let (_, read) = read_file(&mut r, opts, &mut |e: &Event<'_>| rp.add(e)).map_err(err)?;
        let mut run = rp.finish();
        run.read = read;
        run.model = model;
        Ok(run)
    }

    /// The same from bytes.
    pub fn from_bytes(bytes: &[u8], opts: &ReadOptions, mapping: Option<Mapping>) -> Result<RecordedRun, String> {
        RecordedRun::load(std::io::Cursor::new(bytes), opts, mapping)
    }

    /// Which domain each global vCPU is in.
    pub fn vcpu_dom(&self) -> Vec<usize> {
        self.model.vcpus.iter().map(|v| v.domain).collect()
    }

    /// Each vCPU's task name in the report (`comm-tid`).
    pub fn task_names(&self) -> Vec<String> {
        let mut taken = Vec::new();
        self.model
            .vcpus
            .iter()
            .map(|v| {
                let comm: String = v.name.chars().take(20).collect();
                let id = if self.format == Format::Xentrace { v.thread & 0xffff } else { v.thread };
                let n = domain_name(&format!("{comm}-{id}"), &taken);
                taken.push(n.clone());
                n
            })
            .collect()
    }

    /// The mapped domains as a scenario's, each vCPU's thread a task pinned to it (named as `task_names` names it)
    /// whose workload `workload(domain, task, vCPU)` gives.
    pub fn domains_json(&self, mut workload: impl FnMut(&str, &str, usize) -> Value) -> Vec<Value> {
        let names = self.task_names();
        self.model
            .domains
            .iter()
            .map(|d| {
                let tasks: Vec<Value> = d
                    .vcpus
                    .iter()
                    .enumerate()
                    .map(|(i, &v)| json!({ "name": names[v], "vcpu": i, "workload": workload(&d.name, &names[v], v) }))
                    .collect();
                let mut dom = json!({ "name": d.name, "vcpus": d.vcpus.len(), "weight": d.weight, "tasks": tasks });
                if d.cap_pct > 0 {
                    dom["cap_pct"] = d.cap_pct.into();
                }
                dom
            })
            .collect()
    }

    /// The scenario the report is made against: the mapped domains, one busy-loop task per vCPU (pinned), one
    /// policy `recorded` whose share rule is by domain weight (Linux's cgroups, Xen Credit's 3.x default).
    pub fn scenario_value(&self, title: &str) -> Value {
        let domains = self.domains_json(|_, _, _| json!({ "type": "cpu" }));
        json!({
            "schema": 1, "id": "recorded", "title": title, "seed": 1,
            "duration_ms": self.end_ns.div_ceil(1_000_000).max(1), "warmup_ms": 0,
            "host": { "pcpus": self.model.pcpus },
            "domains": domains,
            "policies": [{ "id": "recorded", "label": "Recorded", "scheduler": "credit" }],
        })
    }

    /// The engine's structures for the mapped host, holding the replay's measurement instead of a run's: what the
    /// report code and the page's run metadata read.
    fn shell(&self, title: &str) -> Result<Simulation, String> {
        let scenario = Scenario::from_value(self.scenario_value(title)).map_err(|e| e.problems.join("; "))?;
        let opts = SimOptions { trace: false, ..SimOptions::default() };
        let mut sim = Simulation::with_options(&scenario, "recorded", opts).map_err(|e| e.to_string())?;
        let end = Nanos(self.end_ns.max(1));
        sim.now = end;
        sim.end = end;
        sim.warmup = Nanos::ZERO;
        let m = &mut sim.measure;
        m.busy_ns = self.busy_ns;
        m.usage = self.usage.clone();
        for (d, dom) in self.model.domains.iter().enumerate() {
            let dm = &mut m.dom_metrics[d];
            dm.context_switches = self.dom_switches[d];
            for &v in &dom.vcpus {
                dm.cpu_ns += self.cpu_ns[v];
                dm.blocked_ns += self.stats[v].blocked_ns;
                // One task per vCPU, in vCPU order.
                m.task_metrics[v].cpu_ns = self.cpu_ns[v];
            }
        }
        Ok(sim)
    }

    /// The run metadata the page labels a column with (pCPUs, domains, vCPUs, tasks, duration).
    pub fn meta(&self, title: &str) -> Result<crate::sim::Meta, String> {
        let mut meta = self.shell(title)?.meta();
        meta.policy = "recorded".to_string();
        meta.label = format!("Recorded: {title}");
        Ok(meta)
    }

    /// The run object of the report, made by the report code from the replay's measurement; with each domain's
    /// `wake_to_run_ms` and a `recorded` object (format, events, skipped, damage) added.
    pub fn report(&self, title: &str) -> Result<Value, String> {
        let sim = self.shell(title)?;
        let mut rr = sim.run_report(&RunOptions { deterministic: true, ..RunOptions::default() });
        rr.policy = "recorded".to_string();
        rr.scheduler = Some("recorded".to_string());
        rr.sim_ms = self.end_ns / 1_000_000;
        rr.events = self.read.events;
        let mut v = rr.to_value();
        add_wake_to_run(&mut v, &self.model.domains.iter().map(|d| d.name.clone()).collect::<Vec<_>>(), &self.wake);
        v["recorded"] = json!({
            "format": self.format,
            "window_ms": round6(self.end_ns as f64 / 1e6),
            "pcpus": self.model.pcpus,
            "read": self.read,
            "mapping": self.mapping,
        });
        Ok(v)
    }

    /// The whole report of the recorded run (`schedsim trace report`).
    pub fn full_report(&self, title: &str) -> Result<Report, String> {
        Ok(Report { scenario: format!("recorded:{title}"), runs: vec![self.report(title)?] })
    }
}

/// Adds each domain's `wake_to_run_ms` summary to a run object.
pub fn add_wake_to_run(run: &mut Value, domains: &[String], wake: &WakeToRun) {
    for (name, s) in domains.iter().zip(wake.summaries()) {
        if let (Some(d), Some(s)) = (run["domains"].get_mut(name), s) {
            d["wake_to_run_ms"] = serde_json::to_value(s).unwrap_or(Value::Null);
        }
    }
}

/// The summary of a domain's wake-to-run latencies [ms].
pub fn wake_summary(w: &WakeToRun, d: usize) -> Option<Summary> {
    Summary::of(&w.per_dom[d])
}

fn state_word(s: PrevState) -> &'static str {
    match s {
        PrevState::Runnable => "preempted",
        PrevState::Blocked => "blocked",
        PrevState::Dead => "exited",
    }
}

impl<'m> Replayer<'m> {
    fn new(model: &'m Model, format: Format, mapping: Mapping, t0: u64, end_ns: u64) -> Replayer<'m> {
        let nv = model.vcpus.len();
        let vcpu_dom: Vec<usize> = model.vcpus.iter().map(|v| v.domain).collect();
        let nd = model.domains.len();
        let mut trace =
            Trace::with_budget(model.pcpus as usize, vcpu_dom.clone(), nd, end_ns.max(1), TRACE_BUDGET_BYTES);
        trace.set_vcpu_names(model.vcpus.iter().map(|v| v.name.clone()).collect::<Vec<_>>().into());
        let run = RecordedRun {
            format,
            read: ReadSummary::default(),
            mapping,
            model: Model::default(),
            t0_ns: t0,
            end_ns,
            trace,
            wake: WakeToRun::new(vcpu_dom, nd),
            stats: vec![VcpuStats::default(); nv],
            cpu_ns: vec![0; nv],
            dom_switches: vec![0; nd],
            busy_ns: 0,
            usage: VcpuUsage::new(nv, end_ns.max(1)),
        };
        Replayer { model, t0, pcpus: vec![Pcpu::default(); model.pcpus as usize], v: vec![VState::default(); nv], run }
    }

    fn vcpu(&self, t: &Task<'_>) -> Option<usize> {
        if t.idle {
            return None;
        }
        self.model.vcpu_of.get(&t.id).copied()
    }

    fn pcpu(&mut self, cpu: u32) -> Option<&mut Pcpu> {
        self.pcpus.get_mut(cpu as usize)
    }

    /// vCPU `v` enters `state` at `t`.
    fn set_state(&mut self, v: usize, state: VcpuState, t: u64) {
        let vs = &mut self.v[v];
        if vs.state == Some(state) {
            return;
        }
        let stats = &mut self.run.stats[v];
        match vs.state {
            Some(VcpuState::Blocked) => {
                stats.blocked_ns += t.saturating_sub(vs.since);
                stats.sleeps.push(t.saturating_sub(vs.since));
            }
            Some(_) => stats.active_ns += t.saturating_sub(vs.since),
            None => {}
        }
        if state == VcpuState::Blocked && vs.state.is_some() {
            stats.bursts.push(std::mem::take(&mut vs.burst));
        }
        vs.state = Some(state);
        vs.since = t;
        self.run.wake.enter(v, state, t);
    }

    fn dequeue(&mut self, v: usize) {
        if let Some(c) = self.v[v].cpu {
            if let Some(p) = self.pcpus.get_mut(c as usize) {
                p.queue.retain(|&q| q != v);
            }
        }
    }

    /// Records pCPU `cpu`'s run queue (what runs, what waits) for the state lanes.
    fn snapshot(&mut self, cpu: u32, t: u64) {
        let Some(p) = self.pcpus.get(cpu as usize) else { return };
        let entry = |v: usize| RqEntry { vcpu: v as u32, pri: Cow::Borrowed(""), class: PriClass::Other, credit: None };
        let running = p.cur.map(entry);
        let queued: Vec<RqEntry> = p.queue.iter().map(|&v| entry(v)).collect();
        self.run.trace.push_runqueue(cpu as usize, t, running, &queued);
    }

    /// Whatever ran on `cpu` stops at `t`; `prev` (when it is the model's) is left in `state`. When `named`, the
    /// record named what ran (a switch's prev, possibly outside the model) and the time since the pCPU's last
    /// event is its, as timehist counts; otherwise it is whatever the pCPU was last seen to run.
    fn stop(&mut self, cpu: u32, t: u64, prev: Option<usize>, state: PrevState, named: bool) {
        let Some(p) = self.pcpu(cpu) else { return };
        let (known, cur, since) = (p.known, p.cur, p.since);
        p.cur = None;
        p.known = true;
        p.since = t;
        let ran = if named { prev } else { cur };
        if let (true, Some(v)) = (known, ran) {
            let len = t.saturating_sub(since);
            if len > 0 {
                self.run.cpu_ns[v] += len;
                self.run.busy_ns += len;
                self.v[v].burst += len;
                self.run.usage.add(v, since, t);
                self.run.trace.push_segment(Segment {
                    pcpu: cpu,
                    start: since,
                    end: t,
                    vcpu: v as u32,
                    task: v as i32,
                });
            }
        }
        // The state the switch gives the vCPU that left; one the pCPU ran that the record does not name (a
        // missed switch) is taken as preempted.
        let left = match (prev, cur) {
            (Some(p), _) => Some((p, state)),
            (None, Some(c)) => Some((c, PrevState::Runnable)),
            _ => None,
        };
        if let Some((v, state)) = left {
            match state {
                PrevState::Runnable => {
                    self.v[v].cpu = Some(cpu);
                    if let Some(p) = self.pcpu(cpu) {
                        if !p.queue.contains(&v) {
                            p.queue.push(v);
                        }
                    }
                    self.set_state(v, VcpuState::Runnable, t);
                }
                PrevState::Blocked | PrevState::Dead => {
                    self.dequeue(v);
                    self.set_state(v, VcpuState::Blocked, t);
                }
            }
        }
    }

    /// `next` (when it is the model's vCPU) runs on `cpu` from `t`.
    fn start(&mut self, cpu: u32, t: u64, next: Option<usize>) {
        if let Some(v) = next {
            self.dequeue(v);
            // Running somewhere else still (a missed switch): that pCPU stops counting it.
            if let Some(other) = self.v[v].cpu.filter(|&c| c != cpu && self.v[v].state == Some(VcpuState::Running)) {
                if let Some(p) = self.pcpu(other) {
                    if p.cur == Some(v) {
                        p.cur = None;
                    }
                }
            }
        }
        let Some(p) = self.pcpu(cpu) else { return };
        let was = p.cur;
        p.known = true;
        p.cur = next;
        p.since = t;
        if let Some(v) = next {
            if was != Some(v) {
                self.run.dom_switches[self.model.vcpus[v].domain] += 1;
            }
            self.v[v].cpu = Some(cpu);
            self.set_state(v, VcpuState::Running, t);
        }
    }

    /// The model's pCPU of a trace CPU.
    fn map_cpu(&self, cpu: u32) -> Option<u32> {
        self.model.pcpu_of.get(cpu as usize).copied().flatten()
    }

    fn add(&mut self, e: &Event<'_>) {
        let t = e.t_ns().saturating_sub(self.t0).min(self.run.end_ns);
        let mut e = *e;
        // Events on CPUs the mapping leaves out play no part, but a wake-up (it may target a pCPU of the model).
        match &mut e {
            Event::Switch { cpu, .. } | Event::Run { cpu, .. } | Event::Stop { cpu, .. } | Event::Note { cpu, .. } => {
                let Some(c) = self.map_cpu(*cpu) else { return };
                *cpu = c;
            }
            Event::Wake { cpu, target_cpu, .. } => {
                *target_cpu = target_cpu.and_then(|c| self.map_cpu(c));
                *cpu = self.map_cpu(*cpu).unwrap_or(u32::MAX);
            }
            Event::Migrate { to_cpu, .. } => *to_cpu = self.map_cpu(*to_cpu).unwrap_or(u32::MAX),
        }
        match e {
            Event::Switch { cpu, prev, prev_state, next, .. } => {
                let (pv, nv) = (self.vcpu(&prev), self.vcpu(&next));
                self.stop(cpu, t, pv, prev_state, true);
                self.start(cpu, t, nv);
                if pv.is_some() || nv.is_some() {
                    self.run.trace.push_decision_fmt(
                        t,
                        cpu as usize,
                        format_args!(
                            "{} {} ({}) -> {} {}",
                            prev.name,
                            prev.id,
                            state_word(prev_state),
                            next.name,
                            next.id
                        ),
                    );
                }
                self.snapshot(cpu, t);
            }
            Event::Run { cpu, task, .. } => {
                let v = self.vcpu(&task);
                // Whatever still ran here stops (a vCPU whose stop was not recorded yet is left preempted; its own
                // runstate change may follow and block it).
                self.stop(cpu, t, None, PrevState::Runnable, false);
                self.start(cpu, t, v);
                self.snapshot(cpu, t);
            }
            Event::Stop { cpu, task, state, .. } => {
                let v = self.vcpu(&task);
                let here = self.pcpus.get(cpu as usize).is_some_and(|p| p.cur == v && v.is_some());
                if here {
                    self.stop(cpu, t, v, state, true);
                } else if let Some(v) = v {
                    // Not running here (queued, or its run was not seen): only its state changes.
                    if state != PrevState::Runnable {
                        self.dequeue(v);
                        self.set_state(v, VcpuState::Blocked, t);
                    }
                }
                self.snapshot(cpu, t);
            }
            Event::Wake { cpu, task, target_cpu, waker, .. } => {
                let Some(v) = self.vcpu(&task) else { return };
                let waker = match waker {
                    Some(w) if w.idle => Waker::Interrupt,
                    Some(w) => self.vcpu(&w).map_or(Waker::Other, Waker::Vcpu),
                    None => Waker::Other,
                };
                let st = self.v[v].state;
                if st.is_none() {
                    self.set_state(v, VcpuState::Blocked, t);
                }
                if self.v[v].state == Some(VcpuState::Blocked) {
                    let wakers = &mut self.run.stats[v].wakers;
                    if wakers.contains_key(&waker) || wakers.len() < MAX_WAKERS {
                        *wakers.entry(waker).or_default() += 1;
                    } else {
                        *wakers.entry(Waker::Other).or_default() += 1;
                    }
                    let q = target_cpu.unwrap_or(cpu);
                    self.v[v].cpu = Some(q);
                    if let Some(p) = self.pcpu(q) {
                        p.queue.push(v);
                    }
                    self.set_state(v, VcpuState::Runnable, t);
                    self.snapshot(q, t);
                }
            }
            Event::Migrate { task, to_cpu, .. } => {
                let Some(v) = self.vcpu(&task) else { return };
                if self.v[v].state == Some(VcpuState::Runnable) {
                    let from = self.v[v].cpu;
                    self.dequeue(v);
                    self.v[v].cpu = Some(to_cpu);
                    if let Some(p) = self.pcpu(to_cpu) {
                        p.queue.push(v);
                    }
                    if let Some(f) = from {
                        self.snapshot(f, t);
                    }
                    self.snapshot(to_cpu, t);
                }
            }
            Event::Note { cpu, task, what, .. } => {
                if self.vcpu(&task).is_some() || what == "__enter_scheduler" {
                    self.run.trace.push_decision_fmt(t, cpu as usize, format_args!("{what} {}", task.name));
                }
            }
        }
    }

    fn finish(mut self) -> RecordedRun {
        let end = self.run.end_ns;
        for v in 0..self.v.len() {
            let vs = self.v[v];
            match vs.state {
                Some(VcpuState::Blocked) => self.run.stats[v].blocked_ns += end.saturating_sub(vs.since),
                Some(_) => self.run.stats[v].active_ns += end.saturating_sub(vs.since),
                None => {}
            }
        }
        self.run
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use std::io::Read;

    /// A fixture of `tests/fixtures`, gunzipped when it ends in `.gz`.
    pub(crate) fn fixture(path: &str) -> Vec<u8> {
        let full = format!("{}/tests/fixtures/{path}", env!("CARGO_MANIFEST_DIR"));
        let raw = std::fs::read(&full).unwrap_or_else(|e| panic!("{full}: {e}"));
        if !path.ends_with(".gz") {
            return raw;
        }
        let mut out = Vec::new();
        flate2::read::GzDecoder::new(&raw[..]).read_to_end(&mut out).unwrap();
        out
    }

    /// `perf sched timehist -s`'s per-task rows: tid -> (sched-in count, run time [ms]).
    pub(crate) fn timehist(text: &str) -> BTreeMap<u64, (u64, f64)> {
        let mut out = BTreeMap::new();
        for l in text.lines() {
            let Some((who, rest)) = l.rsplit_once(']') else { continue };
            let Some((_, ids)) = who.rsplit_once('[') else { continue };
            let tid = ids.split('/').next().and_then(|t| t.parse::<u64>().ok());
            let cols: Vec<&str> = rest.split_whitespace().collect();
            if let (Some(tid), Some(count), Some(run)) =
                (tid, cols.get(1).and_then(|c| c.parse().ok()), cols.get(2).and_then(|c| c.parse().ok()))
            {
                out.insert(tid, (count, run));
            }
        }
        out
    }

    #[test]
    fn perf_trace_matches_timehist() {
        let text = fixture("perf/sched.perf-script.txt.gz");
        let mapping: Mapping = serde_json::from_slice(&fixture("perf/sched.mapping.json")).unwrap();
        let run = RecordedRun::from_bytes(&text, &ReadOptions::default(), Some(mapping)).unwrap();
        assert!(run.read.damage.is_none());
        assert!(run.read.skipped.contains_key("sched_stat_runtime"));
        let expected = timehist(&String::from_utf8(fixture("perf/sched.timehist.txt")).unwrap());
        let report = run.report("sched").unwrap();
        let names = run.task_names();
        for (v, vc) in run.model.vcpus.iter().enumerate() {
            let (count, run_ms) = expected[&vc.thread];
            let dom = &run.model.domains[vc.domain].name;
            let got = report["tasks"][format!("{dom}/{}", names[v])]["cpu_ms"].as_f64().unwrap();
            // timehist prints whole microseconds, truncated.
            assert!(
                ((got * 1000.0).floor() / 1000.0 - run_ms).abs() < 1e-9,
                "{}: {got} ms vs timehist {run_ms}",
                vc.name
            );
            // timehist's count is of switches away from the thread, the report's of switches to it: within one
            // (the window cuts a run at each end).
            if run.model.domains[vc.domain].vcpus.len() == 1 {
                let got = report["domains"][dom]["context_switches"].as_u64().unwrap();
                assert!(got.abs_diff(count) <= 1, "{}: {got} switches vs timehist {count}", vc.name);
            }
        }
        eprintln!("{}", serde_json::to_string_pretty(&report["domains"]).unwrap());
    }

    #[test]
    fn xentrace_run_measures_what_was_written() {
        // 100 ms: pCPU 0 has 50 periods of 2 ms (d2 runs 200 us of each, 10 us after waking), pCPU 1 alternates
        // d1v1 (30 ms) and d3v0 (10 ms).
        let bytes = crate::recorded::xentrace::synthetic(100, 2_000, 7);
        let run = RecordedRun::from_bytes(&bytes, &ReadOptions::default(), None).unwrap();
        assert_eq!(run.format, Format::Xentrace);
        let names: Vec<&str> = run.model.domains.iter().map(|d| d.name.as_str()).collect();
        assert_eq!(names, vec!["d1", "d2", "d3"]);
        let r = run.report("synthetic").unwrap();
        let cpu = |d: &str| r["domains"][d]["cpu_ms"].as_f64().unwrap();
        assert_eq!(cpu("d2"), 50.0 * 0.2);
        // d1v0 has the rest of pCPU 0; d1v1 30+10... of pCPU 1: 30, 40-70, 80-100 = 80 ms.
        assert_eq!(cpu("d1"), 100.0 - 10.0 + 80.0);
        assert_eq!(cpu("d3"), 20.0);
        let w = &r["domains"]["d2"]["wake_to_run_ms"];
        assert_eq!((w["count"].as_u64(), w["p50"].as_f64(), w["p99"].as_f64()), (Some(50), Some(0.01), Some(0.01)));
        assert_eq!(r["domains"]["d2"]["context_switches"].as_u64(), Some(50));
        assert!(run.trace.decision_count() > 100, "boosts and switches in the decision log");
        assert_eq!(r["recorded"]["read"]["skipped"], serde_json::json!({}));
        // The committed fixture is this file (written by the helper; no real Xen host was traced).
        let path = format!("{}/tests/fixtures/xentrace/synthetic.xt", env!("CARGO_MANIFEST_DIR"));
        if std::env::var_os("SCHEDSIM_WRITE_FIXTURES").is_some() {
            std::fs::write(&path, &bytes).unwrap();
        }
        assert_eq!(fixture("xentrace/synthetic.xt"), bytes, "regenerate with SCHEDSIM_WRITE_FIXTURES=1");
    }
}
