//! Criterion benches of the hot paths: the event loop (the paper scenario credit-boost, and a large host built
//! here: 16 pCPUs, 64 domains of CPU-bound and server tasks), scenario parsing + validation, and building the
//! report of a finished run. `cargo bench -p schedsim-core`; `cargo bench --no-run` only compiles them.

use criterion::{criterion_group, criterion_main, BenchmarkId, Criterion, Throughput};
use schedsim_core::report::RunOptions;
use schedsim_core::scenario::Scenario;
use schedsim_core::sim::Simulation;
use serde_json::{json, Value};
use std::hint::black_box;
use std::time::Duration;

const CREDIT_BOOST: &str = include_str!("../../../scenarios/credit-boost.json");

/// A consolidated host at scale: 16 pCPUs, a 4-vCPU driver domain and 63 guests of 1-4 vCPUs and mixed weights;
/// even guests run one busy loop per vCPU, odd ones a UDP server with 4 clients beside a busy loop, so the run
/// exercises preemption, BOOST, the I/O path and cross-pCPU load balancing together.
fn big_host() -> Value {
    let mut domains = vec![json!({ "name": "dom0", "role": "driver", "vcpus": 4, "weight": 512 })];
    for i in 0..63u32 {
        let vcpus = 1 + i % 4;
        let tasks: Vec<Value> = if i & 1 == 0 {
            (0..vcpus)
                .map(|k| json!({ "name": format!("burn{k}"), "vcpu": k, "workload": { "type": "cpu" } }))
                .collect()
        } else {
            vec![
                json!({ "name": "web", "workload": { "type": "server", "port": 80, "cpu_us": 200, "clients": 4,
                                                     "think_ms": [5, 50] } }),
                json!({ "name": "burn", "workload": { "type": "cpu" } }),
            ]
        };
        domains.push(json!({ "name": format!("g{i}"), "vcpus": vcpus, "weight": 128 << (i % 3), "tasks": tasks }));
    }
    json!({
        "schema": 1, "id": "bench-16p-64d", "title": "16 pCPUs, 64 domains", "seed": 7,
        "duration_ms": 2000, "warmup_ms": 200,
        "host": { "pcpus": 16 },
        "domains": domains,
        "policies": [ { "id": "credit", "scheduler": "credit" } ]
    })
}

/// Events of one full run, so criterion can report events per second.
fn events_of(sc: &Scenario) -> u64 {
    let mut sim = Simulation::new(sc, &sc.policies[0].id).expect("bench scenario builds");
    sim.run().expect("bench scenario runs");
    sim.events()
}

fn event_loop(c: &mut Criterion) {
    let boost = Scenario::from_json(CREDIT_BOOST).expect("credit-boost is valid");
    let big = Scenario::from_value(big_host()).expect("the big host is valid");
    let mut g = c.benchmark_group("event_loop");
    // Whole runs take 10-500 ms: few samples keep `cargo bench` in minutes on a small machine.
    g.sample_size(10).warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(5));
    for (name, sc) in [("credit-boost", &boost), ("16p-64d", &big)] {
        g.throughput(Throughput::Elements(events_of(sc)));
        g.bench_with_input(BenchmarkId::from_parameter(name), sc, |b, sc| {
            b.iter(|| {
                let mut sim = Simulation::new(sc, &sc.policies[0].id).expect("builds");
                sim.run().expect("runs");
                black_box(sim.events())
            })
        });
    }
    g.finish();
}

fn parse(c: &mut Criterion) {
    let big = serde_json::to_string(&big_host()).expect("serialises");
    let mut g = c.benchmark_group("parse_validate");
    for (name, text) in [("credit-boost", CREDIT_BOOST), ("16p-64d", big.as_str())] {
        g.throughput(Throughput::Bytes(text.len() as u64));
        g.bench_with_input(BenchmarkId::from_parameter(name), text, |b, text| {
            b.iter(|| black_box(Scenario::from_json(text).expect("valid")))
        });
    }
    g.finish();
}

fn report(c: &mut Criterion) {
    let sc = Scenario::from_json(CREDIT_BOOST).expect("credit-boost is valid");
    let mut sim = Simulation::new(&sc, "credit").expect("builds");
    sim.run().expect("runs");
    let opts = RunOptions { deterministic: true, ..RunOptions::default() };
    c.bench_function("report/credit-boost", |b| b.iter(|| black_box(sim.report(&opts))));
}

criterion_group!(benches, event_loop, parse, report);
criterion_main!(benches);
