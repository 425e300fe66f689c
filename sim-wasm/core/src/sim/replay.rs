//! Record little, replay on demand. A run in [`Detail::Replay`] mode records only what the overview
//! reads (the measurement, the per-domain CPU aggregate, the decision count, the inference's beliefs and partial
//! boosts in time buckets: [`crate::overview`]) and keeps checkpoints of its whole
//! state at fixed boundaries of simulated time. [`Simulation::focus`] clones the checkpoint at or before a window
//! and runs it with full detail to the window's end: the simulation is deterministic (seeded streams, a queue
//! ordered by time and insertion), so the window's detail is the one a full trace would hold.

use super::*;

/// How much detail a run records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Detail {
    /// The whole trace, within its memory budget (`SimOptions::trace_budget_bytes`).
    #[default]
    Full,
    /// The overview, plus a checkpoint every `checkpoint_every_ns` [ns] (further apart once their memory budget
    /// is reached); [`Simulation::focus`] replays a window's detail.
    Replay { checkpoint_every_ns: u64 },
}

/// Default memory budget of a replay run's checkpoints [bytes].
pub const DEFAULT_CHECKPOINT_BUDGET_BYTES: usize = 64 << 20;

/// The run's state when every event before `at` was processed and none at or after it.
struct Checkpoint {
    /// [ns]
    at: Nanos,
    /// The host has not booted yet (the checkpoint at 0, so that a replay from it records the boot).
    boot: bool,
    state: Box<Simulation>,
    /// Heap size estimate of `state` [bytes].
    bytes: usize,
}

/// The detail of one window of a replay run: replayed from a checkpoint, or recorded as the run passed it.
pub struct Window {
    /// The checkpoint the replay started from: detail is complete from here [ns].
    from: Nanos,
    /// The replay stopped here: detail is complete before it [ns].
    to: Nanos,
    trace: Trace,
}

impl Window {
    /// Where the window's detail is complete: `from <= t < to` [ns].
    pub fn held(&self) -> (u64, u64) {
        (self.from.0, self.to.0)
    }

    /// The window's detail, asked as a whole trace is.
    pub fn trace(&self) -> &Trace {
        &self.trace
    }

    /// What the window keeps in memory [bytes].
    pub fn heap_bytes(&self) -> usize {
        crate::size::HeapSize::heap_size(&self.trace)
    }
}

/// A replay run's checkpoints and its focused window.
pub(super) struct Replay {
    /// Current distance between checkpoints [ns].
    every: Nanos,
    next_at: Nanos,
    checkpoints: Vec<Checkpoint>,
    /// Sum of the checkpoints' `bytes`.
    bytes: usize,
    budget: usize,
    window: Option<Window>,
    /// The end of the opening window while the run records it [ns].
    opening: Option<Nanos>,
}

impl Replay {
    /// Starts with a checkpoint of `sim` before it boots; `opening`: the end of the opening window it records.
    pub(super) fn new(sim: &Simulation, every_ns: u64, budget: usize, opening: Option<Nanos>) -> Replay {
        let every = Nanos(every_ns.max(1));
        let (checkpoints, window) = (Vec::new(), None);
        let mut r = Replay { every, next_at: every, checkpoints, bytes: 0, budget, window, opening };
        r.add(Nanos::ZERO, true, sim.snapshot());
        r
    }

    /// The next boundary the run stops at: a checkpoint's, or the opening window's end [ns].
    pub(super) fn next_stop(&self) -> Nanos {
        self.opening.map_or(self.next_at, |o| o.min(self.next_at))
    }

    pub(super) fn window_trace(&self) -> Option<&Trace> {
        self.window.as_ref().map(|w| &w.trace)
    }

    fn add(&mut self, at: Nanos, boot: bool, state: Simulation) {
        let bytes = state.heap_bytes();
        self.bytes += bytes;
        self.checkpoints.push(Checkpoint { at, boot, state: Box::new(state), bytes });
        self.next_at = at + self.every;
        // Over budget: keep every other checkpoint (the first stays) and space the next ones twice as far apart.
        while self.bytes > self.budget && self.checkpoints.len() > 1 {
            let mut k = 0;
            self.checkpoints.retain(|_| {
                k += 1;
                k % 2 == 1
            });
            self.bytes = self.checkpoints.iter().map(|c| c.bytes).sum();
            self.every = self.every + self.every;
            let last = self.checkpoints.last().map_or(Nanos::ZERO, |c| c.at);
            self.next_at = last + self.every;
        }
    }

    /// Checkpoints kept, and their total size estimate [bytes].
    pub(super) fn retained(&self) -> (usize, usize) {
        (self.checkpoints.len(), self.bytes)
    }
}

impl Simulation {
    /// A copy of the state that drives the run, without what it records: the trace is empty and the measurement
    /// new (nothing in the run reads either to decide), and the scenario is shared.
    fn snapshot(&self) -> Simulation {
        let pcpus = self.host.pcpus.len();
        let vcpu_dom = self.host.vcpu_dom.iter().map(|d| d.0).collect();
        let ndom = self.host.dom_info.len();
        Simulation {
            scenario: Arc::clone(&self.scenario),
            policy_id: self.policy_id.clone(),
            now: self.now,
            end: self.end,
            warmup: self.warmup,
            queue: self.queue.clone(),
            guest_events: self.queue.compact_owners(&self.guest_events),
            debug_counts: None,
            events: self.events,
            event_budget: self.event_budget,
            scanned: self.scanned.clone(),
            work_limit: self.work_limit,
            finished: self.finished,
            policy: self.policy.clone(),
            costs: self.costs,
            actions: self.actions.clone(),
            action_batch: Vec::new(),
            marks: self.marks,
            notes: policy::Notes::default(),
            fault: None,
            host: self.host.clone(),
            guests: self.guests.clone(),
            io: self.io.clone(),
            measure: Measurement::new(ndom, self.guests.tasks.len(), self.host.vcpus.len(), Nanos::ZERO),
            rec: Recording::new(Trace::detail_only(pcpus, vcpu_dom, ndom), false, pcpus),
            replay: None,
        }
    }

    /// At a boundary `at` (every event before it processed, none after it): ends the opening window if it ends
    /// here, and checkpoints the state if one is due here.
    pub(super) fn at_boundary(&mut self, at: Nanos) {
        if self.replay.as_ref().is_some_and(|r| r.opening == Some(at)) {
            self.end_opening(at);
        }
        if self.replay.as_ref().is_some_and(|r| r.next_at == at) {
            self.take_checkpoint();
        }
    }

    /// Ends the opening window at `at` if it is being recorded: the segments still open end there (as a replay's
    /// do at its window's end; the run's measurement only sees each split in two), the detail recorded becomes
    /// the focused window, and the run records no detail from here on.
    pub(super) fn end_opening(&mut self, at: Nanos) {
        if self.replay.as_ref().is_none_or(|r| r.opening.is_none()) {
            return;
        }
        self.now = at;
        for p in 0..self.host.pcpus.len() {
            self.close_segment(PcpuId(p));
        }
        let trace = self.rec.trace.take_detail();
        self.rec.on = false;
        if let Some(r) = self.replay.as_mut() {
            r.opening = None;
            r.window = Some(Window { from: Nanos::ZERO, to: at, trace });
        }
    }

    /// Checkpoints the state at the replay's next boundary (every event before it has been processed).
    fn take_checkpoint(&mut self) {
        let state = self.snapshot();
        if let Some(r) = self.replay.as_mut() {
            let at = r.next_at;
            r.add(at, false, state);
        }
    }

    /// Makes the detail of `[from_ns, to_ns)` available to the detail queries ([`Simulation::detail`]). In
    /// [`Detail::Replay`] mode it replays from the nearest checkpoint at or before `from_ns`, untraced up to
    /// `from_ns` and with full detail from there to `to_ns` (unless the window held already covers it), and
    /// returns true. In [`Detail::Full`] mode nothing is replayed: true when the trace holds that stretch's detail
    /// (recorded, and within its budget).
    pub fn focus(&mut self, from_ns: u64, to_ns: u64) -> Result<bool, SimError> {
        let to = Nanos(to_ns.min(self.end.0));
        let from = Nanos(from_ns.min(to.0));
        let Some(r) = self.replay.as_mut() else {
            return Ok(self.rec.on && self.rec.trace.detail_until_ns.is_none_or(|u| u >= to.0));
        };
        if r.window.as_ref().is_some_and(|w| w.from <= from && to <= w.to) {
            return Ok(true);
        }
        // The window held goes before the new one is recorded, so the two never take memory at once (a wasm
        // module's memory only grows: its peak is what a page keeps). Should the replay fail, no window is held.
        r.window = None;
        let window = self.replay_window(from.0, to.0)?;
        if let Some(r) = self.replay.as_mut() {
            r.window = window;
        }
        Ok(true)
    }

    /// The detail of `[from_ns, to_ns)` (cut to the run), replayed from the nearest checkpoint at or before
    /// `from_ns`, untraced up to `from_ns` and with full detail from there to `to_ns`, as a window of its own:
    /// the run itself is left as it was, so a caller may keep several. `None` in [`Detail::Full`] mode.
    pub fn replay_window(&self, from_ns: u64, to_ns: u64) -> Result<Option<Window>, SimError> {
        let to = Nanos(to_ns.min(self.end.0));
        let from = Nanos(from_ns.min(to.0));
        let Some(r) = self.replay.as_ref() else { return Ok(None) };
        let i = r.checkpoints.partition_point(|c| c.at <= from).saturating_sub(1);
        let cp = &r.checkpoints[i];
        let mut sim = cp.state.snapshot();
        let pcpus = sim.host.pcpus.len();
        let vcpu_dom = sim.host.vcpu_dom.iter().map(|d| d.0).collect();
        let mut trace = Trace::detail_only(pcpus, vcpu_dom, sim.host.dom_info.len());
        trace.set_vcpu_names(sim.host.vcpu_name.as_slice().into());
        // Detail is recorded from the window's start only: past the budget checkpoints are thinned and lie far
        // apart (bench-large over an hour: 16 s), and recording from the checkpoint held that whole stretch's detail
        // (a 1 s window then cost 0.7 M segments and hundreds of MB).
        let from_boot = cp.boot && from == cp.at;
        sim.rec = Recording::new(trace, from_boot, pcpus);
        if cp.boot {
            sim.boot();
        }
        if !from_boot {
            while let Some((at, ev)) = sim.queue.pop_before(from) {
                sim.process(at, ev)?;
            }
            // Run queues as they stand at the window's start, so it answers for its first instants too; segments
            // open there keep their start, as in a whole trace.
            sim.now = from;
            sim.rec.on = true;
            sim.rec.rq_dirty = true;
            sim.snapshot_runqueues();
        }
        while let Some((at, ev)) = sim.queue.pop_before(to) {
            sim.process(at, ev)?;
        }
        // Segments still open at the window's end end there.
        sim.now = to;
        for p in 0..pcpus {
            sim.close_segment(PcpuId(p));
        }
        let trace = std::mem::replace(&mut sim.rec.trace, Trace::detail_only(0, Vec::new(), 0));
        Ok(Some(Window { from, to, trace }))
    }

    /// Hands over the window held (a run's opening window, recorded as it passed), leaving none held.
    pub fn take_window(&mut self) -> Option<Window> {
        self.replay.as_mut()?.window.take()
    }

    /// The window of detail held: (from, to) [ns], detail complete for `from <= t < to`; `None` in full mode.
    pub fn focused(&self) -> Option<(u64, u64)> {
        let r = self.replay.as_ref()?;
        Some(r.window.as_ref().map_or((0, 0), |w| (w.from.0, w.to.0)))
    }

    /// What the run keeps in memory [bytes]: its trace (detail and the share aggregate), its measurement (the
    /// distributions, the per-vCPU usage behind Lag), and in replay mode the inference buckets, the checkpoints
    /// and the focused window.
    pub fn retained_bytes(&self) -> usize {
        use crate::size::HeapSize;
        let m = &self.measure;
        let replay = self.replay.as_ref().map_or(0, |r| {
            r.bytes
                + r.checkpoints.capacity() * std::mem::size_of::<Checkpoint>()
                + r.window_trace().map_or(0, HeapSize::heap_size)
        });
        self.rec.trace.heap_size()
            + self.rec.inference.as_ref().map_or(0, InferenceBuckets::heap_bytes)
            + m.dom_metrics.heap_size()
            + m.task_metrics.heap_size()
            + m.usage.heap_size()
            + replay
    }

    /// Checkpoints kept and their size estimate [bytes] (replay mode; zeros in full mode).
    pub fn checkpoints(&self) -> (usize, usize) {
        self.replay.as_ref().map_or((0, 0), |r| r.retained())
    }
}

impl Simulation {
    /// Heap size of the state a checkpoint keeps (the simulation value itself included) [bytes]: the recording
    /// and measurement parts are the empty ones a snapshot gets, and the scenario is shared, so neither counts.
    pub(super) fn heap_bytes(&self) -> usize {
        use crate::size::HeapSize;
        let host = &self.host;
        let (guests, io) = (&self.guests, &self.io);
        std::mem::size_of::<Simulation>()
            + self.queue.heap_bytes()
            + self.guest_events.heap_size()
            + self.policy.heap_size()
            + self.actions.heap_size()
            + host.pcpus.heap_size()
            + host.running.heap_size()
            + host.vcpus.heap_size()
            + host.vcpu_dom.heap_size()
            + host.vcpu_name.heap_size()
            + host.dom_info.heap_size()
            + host.kinds.heap_size()
            + host.timing.heap_size()
            + guests.tasks.heap_size()
            + guests.groups.heap_size()
            + guests.locks.heap_size()
            + guests.kernel.len() * std::mem::size_of::<GuestSpec>()
            + io.plugged.heap_size()
            + io.peers.heap_size()
            + io.driver_task_of.heap_size()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::overview;
    use crate::report::{with_overrides, RunOptions};
    use crate::trace::{RqSnap, Segment};

    const MS: u64 = 1_000_000;

    fn load(file: &str, duration_ms: u64) -> Scenario {
        let path = format!("{}/../../scenarios/{file}", env!("CARGO_MANIFEST_DIR"));
        let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
        let mut sc = Scenario::from_json(&text).unwrap();
        // Short runs, measured from the start: the test is about the trace, not the figures.
        sc.warmup_ms = 0;
        let opts = RunOptions { duration_ms: Some(duration_ms), ..RunOptions::default() };
        with_overrides(&sc, &opts).unwrap()
    }

    fn run(sc: &Scenario, policy: &str, detail: Detail) -> Simulation {
        let opts = SimOptions { detail, ..SimOptions::default() };
        let mut sim = Simulation::with_options(sc, policy, opts).unwrap();
        sim.run().unwrap();
        sim
    }

    /// Segments overlapping `[from, to)`, cut to it (a replay starts its first segment of each pCPU at the
    /// checkpoint, where the full trace may have merged it with the stretch before).
    fn clipped(t: &Trace, from: u64, to: u64) -> Vec<Segment> {
        let mut out: Vec<Segment> = t
            .segments()
            .iter()
            .filter(|s| s.start < to && s.end > from)
            .map(|s| Segment { start: s.start.max(from), end: s.end.min(to), ..*s })
            .collect();
        out.sort_by_key(|s| (s.pcpu, s.start));
        out
    }

    /// A run-queue snapshot as seen at a time within `[from, ..)`: its start cut to `from` (a replay's first
    /// snapshot is taken at its checkpoint).
    fn rq_at(t: &Trace, at: u64, from: u64) -> Vec<Option<RqSnap>> {
        t.runqueues_at(at).into_iter().map(|s| s.map(|s| RqSnap { t_ns: s.t_ns.max(from), ..s.clone() })).collect()
    }

    /// Every detail query over `[from, to)` answers the same from the replayed window as from the full trace.
    fn assert_window_equal(full: &Simulation, replay: &mut Simulation, from: u64, to: u64, what: &str) {
        assert!(replay.focus(from, to).unwrap(), "{what}: focus");
        let (f, r) = (full.detail(), replay.detail());
        let (held_from, held_to) = replay.focused().unwrap();
        assert!(held_from <= from && to <= held_to.max(to), "{what}: held {held_from}..{held_to}");
        assert_eq!(clipped(f, from, to), clipped(r, from, to), "{what}: segments");
        let (fd, rd) = (f.decisions(from, to, usize::MAX), r.decisions(from, to, usize::MAX));
        assert!(!fd.is_empty() || !clipped(f, from, to).is_empty(), "{what}: an empty window tests nothing");
        assert_eq!(fd, rd, "{what}: decisions");
        assert_eq!(f.io_events(from, to, usize::MAX), r.io_events(from, to, usize::MAX), "{what}: I/O events");
        assert_eq!(f.task_states(from, to, usize::MAX), r.task_states(from, to, usize::MAX), "{what}: task states");
        let within = |t: u64| (from..to).contains(&t);
        let beliefs = |t: &Trace| t.beliefs(None).into_iter().filter(|b| within(b.t_ns)).collect::<Vec<_>>();
        assert_eq!(beliefs(f), beliefs(r), "{what}: beliefs");
        let boosts = |t: &Trace| t.boosts().iter().filter(|b| within(b.t_ns)).copied().collect::<Vec<_>>();
        assert_eq!(boosts(f), boosts(r), "{what}: boosts");
        // The state lanes and the run queues' steps (the page's readable motion) read the same snapshots; a state
        // that began before the window starts at its edge in the replay.
        let states = |t: &Trace| {
            let v = t.vcpu_states_flat(from, to, usize::MAX, (0, u64::MAX));
            v.chunks(4).map(|c| [c[0], c[1].max(from as f64), c[2], c[3]]).collect::<Vec<_>>()
        };
        assert_eq!(states(f), states(r), "{what}: vCPU states");
        let changes = |t: &Trace| serde_json::to_string(&t.runqueue_changes(from, to, usize::MAX)).unwrap();
        assert_eq!(changes(f), changes(r), "{what}: run-queue steps");
        let mut times: Vec<u64> = fd.iter().map(|d| d.t_ns).chain([from, from + 1, to - 1]).collect();
        times.dedup();
        for t in times {
            assert_eq!(rq_at(f, t, from), rq_at(r, t, from), "{what}: run queues at {t} ns");
        }
    }

    /// The replay-equals-trace test: for paper scenarios under Credit, TAVS (task-aware, with network I/O), SEDF
    /// and the enhanced scheme (disk I/O), the hybrid co-scheduler, gang, xenco and xBalloon, windows from the
    /// boot, starting exactly at a checkpoint, spanning two checkpoints and ending at the run's end all equal the
    /// full trace, and so does an opening window recorded as the run passes it; the replay runs' reports,
    /// shares and inference buckets equal the full run's.
    #[test]
    fn replayed_windows_equal_the_full_trace() {
        let cases = [
            ("p000-fig10-partial-boost.json", "tavs", 700),
            ("p000-fig10-partial-boost.json", "credit", 700),
            ("p000-fig7a-idd-starvation.json", "pi", 700),
            ("p003-table4-disk-stress.json", "sedf", 700),
            ("p003-table4-disk-stress.json", "enhanced", 700),
            ("p001-fig7-lu.json", "con", 700),
            ("p001-fig7-lu.json", "gang", 700),
            ("p004-fig6-streaming.json", "xenco", 700),
            ("p002-io-cpu-xballoon.json", "xballoon", 700),
        ];
        for (file, policy, ms) in cases {
            assert_replays_equal_the_trace(file, &load(file, ms), policy, ms);
        }
    }

    /// A scripted column replays exactly too: the fair-share template (its state is a Rhai map, copied with the
    /// checkpoints) on paper 000's Fig. 10 host, with network I/O.
    #[test]
    fn replayed_windows_equal_the_full_trace_for_a_script() {
        let file = "p000-fig10-partial-boost.json";
        let mut sc = load(file, 700);
        let t = crate::policy::script::TEMPLATES.iter().find(|t| t.id == "fair_share").unwrap();
        sc.policies = vec![crate::scenario::PolicySpec {
            id: "fs".into(),
            label: None,
            scheduler: "script".into(),
            params: t.params(),
        }];
        sc.changes.clear();
        sc.claims.clear();
        assert_replays_equal_the_trace(file, &sc, "fs", 700);
    }

    /// The body of the replay-equals-trace tests for one policy of a scenario run for `ms`.
    fn assert_replays_equal_the_trace(file: &str, sc: &Scenario, policy: &str, ms: u64) {
        {
            let sc = sc.clone();
            let full = run(&sc, policy, Detail::Full);
            let mut replay = run(&sc, policy, Detail::Replay { checkpoint_every_ns: 100 * MS });
            let det = RunOptions { deterministic: true, ..RunOptions::default() };
            let (a, b) = (full.run_report(&det), replay.run_report(&det));
            assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&b).unwrap(), "{file} {policy}");
            assert_eq!(full.trace().share_series(10 * MS), replay.trace().share_series(10 * MS));
            // The overview's inference buckets equal the full trace's beliefs and boosts at the same bucketing.
            let (fi, ri) = (full.inference_buckets(), replay.inference_buckets());
            assert_eq!(fi, ri, "{file} {policy}: inference buckets");
            let infers = full.belief_threshold().is_some();
            assert_eq!(infers, !fi.belief_buckets().is_empty(), "{file} {policy}: beliefs tested");
            assert!(replay.detail().segments().is_empty(), "no detail before a focus");
            let end = ms * MS;
            for (from, to) in [(0, 40 * MS), (300 * MS, 360 * MS), (250 * MS, 420 * MS), (end - 70 * MS, end)] {
                assert_window_equal(&full, &mut replay, from, to, &format!("{file} {policy} {from}..{to}"));
            }
            // A run that records its opening window as it passes (ending between checkpoints) holds it without a
            // replay, equal to the full trace; its report and overview are the others', and it replays the rest.
            let opts = SimOptions {
                detail: Detail::Replay { checkpoint_every_ns: 100 * MS },
                opening_ns: 130 * MS,
                ..SimOptions::default()
            };
            let mut opening = Simulation::with_options(&sc, policy, opts).unwrap();
            opening.run().unwrap();
            assert_eq!(opening.focused(), Some((0, 130 * MS)), "{file} {policy}: opening held");
            let c = opening.run_report(&det);
            assert_eq!(serde_json::to_string(&a).unwrap(), serde_json::to_string(&c).unwrap(), "{file} {policy}");
            assert_eq!(full.trace().share_series(10 * MS), opening.trace().share_series(10 * MS));
            assert_eq!(full.inference_buckets(), opening.inference_buckets(), "{file} {policy}: inference");
            for (from, to) in [(0, 130 * MS), (20 * MS, 90 * MS), (250 * MS, 420 * MS)] {
                assert_window_equal(&full, &mut opening, from, to, &format!("{file} {policy} opening {from}..{to}"));
            }
            // Replayed from the checkpoint at 200 ms, recorded from the window's start only.
            assert_eq!(opening.focused(), Some((250 * MS, 420 * MS)), "{file} {policy}: replayed past the opening");
        }
    }

    /// Windows replayed apart leave the run as it was: two of them, asked in either order, each hold what the
    /// full trace holds there, and the opening window can be handed over whole.
    #[test]
    fn windows_replayed_apart_are_independent_and_equal_the_full_trace() {
        let sc = load("p000-fig10-partial-boost.json", 700);
        let full = run(&sc, "tavs", Detail::Full);
        let opts = SimOptions {
            detail: Detail::Replay { checkpoint_every_ns: 100 * MS },
            opening_ns: 130 * MS,
            ..SimOptions::default()
        };
        let mut sim = Simulation::with_options(&sc, "tavs", opts).unwrap();
        sim.run().unwrap();
        let opening = sim.take_window().unwrap();
        assert_eq!(opening.held(), (0, 130 * MS));
        assert_eq!(sim.focused(), Some((0, 0)), "handed over: none held");
        let (a, b) = ((250 * MS, 420 * MS), (520 * MS, 610 * MS));
        let wb = sim.replay_window(b.0, b.1).unwrap().unwrap();
        let wa = sim.replay_window(a.0, a.1).unwrap().unwrap();
        for (w, (from, to)) in [(&opening, (0, 130 * MS)), (&wa, a), (&wb, b)] {
            assert_eq!(w.held(), (from, to));
            let (f, r) = (full.detail(), w.trace());
            assert_eq!(clipped(f, from, to), clipped(r, from, to), "{from}..{to}: segments");
            assert_eq!(f.decisions(from, to, usize::MAX), r.decisions(from, to, usize::MAX), "{from}..{to}");
            assert!(w.heap_bytes() > 0);
        }
    }

    /// The heat map's wake-to-run latencies are the state lanes' wake marks (blocked, then runnable and dispatched
    /// or at once on a pCPU), counted per domain and column; a replayed window's map equals the full trace's.
    #[test]
    fn the_wake_latency_map_counts_the_state_lanes_wake_ups() {
        use crate::trace::VcpuState::{Blocked, Runnable, Running, Spinning};
        let sc = load("p003-table5-dom0-idle.json", 300);
        let full = run(&sc, "credit", Detail::Full);
        let (from, to, buckets) = (100 * MS, 200 * MS, 10);
        let all = (0, u64::MAX);
        let map = full.trace().wake_latency_map(from, to, buckets, all);
        let ndom = sc.domains.len();
        assert_eq!(map.len(), ndom * buckets * 3);
        // The same wake-ups from the spans, as the page's state lanes mark them.
        let spans = full.trace().vcpu_states(0, to, usize::MAX);
        let (mut count, mut sum) = (0.0, 0.0);
        for i in 1..spans.len() {
            let (a, b) = (&spans[i - 1], &spans[i]);
            if a.vcpu != b.vcpu || a.state != Blocked || !(from..to).contains(&b.start) {
                continue;
            }
            let next = spans.get(i + 1).filter(|c| c.vcpu == b.vcpu && matches!(c.state, Running | Spinning));
            match b.state {
                Running | Spinning => count += 1.0,
                Runnable if next.is_some() => (count, sum) = (count + 1.0, sum + (b.end - b.start) as f64),
                _ => {}
            }
        }
        let total = |m: &[f64], k: usize| m.chunks(3).map(|c| c[k]).sum::<f64>();
        assert!(count > 10.0, "an I/O host wakes often: {count}");
        assert_eq!(total(&map, 0), count);
        assert_eq!(total(&map, 1), sum);
        assert!(map.chunks(3).all(|c| c[2] * c[0] >= c[1]), "the longest is at least the mean");
        let mut replay = run(&sc, "credit", Detail::Replay { checkpoint_every_ns: 100 * MS });
        let w = replay.replay_window(50 * MS, to).unwrap().unwrap();
        assert_eq!(w.trace().wake_latency_map(from, to, buckets, w.held()), map);
        assert!(replay.focus(50 * MS, to).unwrap());
    }

    /// The inference overview over a run long enough for partial boosts and for buckets with several belief
    /// changes: a replay run's buckets equal those filled from the full trace's records, and its series too.
    #[test]
    fn a_replay_runs_inference_buckets_equal_the_full_traces() {
        let sc = load("p000-fig10-partial-boost.json", 6000);
        let full = run(&sc, "tavs", Detail::Full);
        let replay = run(&sc, "tavs", Detail::Replay { checkpoint_every_ns: 1000 * MS });
        let (fi, ri) = (full.inference_buckets(), replay.inference_buckets());
        let t = full.trace();
        assert_eq!(fi.belief_buckets().len(), t.beliefs(None).len(), "one change per bucket here");
        assert!(fi.boost_buckets().iter().any(|b| b.count > 1), "boosts share buckets");
        assert_eq!(fi, ri);
        assert_eq!(fi.series(), ri.series());
    }

    /// Checkpoints list only the guest-timer events still queued per vCPU and count the rest (the queue's cap per vCPU):
    /// with 1 us barrier phases the cap's sweeps cancel events all along, and replays still equal the full trace.
    #[test]
    fn replays_equal_the_trace_where_superseded_guest_timers_are_cancelled() {
        let sc = Scenario::from_value(serde_json::json!({"schema":1,"id":"b","title":"b","seed":1,"duration_ms":50,
            "host":{"pcpus":2}, "domains":[{"name":"job","vcpus":2,"tasks":[{"name":"b","workload":
                {"type":"barrier","compute_us":1,"phases":100000000,"sync":"spin"}}]}],
            "policies":[{"id":"credit","scheduler":"credit"}]}))
        .unwrap();
        let full = run(&sc, "credit", Detail::Full);
        let mut replay = run(&sc, "credit", Detail::Replay { checkpoint_every_ns: 5 * MS });
        assert_eq!(full.events(), replay.events());
        for (from, to) in [(10 * MS, 20 * MS), (33 * MS, 50 * MS)] {
            assert_window_equal(&full, &mut replay, from, to, &format!("barrier {from}..{to}"));
        }
    }

    /// The memory-bound test: a replay run's retained size (checkpoints, overview, focused window) stays under a
    /// bound set by constants alone (the checkpoint budget, the caps of the share, usage and inference records, the
    /// distributions' exact-sample limit), whatever the duration; checkpoints are thinned to stay in budget.
    #[test]
    fn a_long_replay_run_stays_within_a_bound_independent_of_its_duration() {
        use crate::metrics::EXACT_SAMPLES;
        use crate::trace::{AGG_MAX_CELLS, USAGE_MAX_CELLS};
        let budget = 1 << 20;
        for secs in [10, 600] {
            let sc = load("p000-fig10-partial-boost.json", secs * 1000);
            let per_distribution = 2 * EXACT_SAMPLES * std::mem::size_of::<u64>();
            let distributions = 3 * sc.domains.len() + sc.domains.iter().map(|d| d.tasks.len()).sum::<usize>();
            let bound = budget
                + (AGG_MAX_CELLS + USAGE_MAX_CELLS) as usize * std::mem::size_of::<u64>()
                + 2 * overview::MAX_CELLS as usize * std::mem::size_of::<overview::BeliefBucket>()
                + distributions * per_distribution;
            let opts = SimOptions {
                detail: Detail::Replay { checkpoint_every_ns: 50 * MS },
                checkpoint_budget_bytes: budget,
                ..SimOptions::default()
            };
            let mut sim = Simulation::with_options(&sc, "tavs", opts).unwrap();
            sim.run().unwrap();
            let (kept, bytes) = sim.checkpoints();
            assert!(bytes <= budget, "{secs} s: checkpoints take {bytes} bytes");
            // Thinning did the work: one checkpoint every 50 ms would not have fitted.
            let every_50ms = (secs * 20) as usize;
            assert!(kept < every_50ms && every_50ms * (bytes / kept) > budget, "{secs} s: {kept} checkpoints");
            let from = secs * 1000 * MS / 2 + 37 * MS;
            assert!(sim.focus(from, from + 100 * MS).unwrap());
            // Checkpoints lie far apart once thinned; the replay records the window only, not the stretch from
            // its checkpoint (every segment it holds overlaps the window, every decision lies in it).
            let window = sim.detail();
            assert!(window.segments().iter().all(|s| s.end > from), "{secs} s: detail before the window");
            assert!(window.decisions(0, from, 1).is_empty(), "{secs} s: decisions before the window");
            assert!(!window.decisions(from, from + 100 * MS, 1).is_empty(), "{secs} s: the window's decisions");
            let r = sim.retained_bytes();
            assert!(r <= bound, "{secs} s: retains {r} bytes, over the bound {bound}");
        }
    }
}
