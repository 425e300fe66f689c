//! Fuzz target: any bytes as a scenario file. Parsing must never panic and must explain every rejection; a
//! scenario that validates must build under each of its policies and run (duration clamped to 200 ms and events
//! to 20 000 so one input stays cheap) without panicking. A run may still stop on the event budget: that is a
//! reported error, not a bug.

#![no_main]

use libfuzzer_sys::fuzz_target;
use schedsim_core::report::RunOptions;
use schedsim_core::scenario::Scenario;
use schedsim_core::sim::{SimError, Simulation};

/// Simulated time per policy [ms]: long enough for slices, ticks, accounting periods and client think times.
const MAX_DURATION_MS: u64 = 200;

#[path = "common.rs"]
mod common;
use common::run_capped;

fuzz_target!(|data: &[u8]| {
    // Scenario files are text; the CLI and the browser reject invalid UTF-8 before parsing.
    let Ok(text) = std::str::from_utf8(data) else { return };
    let mut sc = match Scenario::from_json(text) {
        Ok(sc) => sc,
        Err(e) => {
            assert!(!e.problems.is_empty(), "a rejection must say why");
            return;
        }
    };
    sc.duration_ms = sc.duration_ms.min(MAX_DURATION_MS);
    sc.warmup_ms = sc.warmup_ms.min(sc.duration_ms - 1);
    for p in sc.policies.clone() {
        // A validated scenario must build: every way it could fail is for validation to catch first.
        let mut sim = Simulation::new(&sc, &p.id).unwrap_or_else(|e| panic!("valid scenario fails to build: {e}"));
        match run_capped(&mut sim) {
            Ok(true) => {
                let _ = sim.report(&RunOptions { deterministic: true, ..RunOptions::default() });
            }
            Ok(false) | Err(SimError::EventBudget { .. } | SimError::WorkLimit { .. }) => {}
            Err(e) => panic!("valid scenario fails to run under {}: {e}", p.id),
        }
    }
});
