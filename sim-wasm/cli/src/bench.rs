//! `schedsim bench`: simulation speed of whole scenarios (every policy, one after another, on one thread so that
//! the figures are comparable between scenarios and machines), with the trace the page replays and without it;
//! against the floor (a bare binary-heap event loop with the same event count, rate and queue depth, run here);
//! and in replay mode (checkpoints, then the detail of a 1 s window replayed), as the page runs it.

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

#[derive(Serialize)]
pub struct BenchRow {
    pub scenario: String,
    /// Simulated seconds per wall-clock second, over all policies.
    pub sim_seconds_per_wall_second: f64,
    /// Engine events per wall-clock second [1/s].
    pub events_per_second: f64,
    /// Peak resident set size of the process so far [MB]; it only grows, so later rows include earlier ones.
    pub peak_rss_mb: f64,
    /// Engine events processed, over all policies.
    pub events: u64,
    /// Simulated time, over all policies [s].
    pub sim_seconds: f64,
    /// Wall-clock time of the runs [s].
    pub wall_seconds: f64,
    /// This scenario's `sim_seconds_per_wall_second` over the first scenario's in the same invocation (1 for the
    /// first): how much faster or slower it simulates, on the same machine under the same load.
    pub relative_speed: f64,
    /// The same runs without the trace (as `run`, `check` and `sweep` do): simulated seconds per wall second.
    pub batch_sim_seconds_per_wall_second: f64,
    /// Recording the trace's cost: batch speed over traced speed, both measured here, back to back.
    pub trace_slowdown: f64,
    /// The same batch runs with the host's timers in lockstep (`host.timing: "lockstep"`: no timer-slop jitter,
    /// the timing before per-pCPU clocks): simulated seconds per wall second.
    pub lockstep_batch_sim_seconds_per_wall_second: f64,
    /// The cost of Xen-like timing: lockstep batch speed over batch speed, both measured here, back to back.
    pub timing_slowdown: f64,
    /// Engine events per wall second of the batch runs [1/s].
    pub batch_events_per_second: f64,
    /// The floor: events per wall second of a bare binary-heap event loop with the batch runs' event count,
    /// simulated duration and queue depth, run just after them [1/s].
    pub floor_events_per_second: f64,
    /// Batch speed as a fraction of the floor's (1 would be an engine that costs nothing beyond its queue).
    pub batch_vs_floor: f64,
    /// Replay mode (overview plus checkpoints every second) over the batch runs: wall time ratio.
    pub replay_run_slowdown: f64,
    /// Checkpoints a replay run kept, and their size [bytes] (the first policy's).
    pub checkpoints: usize,
    pub checkpoint_bytes: usize,
    /// Wall time to replay the detail of a 1 s window in the middle of the run, per policy [s].
    pub focus_seconds: f64,
    /// That over one batch run's wall time: what seeing a window's detail costs next to running untraced.
    pub focus_vs_batch: f64,
    /// The script scheduler's cost: the fair-share template's batch run over native Credit's with default
    /// parameters, on this scenario's host, both measured here (wall time ratio, best of five alternated pairs);
    /// `null` for a scenario estimated above [`SCRIPT_BENCH_EVENTS`] per run, where the script's runs would take
    /// minutes (the ratio is a property of the interpreter, measured on a paper-sized host).
    pub script_vs_credit: Option<f64>,
}

/// Runs every policy of the scenario once; returns (events, wall seconds).
fn time_runs(sc: &Scenario, opts: SimOptions) -> Result<(u64, f64), SimError> {
    let mut events = 0u64;
    let t0 = Instant::now();
    for p in &sc.policies {
        let mut sim = Simulation::with_options(sc, &p.id, opts)?;
        sim.run()?;
        events += sim.events();
    }
    // Guards the divisions below against a clock that did not advance on a trivial scenario.
    Ok((events, t0.elapsed().as_secs_f64().max(1e-9)))
}

/// A bare discrete-event loop: `pending` events in a binary heap ordered by (time, seq); each one taken out
/// queues one more at a uniformly random delay whose mean keeps `events` of them within `duration_ns`. What any
/// event-driven simulator with that event count and queue depth pays at least. Returns (wall seconds, events
/// processed).
pub fn floor(events: u64, pending: usize, duration_ns: u64) -> (f64, u64) {
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
    let t0 = Instant::now();
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
    (t0.elapsed().as_secs_f64().max(1e-9), done)
}

/// Every policy once in replay mode, then a 1 s window of each focused (replayed); returns (wall seconds of the
/// runs, wall seconds of the focus calls, the first run's checkpoints and their bytes).
fn time_replay(sc: &Scenario) -> Result<(f64, f64, (usize, usize)), SimError> {
    let opts =
        SimOptions { detail: Detail::Replay { checkpoint_every_ns: CHECKPOINT_EVERY_NS }, ..SimOptions::default() };
    let (mut run_wall, mut focus_wall, mut kept) = (0.0, 0.0, None);
    for p in &sc.policies {
        let t0 = Instant::now();
        let mut sim = Simulation::with_options(sc, &p.id, opts)?;
        sim.run()?;
        run_wall += t0.elapsed().as_secs_f64();
        kept.get_or_insert(sim.checkpoints());
        // A window in the middle, between checkpoints: the replay runs from the one before it.
        let end = sc.duration_ms * 1_000_000;
        let from = (end / 2 + CHECKPOINT_EVERY_NS / 2).min(end.saturating_sub(FOCUS_NS));
        let t1 = Instant::now();
        sim.focus(from, from + FOCUS_NS)?;
        focus_wall += t1.elapsed().as_secs_f64();
    }
    Ok((run_wall.max(1e-9), focus_wall, kept.unwrap_or((0, 0))))
}

/// Largest estimated run [events] on which `bench` times the fair-share template against Credit.
pub const SCRIPT_BENCH_EVENTS: u64 = 5_000_000;

/// The fair-share template's batch wall time over native Credit's (default parameters) on the scenario's host.
fn time_script(sc: &Scenario) -> Result<Option<f64>, SimError> {
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
    let wall = |id: &str| -> Result<f64, SimError> {
        let t0 = Instant::now();
        let mut sim = Simulation::with_options(&pair, id, batch)?;
        sim.run()?;
        Ok(t0.elapsed().as_secs_f64().max(1e-9))
    };
    // The best of five alternated pairs: a native run of a small host takes milliseconds, so one pair is noise.
    let (mut credit, mut script) = (f64::MAX, f64::MAX);
    for _ in 0..5 {
        credit = credit.min(wall("credit")?);
        script = script.min(wall("script")?);
    }
    Ok(Some(script / credit))
}

/// Runs every policy of the scenario once recording the trace (as the page does), then once more without it,
/// and measures both; `relative_speed` is left at 1 for [`set_relative`].
pub fn run(sc: &Scenario) -> Result<BenchRow, SimError> {
    let sim_s = sc.policies.len() as f64 * sc.duration_ms as f64 / 1000.0;
    let (events, wall) = time_runs(sc, SimOptions::default())?;
    let batch = SimOptions { trace: false, ..SimOptions::default() };
    let (batch_events, batch_wall) = time_runs(sc, batch)?;
    let depth = match sc.policies.first() {
        Some(p) => {
            let mut sim = Simulation::with_options(sc, &p.id, batch)?;
            sim.run()?;
            sim.queued_events()
        }
        None => 1,
    };
    let (floor_wall, _) = floor(batch_events, depth, (sim_s * 1e9) as u64);
    let (replay_wall, focus_wall, (checkpoints, checkpoint_bytes)) = time_replay(sc)?;
    let runs = sc.policies.len().max(1) as f64;
    let mut lockstep = sc.clone();
    lockstep.host.timing = Timing::Lockstep;
    let (_, lockstep_wall) = time_runs(&lockstep, batch)?;
    Ok(BenchRow {
        scenario: sc.id.clone(),
        sim_seconds_per_wall_second: sim_s / wall,
        events_per_second: events as f64 / wall,
        peak_rss_mb: peak_rss_mb(),
        events,
        sim_seconds: sim_s,
        wall_seconds: wall,
        relative_speed: 1.0,
        batch_sim_seconds_per_wall_second: sim_s / batch_wall,
        trace_slowdown: wall / batch_wall,
        lockstep_batch_sim_seconds_per_wall_second: sim_s / lockstep_wall,
        timing_slowdown: batch_wall / lockstep_wall,
        batch_events_per_second: batch_events as f64 / batch_wall,
        floor_events_per_second: batch_events as f64 / floor_wall,
        batch_vs_floor: floor_wall / batch_wall,
        replay_run_slowdown: replay_wall / batch_wall,
        checkpoints,
        checkpoint_bytes,
        focus_seconds: focus_wall / runs,
        focus_vs_batch: focus_wall / batch_wall,
        script_vs_credit: time_script(sc)?,
    })
}

/// Fills in every row's speed relative to the first row's.
pub fn set_relative(rows: &mut [BenchRow]) {
    let Some(first) = rows.first().map(|r| r.sim_seconds_per_wall_second) else { return };
    for r in rows {
        r.relative_speed = r.sim_seconds_per_wall_second / first;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(speed: f64) -> BenchRow {
        BenchRow {
            scenario: "s".into(),
            sim_seconds_per_wall_second: speed,
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
}
