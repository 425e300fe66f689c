//! `schedsim bench`: simulation speed of whole scenarios (every policy, one after another, on one thread so that
//! the figures are comparable between scenarios and machines), with the trace the page replays and without it.

use schedsim_core::metrics::peak_rss_mb;
use schedsim_core::scenario::{Scenario, Timing};
use schedsim_core::sim::{SimError, SimOptions, Simulation};
use serde::Serialize;
use std::time::Instant;

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

/// Runs every policy of the scenario once recording the trace (as the page does), then once more without it,
/// and measures both; `relative_speed` is left at 1 for [`set_relative`].
pub fn run(sc: &Scenario) -> Result<BenchRow, SimError> {
    let sim_s = sc.policies.len() as f64 * sc.duration_ms as f64 / 1000.0;
    let (events, wall) = time_runs(sc, SimOptions::default())?;
    let batch = SimOptions { trace: false, ..SimOptions::default() };
    let (_, batch_wall) = time_runs(sc, batch)?;
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
        }
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
