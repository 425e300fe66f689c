//! Why partial boosts miss, from a run's trace: `cargo run --release --example pbhr_misses -- FILE POLICY [SEED [VARIANT]]`.
//!
//! For each partial boost of the measured window it finds the run it bought (from the boosted vCPU's next switch
//! onto a pCPU, when its waiting packets are delivered, to the boost's revocation or the vCPU's deschedule) and
//! whether an I/O-bound task ran in it (paper 000 5.2: h = 1); for a miss, the task the first packet woke. Boosts are grouped by whether one packet or several were
//! waiting: several means packets the correlation did not boost for had piled up (paper 000 Fig. 13, where each
//! server's one client has one request in flight, so several packets are several ports).

use schedsim_core::{scenario::Scenario, sim::Simulation};
use std::collections::BTreeMap;

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if args.len() < 3 {
        eprintln!("usage: pbhr_misses FILE POLICY [SEED [VARIANT]]");
        std::process::exit(2);
    }
    let mut sc = Scenario::from_json(&std::fs::read_to_string(&args[1]).expect("readable file")).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    if let Some(label) = args.get(4) {
        sc = sc.pick_variant(label).unwrap_or_else(|e| {
            eprintln!("{e}");
            std::process::exit(2)
        });
    }
    if let Some(s) = args.get(3) {
        sc.seed = s.parse().expect("a seed");
    }
    let mut sim = Simulation::new(&sc, &args[2]).unwrap_or_else(|e| {
        eprintln!("{e}");
        std::process::exit(2)
    });
    sim.run().expect("run completes");
    let meta = sim.meta();
    if let Some(t) = meta.trace_detail_until_ns {
        eprintln!("warning: the trace's detail stops at {:.1} s; later boosts are not classified", t as f64 / 1e9);
    }
    let trace = sim.trace();
    let io_bound: Vec<bool> =
        (0..meta.tasks.len()).map(|t| sim.task_belief(schedsim_core::model::TaskId(t)).is_some_and(|b| b.1)).collect();
    let segs = trace.segments();
    let io = trace.io_events(0, meta.duration_ns + 1, usize::MAX);
    // (packets waiting: "1" or "several") -> (boosts, hits, first task of the misses -> count)
    let mut groups: BTreeMap<&str, (u64, u64, BTreeMap<String, u64>)> = BTreeMap::new();
    for b in trace.boosts().iter().filter(|b| b.kind == "boost" && b.t_ns >= meta.warmup_ns) {
        // The boosted run begins when the vCPU is switched in and its waiting packets are delivered.
        let mine = |r: &&schedsim_core::trace::IoRec| r.vcpu == b.vcpu && r.kind == "packet" && r.phase == "delivered";
        let Some(start) = io.iter().filter(mine).find(|r| r.t_ns >= b.t_ns).map(|r| r.t_ns) else { continue };
        let packets = io.iter().filter(mine).filter(|r| r.t_ns == start).count();
        // The boost lasts until the guest switches to a task that is not I/O-bound (the revoke mark) or the vCPU
        // leaves the pCPU (a gap in its segments); a run revoked at once lasts 0 ns and leaves no segment at all.
        let revoked = trace.boosts().iter().find(|r| r.vcpu == b.vcpu && r.kind == "revoke" && r.t_ns >= start);
        let until = revoked.map_or(u64::MAX, |r| r.t_ns);
        let mut at = start;
        let mut hit = false;
        for s in segs.iter().filter(|s| s.vcpu == b.vcpu && s.start >= start) {
            if s.start != at || s.start >= until {
                break;
            }
            hit |= s.task >= 0 && io_bound[s.task as usize];
            at = s.end;
        }
        let g = groups.entry(if packets > 1 { "several" } else { "1" }).or_default();
        g.0 += 1;
        if hit {
            g.1 += 1;
        } else {
            // The task the first waiting packet woke (the guest wakes in packet order).
            let woken = trace.task_states(start, start + 1, 64).into_iter().find(|r| r.state == "runnable");
            let name = woken.map_or("(none)".to_string(), |r| meta.tasks[r.task as usize].path.clone());
            let why = if woken.is_some_and(|r| io_bound[r.task as usize]) {
                format!("{name} woken first, an already runnable task ran")
            } else {
                format!("{name} woken first and ran")
            };
            *g.2.entry(why).or_default() += 1;
        }
    }
    let (boosts, hits) = sim.partial_boosts().unwrap_or((0, 0));
    println!("{} / {} seed {}: report {boosts} boosts, {hits} hits", sc.id, args[2], sc.seed);
    for (waiting, (n, h, misses)) in &groups {
        let ratio = if *n > 0 { *h as f64 / *n as f64 } else { 0.0 };
        println!("  {waiting:>7} packet(s) waiting: {n} boosts, {h} hits ({:.0}%)", ratio * 100.0);
        for (task, k) in misses {
            println!("          missed: {task}: {k}");
        }
    }
}
