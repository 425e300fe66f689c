//! `schedsim bench`: simulation speed of whole scenarios (every policy, one after another, on one thread so that
//! the figures are comparable between scenarios and machines), with the trace the page replays and without it;
//! against the floor (a bare binary-heap event loop with the same event count, rate and queue depth, run here);
//! and in replay mode (checkpoints, then the detail of a 1 s window replayed), as the page runs it. Every ratio is
//! read from this thread's CPU time, in rounds that alternate the pieces compared, and printed as min / median / max
//! with the load average: wall-clock ratios moved 2-5x between runs on a shared machine, CPU-time ones do not.

use schedsim_core::metrics::peak_rss_mb;
use schedsim_core::scenario::{Scenario, Timing};
use schedsim_core::sim::{Detail, SimError, SimOptions, Simulation};
use serde::Serialize;
use std::cmp::Reverse;
use std::collections::BinaryHeap;
use std::hint::black_box;
use std::time::Instant;

/// Checkpoint interval of the replay figures, as the page asks for [ns].
const CHECKPOINT_EVERY_NS: u64 = 1_000_000_000;
/// Width of the window the replay figures focus on [ns].
const FOCUS_NS: u64 = 1_000_000_000;

/// Wall-clock and CPU time of one piece of work [s].
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct Took {
    /// Elapsed real time [s]: moves with everything else the machine runs.
    pub wall: f64,
    /// CPU time of this thread over the work [s]: what the work itself cost, whatever else runs beside it.
    pub cpu: f64,
}

impl Took {
    /// Times `work` on both clocks.
    fn of<T, E>(work: impl FnOnce() -> Result<T, E>) -> Result<(T, Took), E> {
        let (w0, c0) = (Instant::now(), thread_cpu_seconds());
        let out = work()?;
        // Guards the divisions below against a clock that did not advance on a trivial scenario.
        let took = Took { wall: w0.elapsed().as_secs_f64().max(1e-9), cpu: (thread_cpu_seconds() - c0).max(1e-9) };
        Ok((out, took))
    }

    fn add(self, o: Took) -> Took {
        Took { wall: self.wall + o.wall, cpu: self.cpu + o.cpu }
    }
}

/// CPU time this thread has used so far [s] (`CLOCK_THREAD_CPUTIME_ID`; wall time where there is no such clock).
pub fn thread_cpu_seconds() -> f64 {
    #[cfg(unix)]
    {
        let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
        // SAFETY: `ts` is a valid, writable timespec and the clock id is a constant the platform defines.
        if unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) } == 0 {
            return ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9;
        }
    }
    static START: std::sync::OnceLock<Instant> = std::sync::OnceLock::new();
    START.get_or_init(Instant::now).elapsed().as_secs_f64()
}

/// The host's 1-, 5- and 15-minute load averages (`/proc/loadavg`; zeros where there is none): printed beside
/// every figure so that a reader can tell a quiet run from a loaded one.
pub fn load_average() -> [f64; 3] {
    let text = std::fs::read_to_string("/proc/loadavg").unwrap_or_default();
    let mut it = text.split_whitespace().map(|x| x.parse::<f64>().unwrap_or(0.0));
    [it.next().unwrap_or(0.0), it.next().unwrap_or(0.0), it.next().unwrap_or(0.0)]
}

/// The smallest, middle and largest of a ratio measured in several alternated rounds.
#[derive(Clone, Copy, Debug, Default, PartialEq, Serialize)]
pub struct Spread {
    pub min: f64,
    pub median: f64,
    pub max: f64,
}

impl Spread {
    /// Of at least one value (the median of an even count is the upper middle one).
    pub fn of(xs: &[f64]) -> Spread {
        let mut v: Vec<f64> = xs.iter().copied().filter(|x| x.is_finite()).collect();
        v.sort_by(f64::total_cmp);
        match (v.first(), v.last()) {
            (Some(&min), Some(&max)) => Spread { min, median: v[v.len() / 2], max },
            _ => Spread::default(),
        }
    }
}

/// Every ratio `bench` prints, each as its spread over the rounds; in [`BenchRow::ratios`] from CPU time, in
/// [`BenchRow::wall_ratios`] from wall time (for comparison with figures taken before CPU time was read).
#[derive(Clone, Copy, Debug, Default, Serialize)]
pub struct Ratios {
    /// Traced runs over untraced ones (time).
    pub trace_slowdown: Spread,
    /// Untraced runs under Xen-like timers over the same in lockstep (time).
    pub timing_slowdown: Spread,
    /// The floor's time over the untraced runs' (a speed as a fraction of the floor's).
    pub batch_vs_floor: Spread,
    /// Replay-mode runs over untraced ones (time).
    pub replay_run_slowdown: Spread,
    /// Focusing a 1 s window, every policy, over the untraced runs (time).
    pub focus_vs_batch: Spread,
    /// The fair-share template over native Credit, alternated pairs (time); absent for a large scenario.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub script_vs_credit: Option<Spread>,
}

#[derive(Serialize)]
pub struct BenchRow {
    pub scenario: String,
    /// Simulated seconds per wall-clock second, over all policies (the median round).
    pub sim_seconds_per_wall_second: f64,
    /// Engine events per wall-clock second [1/s].
    pub events_per_second: f64,
    /// Peak resident set size of the process so far [MB]; it only grows, so later rows include earlier ones.
    pub peak_rss_mb: f64,
    /// Engine events processed, over all policies.
    pub events: u64,
    /// Simulated time, over all policies [s].
    pub sim_seconds: f64,
    /// Wall-clock time of the traced runs, the median round [s].
    pub wall_seconds: f64,
    /// This scenario's simulated seconds per CPU second over the first scenario's in the same invocation (1 for
    /// the first): how much faster or slower it simulates, read from CPU time so that load does not move it.
    pub relative_speed: f64,
    /// The same runs without the trace (as `run`, `check` and `sweep` do): simulated seconds per wall second.
    pub batch_sim_seconds_per_wall_second: f64,
    /// Recording the trace's cost: traced over untraced CPU time, median of the rounds.
    pub trace_slowdown: f64,
    /// The same batch runs with the host's timers in lockstep (`host.timing: "lockstep"`: no timer-slop jitter,
    /// the timing before per-pCPU clocks): simulated seconds per wall second.
    pub lockstep_batch_sim_seconds_per_wall_second: f64,
    /// The cost of Xen-like timing: untraced over lockstep CPU time, median of the rounds.
    pub timing_slowdown: f64,
    /// Engine events per wall second of the batch runs [1/s].
    pub batch_events_per_second: f64,
    /// The floor: events per wall second of a bare binary-heap event loop with the batch runs' event count,
    /// simulated duration and queue depth, run just after them [1/s].
    pub floor_events_per_second: f64,
    /// Batch speed as a fraction of the floor's, by CPU time (1 would be an engine that costs nothing beyond its
    /// queue).
    pub batch_vs_floor: f64,
    /// Replay mode (overview plus checkpoints every second) over the batch runs: CPU time ratio.
    pub replay_run_slowdown: f64,
    /// Checkpoints a replay run kept, and their size [bytes] (the first policy's).
    pub checkpoints: usize,
    pub checkpoint_bytes: usize,
    /// Wall time to replay the detail of a 1 s window in the middle of the run, per policy [s].
    pub focus_seconds: f64,
    /// That over the batch runs, by CPU time: what seeing a window's detail costs next to running untraced.
    pub focus_vs_batch: f64,
    /// The script scheduler's cost: the fair-share template's batch run over native Credit's with default
    /// parameters, on this scenario's host, by CPU time (median of alternated pairs); `null` for a scenario
    /// estimated above [`SCRIPT_BENCH_EVENTS`] per run, where the script's runs would take minutes (the ratio is
    /// a property of the interpreter, measured on a paper-sized host).
    pub script_vs_credit: Option<f64>,
    /// CPU time of the traced runs, the median round [s].
    pub cpu_seconds: f64,
    /// Simulated seconds per CPU second, traced and untraced (median rounds).
    pub sim_seconds_per_cpu_second: f64,
    pub batch_sim_seconds_per_cpu_second: f64,
    /// Untraced CPU time of the median round [s] (what `npm run bench` sets the wasm build against).
    pub batch_cpu_seconds: f64,
    /// Rounds measured: each runs every piece once, in the same order, so that the pieces alternate.
    pub rounds: usize,
    /// Every ratio's min / median / max over the rounds, by CPU time, and the same by wall time.
    pub ratios: Ratios,
    pub wall_ratios: Ratios,
    /// The host's load averages (1, 5, 15 min) when this scenario's rounds began.
    pub load_average: [f64; 3],
}

/// Runs every policy of the scenario once; returns (events, time taken).
fn time_runs(sc: &Scenario, opts: SimOptions) -> Result<(u64, Took), SimError> {
    Took::of(|| {
        let mut events = 0u64;
        for p in &sc.policies {
            let mut sim = Simulation::with_options(sc, &p.id, opts)?;
            sim.run()?;
            events += sim.events();
        }
        Ok(events)
    })
}

/// A bare discrete-event loop: `pending` events in a binary heap ordered by (time, seq); each one taken out
/// queues one more at a uniformly random delay whose mean keeps `events` of them within `duration_ns`. What any
/// event-driven simulator with that event count and queue depth pays at least. Returns (time taken, events
/// processed).
pub fn floor(events: u64, pending: usize, duration_ns: u64) -> (Took, u64) {
    let pending = pending.max(1);
    let mean_gap = (duration_ns as u128 * pending as u128 / u128::from(events.max(1))).max(1) as u64;
    // xorshift64*: a fast seeded stream, so the floor is not the cost of a cryptographic generator.
    let mut x = 0x9E37_79B9_7F4A_7C15u64;
    let mut next = move || {
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    };
    let Ok((done, took)) = Took::of(|| {
        let mut heap = BinaryHeap::with_capacity(pending + 1);
        let mut seq = 0u64;
        for _ in 0..pending {
            seq += 1;
            heap.push(Reverse((next() % (2 * mean_gap), seq, seq as u32)));
        }
        let (mut check, mut done) = (0u64, 0u64);
        while done < events {
            let Some(Reverse((t, _, payload))) = heap.pop() else { break };
            done += 1;
            check = check.wrapping_add(u64::from(payload) ^ t);
            seq += 1;
            heap.push(Reverse((t + next() % (2 * mean_gap), seq, payload)));
        }
        black_box(check);
        Ok::<_, std::convert::Infallible>(done)
    });
    (took, done)
}

/// Every policy once in replay mode, then a 1 s window of each focused (replayed); returns (time of the runs,
/// time of the focus calls, the first run's checkpoints and their bytes).
fn time_replay(sc: &Scenario) -> Result<(Took, Took, (usize, usize)), SimError> {
    let opts =
        SimOptions { detail: Detail::Replay { checkpoint_every_ns: CHECKPOINT_EVERY_NS }, ..SimOptions::default() };
    let (mut run, mut focus, mut kept) = (Took::default(), Took::default(), None);
    for p in &sc.policies {
        let (mut sim, took) = Took::of(|| {
            let mut sim = Simulation::with_options(sc, &p.id, opts)?;
            sim.run()?;
            Ok::<_, SimError>(sim)
        })?;
        run = run.add(took);
        kept.get_or_insert(sim.checkpoints());
        // A window in the middle, between checkpoints: the replay runs from the one before it.
        let end = sc.duration_ms * 1_000_000;
        let from = (end / 2 + CHECKPOINT_EVERY_NS / 2).min(end.saturating_sub(FOCUS_NS));
        let ((), took) = Took::of(|| sim.focus(from, from + FOCUS_NS).map(|_| ()))?;
        focus = focus.add(took);
    }
    Ok((run, focus, kept.unwrap_or((0, 0))))
}

/// Largest estimated run [events] on which `bench` times the fair-share template against Credit.
pub const SCRIPT_BENCH_EVENTS: u64 = 5_000_000;

/// The fair-share template's batch run over native Credit's (default parameters) on the scenario's host, one
/// alternated pair (Credit, then the script); `None` for a scenario above [`SCRIPT_BENCH_EVENTS`].
fn time_script(sc: &Scenario) -> Result<Option<(Took, Took)>, SimError> {
    if schedsim_core::cost::estimate(sc, &[]).events_per_run > SCRIPT_BENCH_EVENTS {
        return Ok(None);
    }
    use schedsim_core::policy::script::TEMPLATES;
    use schedsim_core::scenario::PolicySpec;
    let Some(t) = TEMPLATES.iter().find(|t| t.id == "fair_share") else { return Ok(None) };
    let spec = |id: &str, scheduler: &str, params| PolicySpec {
        id: id.into(),
        label: None,
        scheduler: scheduler.into(),
        params,
    };
    let mut pair = sc.clone();
    pair.policies = vec![spec("credit", "credit", serde_json::json!({})), spec("script", "script", t.params())];
    pair.changes.clear();
    let batch = SimOptions { trace: false, ..SimOptions::default() };
    let once = |id: &str| -> Result<Took, SimError> {
        Ok(Took::of(|| {
            let mut sim = Simulation::with_options(&pair, id, batch)?;
            sim.run()
        })?
        .1)
    };
    // A native run of a small host takes milliseconds: each side is the best of three, so one pair is not noise.
    let (mut credit, mut script) = (Took { wall: f64::MAX, cpu: f64::MAX }, Took { wall: f64::MAX, cpu: f64::MAX });
    for _ in 0..3 {
        let c = once("credit")?;
        let s = once("script")?;
        credit = Took { wall: credit.wall.min(c.wall), cpu: credit.cpu.min(c.cpu) };
        script = Took { wall: script.wall.min(s.wall), cpu: script.cpu.min(s.cpu) };
    }
    Ok(Some((credit, script)))
}

/// One round: every piece measured once, in a fixed order.
struct Round {
    events: u64,
    batch_events: u64,
    traced: Took,
    batch: Took,
    lockstep: Took,
    floor: Took,
    replay: Took,
    focus: Took,
    checkpoints: (usize, usize),
    script: Option<(Took, Took)>,
}

fn round(sc: &Scenario, sim_s: f64) -> Result<Round, SimError> {
    let (events, traced) = time_runs(sc, SimOptions::default())?;
    let batch_opts = SimOptions { trace: false, ..SimOptions::default() };
    let (batch_events, batch) = time_runs(sc, batch_opts)?;
    let depth = match sc.policies.first() {
        Some(p) => {
            let mut sim = Simulation::with_options(sc, &p.id, batch_opts)?;
            sim.run()?;
            sim.queued_events()
        }
        None => 1,
    };
    let (floor, _) = floor(batch_events, depth, (sim_s * 1e9) as u64);
    let (replay, focus, checkpoints) = time_replay(sc)?;
    let mut lockstep_sc = sc.clone();
    lockstep_sc.host.timing = Timing::Lockstep;
    let (_, lockstep) = time_runs(&lockstep_sc, batch_opts)?;
    let script = time_script(sc)?;
    Ok(Round { events, batch_events, traced, batch, lockstep, floor, replay, focus, checkpoints, script })
}

/// The spread of each ratio over the rounds, on the clock `clock` picks.
fn ratios(rounds: &[Round], clock: fn(&Took) -> f64) -> Ratios {
    let of = |f: &dyn Fn(&Round) -> f64| Spread::of(&rounds.iter().map(f).collect::<Vec<_>>());
    let scripted: Vec<f64> =
        rounds.iter().filter_map(|r| r.script.map(|(credit, script)| clock(&script) / clock(&credit))).collect();
    Ratios {
        trace_slowdown: of(&|r| clock(&r.traced) / clock(&r.batch)),
        timing_slowdown: of(&|r| clock(&r.batch) / clock(&r.lockstep)),
        batch_vs_floor: of(&|r| clock(&r.floor) / clock(&r.batch)),
        replay_run_slowdown: of(&|r| clock(&r.replay) / clock(&r.batch)),
        focus_vs_batch: of(&|r| clock(&r.focus) / clock(&r.batch)),
        script_vs_credit: (!scripted.is_empty()).then(|| Spread::of(&scripted)),
    }
}

/// The median of one measurement over the rounds.
fn median(rounds: &[Round], f: impl Fn(&Round) -> f64) -> f64 {
    Spread::of(&rounds.iter().map(f).collect::<Vec<_>>()).median
}

/// Runs `rounds` rounds (at least one) of: every policy recording the trace (as the page does), then without
/// it, the floor, replay mode and a focused window, lockstep timers, and the script template against Credit;
/// ratios come from CPU time, each round's pieces alternating with the next round's. `relative_speed` is left at
/// 1 for [`set_relative`].
pub fn run(sc: &Scenario, rounds: usize) -> Result<BenchRow, SimError> {
    let load_average = load_average();
    let sim_s = sc.policies.len() as f64 * sc.duration_ms as f64 / 1000.0;
    let measured = (0..rounds.max(1)).map(|_| round(sc, sim_s)).collect::<Result<Vec<_>, _>>()?;
    let first = &measured[0];
    let (events, batch_events) = (first.events, first.batch_events);
    let (cpu, wall) = (ratios(&measured, |t| t.cpu), ratios(&measured, |t| t.wall));
    let runs = sc.policies.len().max(1) as f64;
    let traced_wall = median(&measured, |r| r.traced.wall);
    let batch_wall = median(&measured, |r| r.batch.wall);
    let traced_cpu = median(&measured, |r| r.traced.cpu);
    let batch_cpu = median(&measured, |r| r.batch.cpu);
    Ok(BenchRow {
        scenario: sc.id.clone(),
        sim_seconds_per_wall_second: sim_s / traced_wall,
        events_per_second: events as f64 / traced_wall,
        peak_rss_mb: peak_rss_mb(),
        events,
        sim_seconds: sim_s,
        wall_seconds: traced_wall,
        relative_speed: 1.0,
        batch_sim_seconds_per_wall_second: sim_s / batch_wall,
        trace_slowdown: cpu.trace_slowdown.median,
        lockstep_batch_sim_seconds_per_wall_second: sim_s / median(&measured, |r| r.lockstep.wall),
        timing_slowdown: cpu.timing_slowdown.median,
        batch_events_per_second: batch_events as f64 / batch_wall,
        floor_events_per_second: batch_events as f64 / median(&measured, |r| r.floor.wall),
        batch_vs_floor: cpu.batch_vs_floor.median,
        replay_run_slowdown: cpu.replay_run_slowdown.median,
        checkpoints: first.checkpoints.0,
        checkpoint_bytes: first.checkpoints.1,
        focus_seconds: median(&measured, |r| r.focus.wall) / runs,
        focus_vs_batch: cpu.focus_vs_batch.median,
        script_vs_credit: cpu.script_vs_credit.map(|s| s.median),
        cpu_seconds: traced_cpu,
        sim_seconds_per_cpu_second: sim_s / traced_cpu,
        batch_sim_seconds_per_cpu_second: sim_s / batch_cpu,
        batch_cpu_seconds: batch_cpu,
        rounds: measured.len(),
        ratios: cpu,
        wall_ratios: wall,
        load_average,
    })
}

/// Fills in every row's speed relative to the first row's (simulated seconds per CPU second).
pub fn set_relative(rows: &mut [BenchRow]) {
    let Some(first) = rows.first().map(|r| r.sim_seconds_per_cpu_second) else { return };
    for r in rows {
        r.relative_speed = r.sim_seconds_per_cpu_second / first;
    }
}

/// The rows as text: per scenario its speeds, then each ratio by CPU time as min / median / max over the rounds.
pub fn text(rows: &[BenchRow]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    for r in rows {
        let [l1, l5, l15] = r.load_average;
        let _ = writeln!(
            out,
            "{}: {:.1} sim s per CPU s traced, {:.1} untraced ({:.1} / {:.1} per wall s); {} events, {:.1} MB peak RSS, {:.2}x the first row; {} rounds, load {l1:.2} {l5:.2} {l15:.2}",
            r.scenario,
            r.sim_seconds_per_cpu_second,
            r.batch_sim_seconds_per_cpu_second,
            r.sim_seconds_per_wall_second,
            r.batch_sim_seconds_per_wall_second,
            r.events,
            r.peak_rss_mb,
            r.relative_speed,
            r.rounds,
        );
        let ratio = |out: &mut String, name: &str, s: Spread| {
            let _ = writeln!(out, "  {name:<44} {:>8.3} (min {:.3}, max {:.3})", s.median, s.min, s.max);
        };
        let c = &r.ratios;
        ratio(&mut out, "untraced / floor (speed, by CPU)", c.batch_vs_floor);
        ratio(&mut out, "traced / untraced (CPU time)", c.trace_slowdown);
        ratio(&mut out, "Xen-like timers / lockstep (CPU time)", c.timing_slowdown);
        ratio(&mut out, "replay run / untraced (CPU time)", c.replay_run_slowdown);
        ratio(&mut out, "focus on 1 s / untraced (CPU time)", c.focus_vs_batch);
        if let Some(s) = c.script_vs_credit {
            ratio(&mut out, "fair-share script / native Credit (CPU time)", s);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(speed: f64) -> BenchRow {
        BenchRow {
            scenario: "s".into(),
            sim_seconds_per_wall_second: 0.0,
            events_per_second: 0.0,
            peak_rss_mb: 0.0,
            events: 0,
            sim_seconds: 0.0,
            wall_seconds: 0.0,
            relative_speed: 1.0,
            batch_sim_seconds_per_wall_second: 0.0,
            trace_slowdown: 1.0,
            lockstep_batch_sim_seconds_per_wall_second: 0.0,
            timing_slowdown: 1.0,
            batch_events_per_second: 0.0,
            floor_events_per_second: 0.0,
            batch_vs_floor: 0.0,
            replay_run_slowdown: 1.0,
            checkpoints: 0,
            checkpoint_bytes: 0,
            focus_seconds: 0.0,
            focus_vs_batch: 0.0,
            script_vs_credit: None,
            cpu_seconds: 0.0,
            sim_seconds_per_cpu_second: speed,
            batch_sim_seconds_per_cpu_second: 0.0,
            batch_cpu_seconds: 0.0,
            rounds: 1,
            ratios: Ratios::default(),
            wall_ratios: Ratios::default(),
            load_average: [0.0; 3],
        }
    }

    /// The floor processes exactly the events it is given (its time is only reported, never asserted).
    #[test]
    fn floor_runs_its_events() {
        assert_eq!(floor(10_000, 64, 1_000_000_000).1, 10_000);
        assert_eq!(floor(5, 0, 0).1, 5);
    }

    #[test]
    fn relative_speed_is_against_the_first_row() {
        let mut rows = vec![row(200.0), row(100.0), row(400.0)];
        set_relative(&mut rows);
        let rel: Vec<f64> = rows.iter().map(|r| r.relative_speed).collect();
        assert_eq!(rel, vec![1.0, 0.5, 2.0]);
        set_relative(&mut []);
    }

    #[test]
    fn a_spread_is_min_median_max() {
        assert_eq!(Spread::of(&[3.0, 1.0, 2.0]), Spread { min: 1.0, median: 2.0, max: 3.0 });
        assert_eq!(Spread::of(&[5.0]), Spread { min: 5.0, median: 5.0, max: 5.0 });
        assert_eq!(Spread::of(&[f64::NAN]), Spread::default());
    }

    /// CPU time advances with work on this thread and not while it sleeps.
    #[test]
    fn the_cpu_clock_counts_this_threads_work_only() {
        let ((), slept) = Took::of(|| {
            std::thread::sleep(std::time::Duration::from_millis(30));
            Ok::<_, ()>(())
        })
        .unwrap();
        assert!(slept.wall >= 0.03 && slept.cpu < 0.02, "{slept:?}");
        let (_, busy) = Took::of(|| Ok::<_, ()>(floor(2_000_000, 64, 1_000_000_000))).unwrap();
        assert!(busy.cpu > 0.0);
    }
}
