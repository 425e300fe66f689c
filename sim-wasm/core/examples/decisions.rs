//! Prints a window of a run's decision log: `cargo run --example decisions -- FILE POLICY FROM_MS TO_MS`.

use schedsim_core::{scenario::Scenario, sim::Simulation};

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 5 {
        eprintln!("usage: decisions FILE POLICY FROM_MS TO_MS");
        std::process::exit(2);
    }
    let sc = Scenario::from_json(&std::fs::read_to_string(&args[1]).expect("readable file")).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    let ms = |s: &str| s.parse::<u64>().expect("a number of ms") * 1_000_000;
    let mut sim = Simulation::new(&sc, &args[2]).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    sim.run().expect("run completes");
    for d in sim.trace().decisions(ms(&args[3]), ms(&args[4]), 10_000) {
        println!("{:>12.3} ms  pCPU{}  {}", d.t_ns as f64 / 1e6, d.pcpu, d.text);
    }
}
