//! Engine tests: invariants over random small hosts (property tests), determinism, and the I/O path.

use super::*;
use crate::report::RunOptions;
use proptest::prelude::*;
use serde_json::{json, Value};

fn scenario(v: Value) -> Scenario {
    Scenario::from_value(v).unwrap_or_else(|e| panic!("test scenario invalid: {e}"))
}

fn run(sc: &Scenario, policy: &str) -> Simulation {
    let mut sim = Simulation::new(sc, policy).unwrap();
    sim.run().unwrap();
    sim
}

/// pCPU time is conserved: on each pCPU segments never overlap and stay inside the run, so busy + idle equals
/// pcpus x duration; and the per-domain CPU the report counts equals the busy time of the pCPUs.
fn assert_cpu_conserved(sim: &Simulation) {
    let end = sim.end.0;
    let mut busy = vec![0u64; sim.pcpus.len()];
    let mut by_pcpu: Vec<Vec<&Segment>> = vec![Vec::new(); sim.pcpus.len()];
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
    let dom_total: u64 = sim.dom_metrics.iter().map(|m| m.cpu_ns).sum();
    assert_eq!(dom_total, sim.busy_ns, "domain CPU must add up to pCPU busy time");
    assert!(sim.busy_ns <= (end - sim.warmup.0) * sim.pcpus.len() as u64);
}

/// Every packet sent is delivered or still in flight at the end (on the wire, queued at a backend, pending at a
/// vCPU); no notification reaches a guest before its vCPU runs.
fn assert_io_conserved(sim: &Simulation) {
    let queued = sim.queue.iter().map(|Reverse(q)| q.slot).chain(sim.now_queue.iter().map(|q| q.slot));
    let mut in_flight = queued.filter(|&s| matches!(sim.slab[s as usize], Ev::NicRx(_) | Ev::PeerRx(_))).count() as u64;
    for t in &sim.tasks {
        if let Work::Driver { queue, current, .. } = &t.work {
            let is_pkt = |i: &DriverItem| matches!(i, DriverItem::Rx(_) | DriverItem::Tx(_));
            in_flight += queue.iter().filter(|i| is_pkt(i)).count() as u64;
            in_flight += current.iter().filter(|i| is_pkt(i)).count() as u64;
        }
    }
    for v in &sim.vcpus {
        in_flight += v.pending.iter().filter(|p| matches!(p.ev, GuestEvent::Packet(_))).count() as u64;
    }
    assert_eq!(sim.packets_sent, sim.packets_consumed + in_flight, "packets sent = delivered + in flight");
    assert_eq!(sim.early_deliveries, 0, "a notification reached a guest whose vCPU was not running");
}

/// A vCPU never runs on two pCPUs at once.
fn assert_no_double_running(sim: &Simulation) {
    let mut segs: Vec<&Segment> = sim.trace().segments().iter().collect();
    segs.sort_by_key(|s| (s.vcpu, s.start));
    for w in segs.windows(2) {
        if w[0].vcpu == w[1].vcpu {
            assert!(w[0].end <= w[1].start, "vCPU {} on two pCPUs: {:?} {:?}", w[0].vcpu, w[0], w[1]);
        }
    }
}

/// CPU used by a domain in [a, b), from the trace.
fn dom_cpu_in(sim: &Simulation, dom: usize, a: u64, b: u64) -> u64 {
    sim.trace()
        .segments()
        .iter()
        .filter(|s| sim.vcpus[s.vcpu as usize].dom.0 == dom)
        .map(|s| s.end.min(b).saturating_sub(s.start.max(a)))
        .sum()
}

/// Credit enforces caps at accounting: over any run of whole accounting periods starting at a boundary, a
/// capped domain uses at most its cap plus the one slice it may overrun before accounting parks it
/// (credit.c parks only in `csched_acct`).
fn assert_cap_respected(sim: &Simulation, sc: &Scenario) {
    let period = 30_000_000u64;
    let end = sim.end.0;
    for (d, dom) in sc.domains.iter().enumerate() {
        if dom.cap_pct == 0 {
            continue;
        }
        let cap = dom.cap_pct as f64 / 100.0;
        let slack = (period * u64::from(dom.vcpus)) as f64;
        let mut k = 0;
        while (k + 1) * period <= end {
            let a = k * period;
            let used = dom_cpu_in(sim, d, a, end - (end - a) % period) as f64;
            let span = ((end - a) - (end - a) % period) as f64;
            assert!(used <= cap * span + slack, "{} used {used} ns in {span} ns from {a}", dom.name);
            k += 1;
        }
    }
}

fn cpu_task(name: &str) -> Value {
    json!({ "name": name, "workload": { "type": "cpu" } })
}

fn server_task(name: &str, port: u16, think: [u64; 2]) -> Value {
    json!({ "name": name, "workload": { "type": "server", "port": port, "cpu_us": 50, "clients": 2, "think_ms": think } })
}

prop_compose! {
    fn arb_domain(i: usize)(vcpus in 1u32..=3, weight in 1u32..=1024, cap in prop_oneof![Just(0u32), 10u32..=150],
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

fn arb_scenario() -> impl Strategy<Value = Value> {
    (1u32..=4, 1usize..=5, any::<bool>(), 0u64..=1000, any::<bool>(), 1u64..=20).prop_flat_map(
        |(pcpus, ndom, boost, seed, ratelimit, tslice)| {
            let doms: Vec<_> = (0..ndom).map(arb_domain).collect();
            doms.prop_map(move |mut ds| {
                ds.insert(0, json!({ "name": "dom0", "role": "driver", "costs": { "packet_us": 15 } }));
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_on_random_hosts(v in arb_scenario()) {
        let sc = scenario(v);
        let sim = run(&sc, "p");
        assert_cpu_conserved(&sim);
        assert_no_double_running(&sim);
        assert_io_conserved(&sim);
    }
}

#[test]
fn caps_hold_over_accounting_windows() {
    for pcpus in [1, 2] {
        let sc = scenario(json!({
            "schema": 1, "id": "cap", "title": "cap", "seed": 3, "duration_ms": 6000,
            "host": { "pcpus": pcpus },
            "domains": [
                { "name": "c20", "cap_pct": 20, "tasks": [cpu_task("a")] },
                { "name": "c50", "cap_pct": 50, "vcpus": 2, "tasks": [cpu_task("a"), cpu_task("b")] },
                { "name": "free", "tasks": [cpu_task("a")] }
            ],
            "policies": [{ "id": "p", "scheduler": "credit" }]
        }));
        let sim = run(&sc, "p");
        assert_cpu_conserved(&sim);
        assert_no_double_running(&sim);
        assert_cap_respected(&sim, &sc);
    }
}

fn io_scenario() -> Scenario {
    scenario(json!({
        "schema": 1, "id": "io", "title": "io", "seed": 5, "duration_ms": 5000, "warmup_ms": 0,
        "host": { "pcpus": 1 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "web", "tasks": [server_task("srv", 80, [5, 20]), cpu_task("burn")] },
            { "name": "hog", "tasks": [cpu_task("burn")] }
        ],
        "policies": [{ "id": "credit", "scheduler": "credit" }, { "id": "nb", "scheduler": "credit", "params": { "boost": false } }]
    }))
}

#[test]
fn same_seed_same_report_and_trace() {
    let sc = io_scenario();
    let opts = RunOptions { deterministic: true, ..RunOptions::default() };
    let a = crate::report::run_scenario(&sc, &[], &opts).unwrap();
    let b = crate::report::run_scenario(&sc, &[], &opts).unwrap();
    assert_eq!(crate::report::to_json_string(&a), crate::report::to_json_string(&b));
    assert_eq!(run(&sc, "credit").trace().segments(), run(&sc, "credit").trace().segments());
}

/// Common random numbers: the clients' send times come from their own streams, so both policies see the same
/// first requests whatever the scheduling.
#[test]
fn offered_load_does_not_depend_on_the_policy() {
    let sc = io_scenario();
    let a = Simulation::new(&sc, "credit").unwrap();
    let b = Simulation::new(&sc, "nb").unwrap();
    let firsts = |s: &Simulation| {
        let mut v: Vec<(Nanos, PeerId)> = s
            .queue
            .iter()
            .filter_map(
                |Reverse(q)| if let Ev::PeerTimer(c) = s.slab[q.slot as usize] { Some((q.at, c)) } else { None },
            )
            .collect();
        v.sort();
        v
    };
    assert_eq!(firsts(&a), firsts(&b));
    assert_eq!(firsts(&a).len(), 2);
}

/// Every request is answered: the clients are closed-loop, so at the end each has at most one request in flight.
#[test]
fn every_request_is_answered() {
    let sc = io_scenario();
    let sim = run(&sc, "credit");
    assert!(sim.packets_sent > 100, "the check is not vacuous");
    assert_io_conserved(&sim);
    let served = sim.dom_metrics[1].requests_served;
    let answered = sim.dom_metrics[1].responses_ns.len();
    assert!(answered > 50, "too few responses: {answered}");
    assert!(served >= answered && served - answered <= 2, "served {served}, answered {answered}");
    // Event latency is recorded for every notification and never negative; none exceeds the run.
    assert!(sim.dom_metrics[1].event_latency_ns.max() <= sim.end.0);
}

/// A domain with nothing to do never runs, and a lone busy loop gets the whole pCPU.
#[test]
fn idle_domains_stay_off_the_cpu() {
    let sc = scenario(json!({
        "schema": 1, "id": "idle", "title": "idle", "seed": 1, "duration_ms": 1000,
        "host": { "pcpus": 1 },
        "domains": [ { "name": "idle" }, { "name": "busy", "tasks": [cpu_task("a")] } ],
        "policies": [{ "id": "p", "scheduler": "credit" }]
    }));
    let sim = run(&sc, "p");
    assert_eq!(sim.dom_metrics[0].cpu_ns, 0);
    assert_eq!(sim.dom_metrics[1].cpu_ns, 1_000_000_000);
}

/// Linux-like guest: a woken server task preempts the busy loop in its guest at once, so when its vCPU is
/// running the request is served within its CPU cost.
#[test]
fn guest_wakeup_preemption() {
    let sc = scenario(json!({
        "schema": 1, "id": "g", "title": "g", "seed": 2, "duration_ms": 4000, "warmup_ms": 2000,
        "host": { "pcpus": 1, "net": { "latency_us": 0, "mbps": 1000000 } },
        "domains": [
            { "name": "dom0", "role": "driver", "costs": { "packet_us": 0 } },
            { "name": "web", "tasks": [server_task("srv", 80, [10, 30]), cpu_task("burn")] }
        ],
        "policies": [{ "id": "p", "scheduler": "credit" }]
    }));
    let sim = run(&sc, "p");
    let r = &sim.dom_metrics[1].responses_ns;
    assert!(!r.is_empty());
    // 50 us of CPU per request; dom0 costs nothing; the only wait is for dom0 to be scheduled (boosted).
    assert!(r.max() < 1_000_000, "max response {} ns", r.max());
}

#[test]
fn event_budget_stops_runaway_runs() {
    let sc = io_scenario();
    let mut sim = Simulation::new(&sc, "credit").unwrap();
    sim.event_budget = 100;
    let e = sim.run().unwrap_err();
    assert!(e.to_string().contains("event budget"), "{e}");
}

/// The trace's notifications match the report: one delivery record per measured event latency, with the same
/// waits; task state changes alternate per task.
#[test]
fn trace_records_notifications_and_task_states() {
    let sc = io_scenario();
    let sim = run(&sc, "credit");
    let io = sim.trace().io_events(0, u64::MAX, usize::MAX);
    let delivered: Vec<u64> = io.iter().filter(|r| r.phase == "delivered").map(|r| r.wait_ns).collect();
    let measured: u64 = sim.dom_metrics.iter().map(|m| m.event_latency_ns.len()).sum();
    assert_eq!(delivered.len() as u64, measured);
    let max_wait = sim.dom_metrics.iter().map(|m| m.event_latency_ns.max()).max().unwrap();
    assert_eq!(delivered.iter().copied().max().unwrap(), max_wait);
    assert!(io.iter().any(|r| r.phase == "pending"), "some notifications had to wait");
    let states = sim.trace().task_states(0, u64::MAX, usize::MAX);
    for t in 0..sim.tasks.len() as u32 {
        let mine: Vec<&str> = states.iter().filter(|r| r.task == t).map(|r| r.state).collect();
        assert!(mine.windows(2).all(|w| w[0] != w[1]), "task {t} states must alternate: {mine:?}");
    }
}

/// Task-aware scheduling with PBratio 0 infers but never boosts: the schedule and every domain metric are
/// exactly plain Credit's (paper 000 3.4: "if PBratio is zero, our scheduler runs in the same manner"). Tracking's
/// own hypervisor cost (5.5, `track_cost_ns`) is a separate overhead and is zeroed here.
#[test]
fn pb_ratio_zero_is_plain_credit() {
    let sc = scenario(json!({
        "schema": 1, "id": "pb0", "title": "pb0", "seed": 9, "duration_ms": 8000, "warmup_ms": 500,
        "host": { "pcpus": 2 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "mixed", "tasks": [server_task("srv", 7, [5, 50]), cpu_task("burn")] },
            { "name": "io", "tasks": [server_task("srv", 7, [5, 50])] },
            { "name": "a", "tasks": [cpu_task("burn")] }, { "name": "b", "tasks": [cpu_task("burn")] },
            { "name": "c", "tasks": [cpu_task("burn")] }
        ],
        "policies": [
            { "id": "credit", "scheduler": "credit" },
            { "id": "pb0", "scheduler": "credit", "params": { "tavs": { "pb_ratio": 0, "track_cost_ns": 0 } } },
            { "id": "pb", "scheduler": "credit", "params": { "tavs": { "pb_ratio": 0.125 } } }
        ]
    }));
    let (plain, zero, on) = (run(&sc, "credit"), run(&sc, "pb0"), run(&sc, "pb"));
    assert_eq!(plain.trace().segments(), zero.trace().segments());
    let opts = RunOptions { deterministic: true, ..RunOptions::default() };
    let (a, b) = (plain.report(&opts), zero.report(&opts));
    assert_eq!(a["domains"], b["domains"]);
    assert_eq!(a["fairness"], b["fairness"]);
    assert_eq!(b["partial_boosts"]["count"], 0);
    // The inference did run, and with an allowance the same host is scheduled differently.
    assert!(b["tasks"]["mixed/srv"]["belief"].as_i64().unwrap() > 20);
    // The trace's belief history ends where the report's belief is.
    let srv = zero.meta().tasks.iter().position(|t| t.path == "mixed/srv").unwrap() as u32;
    let history = zero.trace().beliefs(Some(srv));
    assert_eq!(history.last().map(|r| r.belief), b["tasks"]["mixed/srv"]["belief"].as_i64());
    assert_ne!(plain.trace().segments(), on.trace().segments());
}

fn pipe_scenario(vcpus: u32, pcpus: u32, threads: u32, group: u32, cpu_us: f64, tavs: Value) -> Scenario {
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

/// A pipe ring on one vCPU: one message goes round, each hop is cpu_us of CPU and a guest-internal wakeup (no
/// event channel notification at all), and the ring's tasks share the CPU equally.
#[test]
fn pipe_ring_passes_messages_inside_the_guest() {
    let sc = pipe_scenario(1, 1, 4, 4, 99.0, json!({}));
    let sim = run(&sc, "credit");
    let r = sim.report(&RunOptions::default());
    // 100 ms of CPU at 99 us per message.
    assert_eq!(sim.dom_metrics[0].messages, 1010);
    assert_eq!(r["domains"]["hack"]["throughput"]["messages_per_s"], 10_100.0);
    assert!(sim.dom_metrics[0].event_latency_ns.is_empty(), "no hypervisor event on a one-vCPU ring");
    for k in 0..4 {
        let cpu = r["tasks"][format!("hack/h.{k}")]["cpu_ms"].as_f64().unwrap();
        assert!((cpu - 25.0).abs() < 0.2, "task {k} ran {cpu} ms");
    }
    // Two rings of two: tasks 0-1 and 2-3, each ring with its own message.
    let sc = pipe_scenario(1, 1, 4, 2, 99.0, json!({}));
    let sim = run(&sc, "credit");
    assert_eq!(sim.dom_metrics[0].messages, 1010);
    match (&sim.tasks[1].work, &sim.tasks[3].work) {
        (Work::Pipe { next: a, .. }, Work::Pipe { next: b, .. }) => assert_eq!((a.0, b.0), (0, 2)),
        _ => panic!("pipe tasks expected"),
    }
    // Across two vCPUs a wakeup is an IPI through the hypervisor.
    let sc = pipe_scenario(2, 2, 2, 2, 100.0, json!({}));
    let sim = run(&sc, "credit");
    assert!(sim.dom_metrics[0].messages > 900);
    assert!(sim.dom_metrics[0].event_latency_ns.len() > 900, "every hop to the other vCPU is an IPI");
    let bad = Scenario::from_value(json!({
        "schema": 1, "id": "p", "title": "p", "seed": 1, "duration_ms": 100, "host": { "pcpus": 1 },
        "domains": [{ "name": "d", "tasks": [{ "name": "h", "workload": { "type": "pipe", "threads": 5,
                                                                           "group": 2, "cpu_us": 1 } }] }],
        "policies": [{ "id": "credit", "scheduler": "credit" }]
    }))
    .unwrap_err();
    assert!(bad.to_string().contains("domains[0].tasks[0].workload"), "{bad}");
}

/// Task tracking's hypervisor cost is charged to the running vCPU: the domain's CPU time is unchanged, its tasks
/// get that much less of it. At 1 us per observed switch and 9 us per message, a message takes 10 us.
#[test]
fn tracking_cost_is_charged_to_the_vcpu() {
    let sc = pipe_scenario(1, 1, 4, 4, 9.0, json!({ "track_cost_ns": 1000 }));
    let (off, on) = (run(&sc, "credit"), run(&sc, "tavs"));
    assert_eq!(off.dom_metrics[0].cpu_ns, on.dom_metrics[0].cpu_ns, "the vCPU's CPU time is the same");
    assert_eq!(off.dom_metrics[0].tracking_ns, 0);
    assert_eq!(off.dom_metrics[0].messages, 11_111);
    assert_eq!(on.dom_metrics[0].messages, 10_000);
    // One observed switch per message, and the first task's at boot.
    assert_eq!(on.dom_metrics[0].tracking_ns, (10_000 + 1) * 1000);
    let r = on.report(&RunOptions::default());
    assert_eq!(r["domains"]["hack"]["tracking_ms"], 10.001);
    assert!(off.report(&RunOptions::default())["domains"]["hack"].get("tracking_ms").is_none());
    // A busy loop's progress does not count the hypervisor's tracking time as its own work.
    let sc = scenario(json!({
        "schema": 1, "id": "c", "title": "c", "seed": 1, "duration_ms": 100, "host": { "pcpus": 1 },
        "domains": [{ "name": "d", "tasks": [cpu_task("a"), cpu_task("b")] }],
        "policies": [{ "id": "tavs", "scheduler": "credit", "params": { "tavs": { "track_cost_ns": 1000000 } } }]
    }));
    let sim = run(&sc, "tavs");
    let r = sim.report(&RunOptions::default());
    let tracking = sim.dom_metrics[0].tracking_ns as f64 / 1e6;
    assert!(tracking > 0.0);
    let progress = r["domains"]["d"]["throughput"]["progress_per_s"].as_f64().unwrap();
    assert!((progress - (100.0 - tracking) * 10.0).abs() < 1e-6, "{progress} vs {tracking}");
}

/// A scenario change of IOthreshold reaches the inference through `set_param`: it is in the decision log, a task
/// that was below BelThreshold climbs above it afterwards, and the report times that from the change.
#[test]
fn io_threshold_change_takes_effect() {
    let sc = scenario(json!({
        "schema": 1, "id": "thr", "title": "thr", "seed": 1, "duration_ms": 3000, "warmup_ms": 0,
        "host": { "pcpus": 1 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "text", "tasks": [
                { "name": "wget", "workload": { "type": "io_loop", "io": "net", "cpu_us": 250 } }, cpu_task("bzip2")] },
            { "name": "a", "tasks": [cpu_task("burn")] }, { "name": "b", "tasks": [cpu_task("burn")] }
        ],
        "policies": [
            { "id": "keep", "scheduler": "credit", "params": { "tavs": { "io_threshold_us": 100 } } },
            { "id": "raise", "scheduler": "credit", "params": { "tavs": { "io_threshold_us": 100 } } }
        ],
        "changes": [{ "at_ms": 1500, "policy": "raise", "param": "tavs.io_threshold_us", "value": 500 }]
    }));
    let (keep, raise) = (run(&sc, "keep"), run(&sc, "raise"));
    let log: Vec<String> =
        raise.trace().decisions(0, u64::MAX, usize::MAX).iter().map(|d| d.text.to_string()).collect();
    assert!(log.iter().any(|t| t == "change: tavs.io_threshold_us = 500"), "the change is logged");
    let opts = RunOptions::default();
    let (k, r) = (keep.report(&opts), raise.report(&opts));
    assert_eq!(k["tasks"]["text/wget"]["belief"], -100);
    assert!(k["tasks"]["text/wget"].get("io_bound_after_ms").is_none());
    assert!(r["tasks"]["text/wget"]["belief"].as_i64().unwrap() > 20);
    assert_eq!(r["tasks"]["text/wget"]["io_bound"], true);
    // Not before the change: from -100 it takes 25 positive observations.
    let after = r["tasks"]["text/wget"]["io_bound_after_ms"].as_f64().unwrap();
    assert!(after > 0.0 && after < 1500.0, "{after}");
    let wget = raise.meta().tasks.iter().position(|t| t.path == "text/wget").unwrap() as u32;
    let crossed = raise.trace().beliefs(Some(wget)).into_iter().find(|b| b.belief > 20).unwrap();
    assert_eq!(crossed.t_ns, 1_500_000_000 + (after * 1e6).round() as u64);
}
