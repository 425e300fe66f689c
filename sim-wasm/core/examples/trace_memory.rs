//! Runs a scenario with the trace on and prints what the trace holds and the process's peak memory:
//! `cargo run --release --example trace_memory -- FILE [DURATION_MS]`.

use schedsim_core::{metrics::peak_rss_mb, scenario::Scenario, sim::Simulation};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(file) = args.get(1) else {
        eprintln!("usage: trace_memory FILE [DURATION_MS]");
        std::process::exit(2)
    };
    let text = std::fs::read_to_string(file).expect("readable scenario");
    let mut sc = Scenario::from_json(&text).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    if let Some(d) = args.get(2) {
        sc.duration_ms = d.parse().expect("a duration in ms");
    }
    let policy = sc.policies[0].id.clone();
    let mut sim = Simulation::new(&sc, &policy).expect("builds");
    sim.run().expect("runs");
    let m = sim.meta();
    println!(
        "{}: {} s simulated, {} segments, {} decisions, trace {:.1} MB, detail until {}, peak RSS {:.1} MB",
        sc.id,
        sc.duration_ms / 1000,
        sim.trace().segments().len(),
        m.decisions,
        m.trace_bytes as f64 / 1e6,
        m.trace_detail_until_ns.map_or("the end".to_string(), |t| format!("{:.1} s", t as f64 / 1e9)),
        peak_rss_mb()
    );
}
