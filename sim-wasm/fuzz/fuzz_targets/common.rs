//! What both fuzz targets share: a run capped in events, so one input stays cheap.

use schedsim_core::sim::{SimError, Simulation};

/// Events one policy may take per input. Legal but dense scenarios (1 us barrier phases: millions of events per
/// simulated second) would otherwise take many seconds per input under the sanitizer (~50 000 events/s) and stall
/// the search.
pub const MAX_EVENTS: u64 = 20_000;

/// Steps the run to its end or to [`MAX_EVENTS`]; `Ok(true)` when it finished.
pub fn run_capped(sim: &mut Simulation) -> Result<bool, SimError> {
    while !sim.step(10_000)? {
        if sim.events() >= MAX_EVENTS {
            return Ok(false);
        }
    }
    Ok(true)
}
