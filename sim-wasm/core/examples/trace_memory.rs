//! Runs a scenario and prints what it keeps in memory and the process's peak memory. With the trace on (the
//! default): what the trace holds. With `--replay`: what a replay run retains as a page worker runs it (a checkpoint
//! every 500 ms, the opening window recorded; checkpoints, the opening window, then a 1 s window focused mid-run).
//! `cargo run --release --example trace_memory -- FILE [DURATION_MS] [--replay [OPENING_MS]]`.

use schedsim_core::size::HeapSize;
use schedsim_core::{
    metrics::peak_rss_mb,
    scenario::Scenario,
    sim::{Detail, SimOptions, Simulation},
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(file) = args.get(1) else {
        eprintln!("usage: trace_memory FILE [DURATION_MS] [--replay [OPENING_MS]]");
        std::process::exit(2)
    };
    let text = std::fs::read_to_string(file).expect("readable scenario");
    let mut sc = Scenario::from_json(&text).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    if let Some(d) = args.get(2).filter(|a| *a != "--replay") {
        sc.duration_ms = d.parse().expect("a duration in ms");
    }
    let policy = sc.policies[0].id.clone();
    if let Some(at) = args.iter().position(|a| a == "--replay") {
        let opening_ms: u64 = args.get(at + 1).map_or(2600, |s| s.parse().expect("an opening in ms"));
        replay(&sc, &policy, opening_ms);
        return;
    }
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
    print_breakdown(sim.trace());
}

fn print_breakdown(t: &schedsim_core::trace::Trace) {
    let parts: Vec<String> = t.breakdown().iter().map(|(k, b)| format!("{k} {:.1} MB", *b as f64 / 1e6)).collect();
    println!("    held: {}", parts.join(", "));
}

fn replay(sc: &Scenario, policy: &str, opening_ms: u64) {
    let opts = SimOptions {
        detail: Detail::Replay { checkpoint_every_ns: 500_000_000 },
        opening_ns: opening_ms * 1_000_000,
        ..SimOptions::default()
    };
    let mut sim = Simulation::with_options(sc, policy, opts).expect("builds");
    let t0 = std::time::Instant::now();
    sim.run().expect("runs");
    let run_s = t0.elapsed().as_secs_f64();
    let mb = |b: usize| b as f64 / 1e6;
    let (kept, cp_bytes) = sim.checkpoints();
    println!(
        "{}: {} s simulated in {run_s:.1} s; retained {:.1} MB (checkpoints {} in {:.1} MB, opening window {:.1} MB, run trace {:.1} MB); peak RSS {:.1} MB",
        sc.id,
        sc.duration_ms / 1000,
        mb(sim.retained_bytes()),
        kept,
        mb(cp_bytes),
        mb(sim.detail().heap_size()),
        mb(sim.trace().heap_size()),
        peak_rss_mb()
    );
    print_breakdown(sim.detail());
    let mid = sc.duration_ms * 1_000_000 / 2 + 37_000_000;
    let t0 = std::time::Instant::now();
    sim.focus(mid, mid + 1_000_000_000).expect("replays");
    println!(
        "  a 1 s window at {} s in {:.2} s: {:.1} MB; retained {:.1} MB; peak RSS {:.1} MB",
        mid / 1_000_000_000,
        t0.elapsed().as_secs_f64(),
        mb(sim.detail().heap_size()),
        mb(sim.retained_bytes()),
        peak_rss_mb()
    );
    print_breakdown(sim.detail());
}
