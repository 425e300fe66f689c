//! Builders and invariant checks shared by the engine's tests and each policy's own: small scenarios from JSON,
//! a run on a host whose mechanisms cost nothing, random hosts for property tests, and the conservation checks.

use super::*;
use proptest::prelude::*;
use serde_json::{json, Value};

/// Property tests draw the same cases on every run (a fixed seed, so `cargo test` is deterministic); set
/// `PROPTEST_RNG_SEED` to explore others.
pub(crate) fn proptest_config(cases: u32) -> ProptestConfig {
    let given = ProptestConfig::default();
    let rng_seed = match given.rng_seed {
        proptest::test_runner::RngSeed::Random => proptest::test_runner::RngSeed::Fixed(0x5eed_5c4e_d1ab),
        seed => seed,
    };
    ProptestConfig { cases, rng_seed, ..given }
}

pub(crate) fn scenario(mut v: Value) -> Scenario {
    // A test that sets a driver domain's costs isolates one mechanism from the host profile: a sensitivity study.
    let costs = v["domains"].as_array().is_some_and(|ds| ds.iter().any(|d| d.get("costs").is_some()));
    if costs && v.get("sensitivity").is_none() {
        v["sensitivity"] = json!("unit test: backend costs chosen to isolate one mechanism");
    }
    Scenario::from_value(v).unwrap_or_else(|e| panic!("test scenario invalid: {e}"))
}

/// Runs with a host whose mechanisms cost nothing, so that a test sees exactly the CPU its workloads ask for;
/// the tests of the cost profile itself pass it explicitly.
pub(crate) fn run(sc: &Scenario, policy: &str) -> Simulation {
    let opts = SimOptions { costs: crate::costs::HostCosts::FREE, ..SimOptions::default() };
    let mut sim = Simulation::with_options(sc, policy, opts).unwrap();
    sim.run().unwrap();
    sim
}

/// pCPU time is conserved: on each pCPU segments never overlap and stay inside the run, so busy + idle equals
/// pcpus x duration; and the per-domain CPU the report counts equals the busy time of the pCPUs.
pub(crate) fn assert_cpu_conserved(sim: &Simulation) {
    let end = sim.end.0;
    let mut busy = vec![0u64; sim.host.pcpus.len()];
    let mut by_pcpu: Vec<Vec<&Segment>> = vec![Vec::new(); sim.host.pcpus.len()];
    for s in sim.trace().segments() {
        assert!(s.start < s.end && s.end <= end, "segment outside the run: {s:?}");
        by_pcpu[s.pcpu as usize].push(s);
        busy[s.pcpu as usize] += s.end - s.start;
    }
    for segs in &by_pcpu {
        for w in segs.windows(2) {
            assert!(w[0].end <= w[1].start, "overlapping segments on one pCPU: {:?} {:?}", w[0], w[1]);
        }
    }
    for &b in &busy {
        let idle = end - b;
        assert_eq!(b + idle, end);
    }
    let dom_total: u64 = sim.measure.dom_metrics.iter().map(|m| m.cpu_ns).sum();
    assert_eq!(dom_total, sim.measure.busy_ns, "domain CPU must add up to pCPU busy time");
    assert!(sim.measure.busy_ns <= (end - sim.warmup.0) * sim.host.pcpus.len() as u64);
}

/// Every packet sent is delivered or still in flight at the end (on the wire, queued at a backend, pending at a
/// vCPU); no notification reaches a guest before its vCPU runs.
pub(crate) fn assert_io_conserved(sim: &Simulation) {
    let mut in_flight = sim.queue.iter().filter(|(_, ev)| matches!(ev, Ev::NicRx(_) | Ev::PeerRx(_))).count() as u64;
    for t in &sim.guests.tasks {
        if let Work::Driver { queue, batch, .. } = &t.work {
            let is_pkt = |i: &DriverItem| matches!(i, DriverItem::Rx(_) | DriverItem::Tx(_));
            in_flight += queue.iter().filter(|i| is_pkt(i)).count() as u64;
            in_flight += batch.iter().filter(|i| is_pkt(i)).count() as u64;
        }
    }
    for v in &sim.host.vcpus {
        in_flight += v.pending.iter().filter(|p| matches!(p.ev, GuestEvent::Packet(_))).count() as u64;
    }
    assert_eq!(
        sim.io.packets_sent,
        sim.io.packets_consumed + sim.io.packets_dropped + in_flight,
        "packets sent = delivered + dropped + in flight"
    );
    assert_eq!(sim.measure.early_deliveries, 0, "a notification reached a guest whose vCPU was not running");
}

/// A vCPU never runs on two pCPUs at once.
pub(crate) fn assert_no_double_running(sim: &Simulation) {
    let mut segs: Vec<&Segment> = sim.trace().segments().iter().collect();
    segs.sort_by_key(|s| (s.vcpu, s.start));
    for w in segs.windows(2) {
        if w[0].vcpu == w[1].vcpu {
            assert!(w[0].end <= w[1].start, "vCPU {} on two pCPUs: {:?} {:?}", w[0].vcpu, w[0], w[1]);
        }
    }
}

/// CPU used by a domain in [a, b), from the trace.
pub(crate) fn dom_cpu_in(sim: &Simulation, dom: usize, a: u64, b: u64) -> u64 {
    sim.trace()
        .segments()
        .iter()
        .filter(|s| sim.host.vcpus[s.vcpu as usize].dom.0 == dom)
        .map(|s| s.end.min(b).saturating_sub(s.start.max(a)))
        .sum()
}

pub(crate) fn cpu_task(name: &str) -> Value {
    json!({ "name": name, "workload": { "type": "cpu" } })
}

/// CPU-bound domains `d0`, `d1`, ... of `(vcpus, weight, cap [%])`: one busy loop pinned to each vCPU.
pub(crate) fn hog_domains(doms: impl Iterator<Item = (u64, u64, u64)>) -> Vec<Value> {
    doms.enumerate()
        .map(|(i, (n, weight, cap))| {
            let tasks: Vec<Value> =
                (0..n).map(|k| json!({ "name": format!("t{k}"), "vcpu": k, "workload": { "type": "cpu" } })).collect();
            json!({ "name": format!("d{i}"), "vcpus": n, "weight": weight, "cap_pct": cap, "tasks": tasks })
        })
        .collect()
}

pub(crate) fn server_task(name: &str, port: u16, think: [u64; 2]) -> Value {
    json!({ "name": name, "workload": { "type": "server", "port": port, "cpu_us": 50, "clients": 2, "think_ms": think } })
}

prop_compose! {
    pub(crate) fn arb_domain(i: usize)(vcpus in 1u32..=3, weight in 1u32..=1024, cap in prop_oneof![Just(0u32), 10u32..=150],
                           ncpu in 0usize..=2, server in any::<bool>(), think_lo in 0u64..=50)
                           -> Value {
        let mut tasks: Vec<Value> = (0..ncpu).map(|k| cpu_task(&format!("burn{k}"))).collect();
        if server {
            tasks.push(server_task("srv", 7, [think_lo, think_lo + 100]));
        }
        // One more I/O workload of a kind picked by the domain's index, so random hosts cover them all.
        let extra = match (i + think_lo as usize) % 7 {
            0 => json!({"type": "io_loop", "io": "disk", "cpu_us": 100}),
            1 => json!({"type": "io_loop", "io": "net", "cpu_us": 50, "port": 9}),
            2 => json!({"type": "net_bulk", "direction": if think_lo % 2 == 0 { "rx" } else { "tx" }, "window_kb": 16}),
            3 => json!({"type": "stream_server", "clients": 2, "kbps": 500, "buffer_kb": 32}),
            4 => json!({"type": "barrier", "compute_us": 2000, "phases": 0, "sync": if think_lo % 2 == 0 { "spin" } else { "block" }}),
            5 => json!({"type": "interactive", "cpu_us": 200, "think_ms": [20, 80]}),
            _ => json!({"type": "disk_reader", "block_kb": 64, "cpu_us": 30}),
        };
        tasks.push(json!({ "name": "extra", "workload": extra }));
        json!({ "name": format!("d{i}"), "vcpus": vcpus, "weight": weight, "cap_pct": cap, "tasks": tasks })
    }
}

pub(crate) fn arb_scenario() -> impl Strategy<Value = Value> {
    (1u32..=4, 1usize..=5, any::<bool>(), 0u64..=1000, any::<bool>(), 1u64..=20).prop_flat_map(
        |(pcpus, ndom, boost, seed, ratelimit, tslice)| {
            let doms: Vec<_> = (0..ndom).map(arb_domain).collect();
            doms.prop_map(move |mut ds| {
                // Every other host's dom0 also writes to the disk itself (direct I/O, no backend hop).
                let own =
                    json!({ "name": "iozone", "workload": { "type": "disk_reader", "op": "write", "block_kb": 256 } });
                let tasks = if seed % 2 == 0 { vec![own] } else { vec![] };
                ds.insert(0, json!({ "name": "dom0", "role": "driver", "costs": { "packet_us": 15 }, "tasks": tasks }));
                json!({
                    "schema": 1, "id": "prop", "title": "prop", "seed": seed, "duration_ms": 1500, "warmup_ms": 100,
                    "host": { "pcpus": pcpus },
                    "domains": ds,
                    "policies": [{ "id": "p", "scheduler": "credit", "params": {
                        "boost": boost, "ratelimit_us": if ratelimit { 1000 } else { 0 }, "tslice_ms": tslice * 3 } }]
                })
            })
        },
    )
}

/// The scenario once per implemented scheduler, each with policy "p": Credit with the given (random)
/// parameters, every other scheduler with its defaults, and the script scheduler once per template (named
/// `script:ID`). One scenario each (a scenario holds at most 8 policies), so a scheduler added to the registry is
/// covered without editing this. A co-scheduler is left out where validation rejects the host (a co-scheduled
/// domain with more vCPUs than pCPUs cannot run at all).
pub(crate) fn under_every_scheduler(v: &Value, credit_params: &Value) -> Vec<(String, Scenario)> {
    crate::policy::registry::SCHEDULERS
        .iter()
        .flat_map(|s| {
            let name = s.name;
            let params: Vec<(String, Value)> = match name {
                "credit" => vec![(name.to_string(), credit_params.clone())],
                "script" => {
                    crate::policy::script::TEMPLATES.iter().map(|t| (format!("script:{}", t.id), t.params())).collect()
                }
                _ => vec![(name.to_string(), json!({}))],
            };
            params.into_iter().filter_map(move |(label, params)| {
                let mut v = v.clone();
                v["policies"] = json!([{ "id": "p", "scheduler": name, "params": params }]);
                v["sensitivity"] = json!("random hosts: backend costs drawn by the property test");
                match Scenario::from_value(v) {
                    Ok(sc) => Some((label, sc)),
                    Err(e) if s.caps.co_schedules && e.to_string().contains("co-scheduled") => None,
                    Err(e) => panic!("test scenario invalid under {label}: {e}"),
                }
            })
        })
        .collect()
}

pub(crate) fn assert_invariants(sim: &Simulation) {
    assert_cpu_conserved(sim);
    assert_no_double_running(sim);
    assert_io_conserved(sim);
    let at_disk = sim.queue.iter().filter(|(_, ev)| matches!(ev, Ev::DiskDone { .. })).count() as u64;
    assert_eq!(sim.io.disk.submitted, sim.io.disk.completed + at_disk, "disk requests submitted = done + at the disk");
}

pub(crate) fn io_scenario() -> Scenario {
    scenario(io_scenario_json())
}

pub(crate) fn io_scenario_json() -> Value {
    json!({
        "schema": 1, "id": "io", "title": "io", "seed": 5, "duration_ms": 5000, "warmup_ms": 0,
        "host": { "pcpus": 1 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "web", "tasks": [server_task("srv", 80, [5, 20]), cpu_task("burn")] },
            { "name": "hog", "tasks": [cpu_task("burn")] }
        ],
        "policies": [{ "id": "credit", "scheduler": "credit" }, { "id": "nb", "scheduler": "credit", "params": { "boost": false } }]
    })
}

/// Shares of CPU-bound domains on one pCPU, from the report's per-domain CPU [fraction of the measured time].
pub(crate) fn shares(sim: &Simulation) -> Vec<f64> {
    let span = (sim.end.0 - sim.warmup.0) as f64 * sim.host.pcpus.len() as f64;
    sim.measure.dom_metrics.iter().map(|m| m.cpu_ns as f64 / span).collect()
}

pub(crate) fn weighted_hogs(scheduler: &str, pcpus: u32, params: Value) -> Scenario {
    scenario(json!({
        "schema": 1, "id": "w", "title": "w", "seed": 4, "duration_ms": 6000, "warmup_ms": 1000,
        "host": { "pcpus": pcpus },
        "domains": [
            { "name": "a", "weight": 256, "tasks": [cpu_task("x")] },
            { "name": "b", "weight": 512, "tasks": [cpu_task("x")] },
            { "name": "c", "weight": 256, "tasks": [cpu_task("x")] },
            { "name": "d", "weight": 1024, "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "p", "scheduler": scheduler, "params": params }]
    }))
}

/// A host for the co-scheduling tests: two CON domains running spin-barrier jobs (always runnable), HIT domains
/// of busy loops, and halfway through the 3-vCPU HIT domain turned CON (a run-time type change).
pub(crate) fn cosched_scenario(scheduler: &str, change: bool) -> Scenario {
    let burn = |n: u32| -> Vec<Value> {
        (0..n).map(|k| json!({ "name": format!("burn{k}"), "vcpu": k, "workload": { "type": "cpu" } })).collect()
    };
    let job =
        json!([{ "name": "job", "workload": { "type": "barrier", "compute_us": 3000, "phases": 0, "sync": "spin" } }]);
    let changes = if scheduler == "hybrid" && change {
        json!([{ "at_ms": 600, "policy": "p", "param": "domain_type.web", "value": "concurrent" }])
    } else {
        json!([])
    };
    scenario(json!({
        "schema": 1, "id": "cosched", "title": "cosched", "seed": 3, "duration_ms": 1200, "warmup_ms": 0,
        // In lockstep, so that co-scheduled siblings start and stop at the very same instants (with Xen's timer
        // slop each pCPU's slice ends up to 50 us apart).
        "host": { "pcpus": 4, "timing": "lockstep" },
        "domains": [
            { "name": "lu", "vcpus": 4, "weight": 300, "type": "concurrent", "tasks": job },
            { "name": "pair", "vcpus": 2, "weight": 200, "type": "concurrent", "tasks": job },
            { "name": "web", "vcpus": 3, "weight": 400, "tasks": burn(3) },
            { "name": "db", "vcpus": 1, "weight": 100, "tasks": burn(1) }
        ],
        "policies": [{ "id": "p", "scheduler": scheduler, "params": { "alloc_slots": 3 } }],
        "changes": changes
    }))
}

pub(crate) fn pipe_scenario(vcpus: u32, pcpus: u32, threads: u32, group: u32, cpu_us: f64, tavs: Value) -> Scenario {
    scenario(json!({
        "schema": 1, "id": "pipe", "title": "pipe", "seed": 1, "duration_ms": 100, "warmup_ms": 0,
        "host": { "pcpus": pcpus },
        "domains": [{ "name": "hack", "vcpus": vcpus,
                      "tasks": [{ "name": "h", "workload": { "type": "pipe", "threads": threads, "group": group,
                                                              "cpu_us": cpu_us } }] }],
        "policies": [{ "id": "credit", "scheduler": "credit" },
                     { "id": "tavs", "scheduler": "credit", "params": { "tavs": tavs } }]
    }))
}

/// No two domains ever run at once on the threads of one unit of `unit` consecutive pCPUs (a core under
/// `sched_gran` "core"), judged on every trace segment: whatever each decision chose.
pub(crate) fn assert_one_domain_per_core(sim: &Simulation, unit: usize) {
    let segs = sim.trace().segments();
    let dom = |s: &Segment| sim.host.vcpus[s.vcpu as usize].dom;
    let mut by_unit: Vec<Vec<&Segment>> = vec![Vec::new(); sim.host.pcpus.len().div_ceil(unit)];
    for s in segs {
        by_unit[s.pcpu as usize / unit].push(s);
    }
    for (u, list) in by_unit.iter_mut().enumerate() {
        list.sort_by_key(|s| s.start);
        for (i, a) in list.iter().enumerate() {
            for b in &list[i + 1..] {
                if b.start >= a.end {
                    break;
                }
                if a.pcpu != b.pcpu {
                    assert_eq!(dom(a), dom(b), "unit {u} ran two domains at once: {a:?} and {b:?}");
                }
            }
        }
    }
}
