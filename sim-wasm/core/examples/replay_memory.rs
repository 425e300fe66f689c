//! Runs a scenario in replay mode as a page worker does (a checkpoint every 500 ms, the opening window recorded)
//! and prints what the run retains and the process's peak memory, at the end and with a window focused:
//! `cargo run --release --example replay_memory -- FILE [DURATION_MS] [OPENING_MS]`.

use schedsim_core::size::HeapSize;
use schedsim_core::{
    metrics::peak_rss_mb,
    scenario::Scenario,
    sim::{Detail, SimOptions, Simulation},
};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let Some(file) = args.get(1) else {
        eprintln!("usage: replay_memory FILE [DURATION_MS] [OPENING_MS]");
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
    let opening_ms: u64 = args.get(3).map_or(2600, |s| s.parse().expect("an opening in ms"));
    let opts = SimOptions {
        detail: Detail::Replay { checkpoint_every_ns: 500_000_000 },
        opening_ns: opening_ms * 1_000_000,
        ..SimOptions::default()
    };
    let policy = sc.policies[0].id.clone();
    let mut sim = Simulation::with_options(&sc, &policy, opts).expect("builds");
    sim.run().expect("runs");
    let mb = |b: usize| b as f64 / 1e6;
    let (kept, cp_bytes) = sim.checkpoints();
    println!(
        "{}: {} s simulated; retained {:.1} MB (checkpoints {} in {:.1} MB, opening window {:.1} MB, run trace {:.1} MB); peak RSS {:.1} MB",
        sc.id,
        sc.duration_ms / 1000,
        mb(sim.retained_bytes()),
        kept,
        mb(cp_bytes),
        mb(sim.detail().heap_size()),
        mb(sim.trace().heap_size()),
        peak_rss_mb()
    );
    let mid = sc.duration_ms * 1_000_000 / 2 + 37_000_000;
    sim.focus(mid, mid + 1_000_000_000).expect("replays");
    println!(
        "  a 1 s window at {} s: {:.1} MB; retained {:.1} MB; peak RSS {:.1} MB",
        mid / 1_000_000_000,
        mb(sim.detail().heap_size()),
        mb(sim.retained_bytes()),
        peak_rss_mb()
    );
}
