//! `schedsim bench`: simulation speed of whole scenarios (every policy, one after another).

use schedsim_core::scenario::Scenario;
use schedsim_core::sim::{SimError, Simulation};
use serde::Serialize;
use std::time::Instant;

#[derive(Serialize)]
pub struct BenchRow {
    pub scenario: String,
    pub sim_seconds_per_wall_second: f64,
    pub events_per_second: f64,
    pub peak_rss_mb: f64,
}

/// Peak resident set size of this process [MB], from /proc (0 where unavailable).
fn peak_rss_mb() -> f64 {
    std::fs::read_to_string("/proc/self/status")
        .ok()
        .and_then(|s| s.lines().find(|l| l.starts_with("VmHWM:")).map(str::to_string))
        .and_then(|l| l.split_whitespace().nth(1).and_then(|kb| kb.parse::<f64>().ok()))
        .map_or(0.0, |kb| kb / 1024.0)
}

pub fn run(sc: &Scenario) -> Result<BenchRow, SimError> {
    let mut sim_s = 0.0;
    let mut events = 0u64;
    let t0 = Instant::now();
    for p in &sc.policies {
        let mut sim = Simulation::new(sc, &p.id)?;
        sim.run()?;
        sim_s += sc.duration_ms as f64 / 1000.0;
        events += sim.events();
    }
    let wall = t0.elapsed().as_secs_f64().max(1e-9);
    Ok(BenchRow {
        scenario: sc.id.clone(),
        sim_seconds_per_wall_second: sim_s / wall,
        events_per_second: events as f64 / wall,
        peak_rss_mb: peak_rss_mb(),
    })
}
