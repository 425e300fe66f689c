//! Fuzz target for the engine: the input bytes choose the knobs of a small scenario that is valid by construction
//! (1-8 pCPUs, a driver domain, up to 6 guests with every workload type, credit parameters, run-time changes), so
//! that almost every input reaches `Simulation::run` instead of stopping at validation as raw text mostly does.
//! Each policy runs for at most 200 ms of simulated time or 20 000 events; debug assertions (overflow checks) are on.

#![no_main]

use libfuzzer_sys::arbitrary::{Result, Unstructured};
use libfuzzer_sys::fuzz_target;
use schedsim_core::report::RunOptions;
use schedsim_core::scenario::Scenario;
use schedsim_core::sim::{SimError, Simulation};
use serde_json::{json, Value};

#[path = "common.rs"]
mod common;
use common::run_capped;

fn pick<'a, T>(u: &mut Unstructured, xs: &'a [T]) -> Result<&'a T> {
    u.choose(xs)
}

/// A number in `lo..=hi`, biased to the ends where the edge cases live.
fn num(u: &mut Unstructured, lo: u32, hi: u32) -> Result<u32> {
    Ok(match u.int_in_range(0..=5u8)? {
        0 => lo,
        1 => hi,
        _ => u.int_in_range(lo..=hi)?,
    })
}

fn think(u: &mut Unstructured) -> Result<Value> {
    let lo = num(u, 0, 100)?;
    Ok(json!([lo, lo + num(u, 0, 200)?]))
}

/// A workload for task `j` of guest `i`; `tiers` are the `DOMAIN/TASK` names a tier may forward to.
fn workload(u: &mut Unstructured, j: usize, tiers: &[String]) -> Result<Value> {
    let port = 1000 + j as u32;
    Ok(match u.int_in_range(0..=8u8)? {
        0 => json!({ "type": "cpu" }),
        1 => json!({ "type": "server", "port": port, "proto": pick(u, &["udp", "tcp"])?, "cpu_us": num(u, 0, 5000)?,
                     "clients": num(u, 0, 8)?, "think_ms": think(u)? }),
        2 => {
            let io = *pick(u, &["disk", "net"])?;
            let mut w = json!({ "type": "io_loop", "io": io, "cpu_us": num(u, 0, 5000)?, "block_kb": num(u, 1, 256)? });
            if io == "net" {
                w["port"] = json!(port);
            }
            w
        }
        3 => json!({ "type": "disk_reader", "block_kb": num(u, 1, 1024)?, "cpu_us": num(u, 0, 2000)? }),
        4 => json!({ "type": "net_bulk", "direction": pick(u, &["rx", "tx"])?, "window_kb": num(u, 2, 256)?,
                     "cpu_us": num(u, 0, 50)? }),
        5 => json!({ "type": "stream_server", "clients": num(u, 1, 8)?, "kbps": num(u, 1, 20_000)?,
                     "buffer_kb": num(u, 1, 4096)?, "cpu_us": num(u, 0, 100)?, "interval_ms": num(u, 1, 100)? }),
        6 => json!({ "type": "barrier", "compute_us": num(u, 1, 20_000)?, "phases": num(u, 0, 50)?,
                     "sync": pick(u, &["spin", "block"])? }),
        7 => {
            let next = if tiers.is_empty() || u.arbitrary()? { Value::Null } else { json!(pick(u, tiers)?) };
            json!({ "type": "tier", "port": port, "cpu_us": num(u, 0, 5000)?, "next": next,
                    "clients": num(u, 0, 8)?, "think_ms": think(u)? })
        }
        _ => json!({ "type": "interactive", "cpu_us": num(u, 0, 5000)?, "think_ms": think(u)? }),
    })
}

fn scenario(u: &mut Unstructured) -> Result<Value> {
    let costs = json!({ "packet_us": num(u, 0, 100)?, "block_us": num(u, 0, 100)? });
    let dom0 = json!({ "name": "dom0", "role": "driver", "vcpus": num(u, 1, 2)?, "weight": num(u, 1, 1024)?,
                       "costs": costs });
    let mut domains = vec![dom0];
    let mut tiers: Vec<String> = Vec::new();
    for i in 0..u.int_in_range(1..=6usize)? {
        let vcpus = num(u, 1, 4)?;
        let name = format!("g{i}");
        let mut tasks = Vec::new();
        for j in 0..u.int_in_range(0..=3usize)? {
            let mut t = json!({ "name": format!("t{j}"), "workload": workload(u, j, &tiers)? });
            if t["workload"]["type"] == "tier" {
                tiers.push(format!("{name}/t{j}"));
            }
            if u.ratio(1, 4)? {
                t["vcpu"] = json!(u.int_in_range(0..=vcpus - 1)?);
            }
            if u.ratio(1, 4)? {
                t["priority"] = if u.arbitrary()? { json!("rt") } else { json!(u.int_in_range(-20..=19i32)?) };
            }
            tasks.push(t);
        }
        domains.push(json!({
            "name": name, "vcpus": vcpus, "weight": num(u, 1, 1024)?,
            "cap_pct": if u.ratio(1, 3)? { num(u, 1, 400)? } else { 0 },
            "type": pick(u, &["throughput", "concurrent"])?,
            "guest": { "scheduler": pick(u, &["linux", "cfs"])?, "clock": pick(u, &["wall", "steal", "two_clocks"])? },
            "tasks": tasks
        }));
    }
    let mut policies = Vec::new();
    for k in 0..u.int_in_range(1..=3usize)? {
        let mut p = serde_json::Map::new();
        if u.arbitrary()? {
            p.insert("version".into(), json!(pick(u, &["3.0.3", "3.2", "4.x"])?));
        }
        if u.arbitrary()? {
            p.insert("boost".into(), json!(u.arbitrary::<bool>()?));
        }
        if u.arbitrary()? {
            p.insert("accounting".into(), json!(pick(u, &["exact", "tick"])?));
        }
        if u.arbitrary()? {
            p.insert("tslice_ms".into(), json!(num(u, 1, 100)?));
        }
        if u.arbitrary()? {
            p.insert("ratelimit_us".into(), json!(num(u, 0, 5000)?));
        }
        if u.ratio(1, 4)? {
            p.insert("aggressive_boost".into(), json!(true));
        }
        policies.push(json!({ "id": format!("p{k}"), "scheduler": "credit", "params": p }));
    }
    let duration = num(u, 1, 200)?;
    let mut doc = json!({
        "schema": 1, "id": "fuzz", "title": "fuzz", "seed": u.arbitrary::<u32>()?,
        "duration_ms": duration, "warmup_ms": u.int_in_range(0..=duration - 1)?,
        "host": { "pcpus": num(u, 1, 8)?,
                  "net": { "latency_us": num(u, 0, 1000)?, "mbps": num(u, 1, 10_000)? },
                  "disk": { "service_us": num(u, 0, 5000)?, "mb_per_s": num(u, 1, 1000)? } },
        "domains": domains, "policies": policies
    });
    if u.ratio(1, 3)? {
        let (param, value) = match u.int_in_range(0..=2u8)? {
            0 => ("boost", json!(u.arbitrary::<bool>()?)),
            1 => ("tslice_ms", json!(num(u, 1, 100)?)),
            _ => ("ratelimit_us", json!(num(u, 0, 5000)?)),
        };
        doc["changes"] = json!([{ "at_ms": u.int_in_range(0..=duration - 1)?, "policy": "p0", "param": param,
                                  "value": value }]);
    }
    Ok(doc)
}

fuzz_target!(|data: &[u8]| {
    let Ok(doc) = scenario(&mut Unstructured::new(data)) else { return };
    // Triage aid: `SCHEDSIM_FUZZ_PRINT=1 cargo +nightly fuzz run engine ARTIFACT` prints the scenario the input
    // decodes to, ready for `schedsim run`.
    if std::env::var_os("SCHEDSIM_FUZZ_PRINT").is_some() {
        eprintln!("{doc}");
    }
    // The generator stays inside the schema, but cross-field rules (e.g. which workloads a concurrent domain may
    // run) are the validator's to enforce: a rejection is fine, a panic is not.
    let Ok(sc) = Scenario::from_value(doc) else { return };
    for p in &sc.policies {
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
