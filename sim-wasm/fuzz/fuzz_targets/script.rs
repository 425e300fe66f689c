//! Fuzz target for script policies: any bytes as a Rhai script, run as a scenario's `script` policy on a small
//! host with I/O and CPU-bound guests. Compiling and running must never panic, hang or grow without bound: a
//! script that does not compile, returns a bad value, loops, floods the log, nests, grows `this` or storms at one
//! instant stops the run with a message naming what it did (the per-call and per-run bounds of the script API).

#![no_main]

use libfuzzer_sys::fuzz_target;
use schedsim_core::scenario::Scenario;
use schedsim_core::sim::{SimError, Simulation};
use serde_json::json;

#[path = "common.rs"]
mod common;
use common::run_capped;

fuzz_target!(|data: &[u8]| {
    let source = String::from_utf8_lossy(data);
    let v = json!({
        "schema": 1, "id": "fuzz-script", "title": "fuzz", "seed": 1, "duration_ms": 200, "warmup_ms": 0,
        "host": { "pcpus": 2 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "web", "tasks": [ { "name": "srv", "workload": { "type": "server", "port": 80, "proto": "udp",
                "cpu_us": 200, "clients": 2, "think_ms": [1, 5] } } ] },
            { "name": "busy", "vcpus": 2, "tasks": [ { "name": "a", "workload": { "type": "cpu" } },
                { "name": "b", "workload": { "type": "cpu" } } ] }
        ],
        "policies": [ { "id": "mine", "scheduler": "script", "params": { "source": source, "vars": { "slice_ms": 10 } } } ]
    });
    // A script that does not compile is refused when the scenario is checked, with its line and column.
    let sc = match Scenario::from_value(v) {
        Ok(sc) => sc,
        Err(e) => {
            assert!(!e.problems.is_empty(), "a rejection must say why");
            return;
        }
    };
    let mut sim = match Simulation::new(&sc, "mine") {
        Ok(sim) => sim,
        Err(e) => {
            assert!(!e.to_string().is_empty(), "a refusal must say why");
            return;
        }
    };
    match run_capped(&mut sim) {
        Ok(_) | Err(SimError::EventBudget { .. } | SimError::WorkLimit { .. }) => {}
        // A script's fault stops the run with its message: a finding only if it says nothing.
        Err(e) => assert!(!e.to_string().is_empty(), "a stopped run must say why"),
    }
});
