//! Engine tests: invariants over random small hosts (property tests), determinism, and the I/O path.

use super::guest::MAX_SLEEP_AVG;
use super::*;
use crate::report::RunOptions;
use crate::sim::timing::TIMER_SLOP;
use proptest::prelude::*;
use serde_json::{json, Value};

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
fn assert_cpu_conserved(sim: &Simulation) {
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
fn assert_io_conserved(sim: &Simulation) {
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
        .filter(|s| sim.host.vcpus[s.vcpu as usize].dom.0 == dom)
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

pub(crate) fn cpu_task(name: &str) -> Value {
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

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    #[test]
    fn invariants_hold_on_random_hosts(v in arb_scenario()) {
        let credit_params = v["policies"][0]["params"].clone();
        for (_, sc) in under_every_scheduler(&v, &credit_params) {
            assert_invariants(&run(&sc, "p"));
        }
    }
}

/// The same seed gives the same report and trace under every implemented scheduler.
#[test]
fn every_scheduler_is_deterministic() {
    let mut v = io_scenario_json();
    v["duration_ms"] = json!(1500);
    let opts = RunOptions { deterministic: true, ..RunOptions::default() };
    for (name, sc) in under_every_scheduler(&v, &json!({})) {
        let a = crate::report::run_scenario(&sc, &[], &opts).unwrap();
        let b = crate::report::run_scenario(&sc, &[], &opts).unwrap();
        assert_eq!(crate::report::to_json_string(&a), crate::report::to_json_string(&b), "{name}");
        assert_eq!(run(&sc, "p").trace().segments(), run(&sc, "p").trace().segments(), "{name}");
    }
}

/// Every scenario of the library runs under every implemented scheduler with its defaults (a short run, claims
/// and parameter changes dropped since they name the file's own policies), keeping the engine invariants.
#[test]
fn every_scenario_runs_under_every_scheduler() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .unwrap()
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| !matches!(p.file_name().and_then(|n| n.to_str()), Some("schema.json" | "index.json")))
        .collect();
    files.sort();
    assert!(files.len() >= 5, "scenario library not found at {}", dir.display());
    for f in files {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(&f).unwrap()).unwrap();
        v["claims"] = json!([]);
        v["changes"] = json!([]);
        v.as_object_mut().unwrap().remove("variants");
        v["duration_ms"] = json!(v["duration_ms"].as_u64().unwrap().min(600));
        v["warmup_ms"] = json!(0);
        for (name, sc) in under_every_scheduler(&v, &json!({})) {
            let mut sim = Simulation::with_options(&sc, "p", SimOptions { trace: true, ..SimOptions::default() })
                .unwrap_or_else(|e| panic!("{} under {name}: {e}", f.display()));
            sim.run().unwrap_or_else(|e| panic!("{} under {name}: {e}", f.display()));
            assert_invariants(&sim);
        }
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 16, ..ProptestConfig::default() })]

    /// The same invariants under the co-scheduling policies: hybrid with every other guest domain CON (where it
    /// fits the host) and strict gang (where every domain fits).
    #[test]
    fn invariants_hold_under_co_scheduling(v in arb_scenario(), slot in 1u64..=12, l in 1u64..=5) {
        let mut v = v;
        let pcpus = v["host"]["pcpus"].as_u64().unwrap_or(1);
        let fits = v["domains"].as_array().is_some_and(|ds| ds.iter().all(|d| d["vcpus"].as_u64().unwrap_or(1) <= pcpus));
        for (i, d) in v["domains"].as_array_mut().into_iter().flatten().enumerate() {
            if i % 2 == 1 && d["vcpus"].as_u64().unwrap_or(1) <= pcpus {
                d["type"] = json!("concurrent");
            }
        }
        let params = json!({ "slot_ms": slot, "alloc_slots": l });
        let mut policies = vec![json!({ "id": "h", "scheduler": "hybrid", "params": params })];
        if fits {
            policies.push(json!({ "id": "g", "scheduler": "gang", "params": params }));
        }
        v["policies"] = Value::Array(policies);
        let sc = scenario(v);
        for id in ["h", "g"] {
            if sc.policy(id).is_none() {
                continue;
            }
            let sim = run(&sc, id);
            assert_cpu_conserved(&sim);
            assert_no_double_running(&sim);
            assert_io_conserved(&sim);
        }
    }
}

/// A host of CPU-bound domains for the fairness properties: `(vcpus, weight, cap per vCPU [%] or 0)` each, Credit
/// with `params`. Returns each domain's CPU share and Credit's entitlement for it: `csched_acct`'s, by the rule of
/// the release `params.version` names (4.x: weight times active vCPUs, `prv->weight += sdom->weight` per active
/// vCPU; 3.x and the default: the domain's weight once), water-filled, bounded by the vCPUs and the cap (under 4.x
/// it differs from the report's per-domain `fair_share` when domains have different vCPU counts).
fn credit_shares(pcpus: u64, doms: &[CpuDomain], seed: u64, params: Value) -> Vec<(f64, f64)> {
    let domains: Vec<Value> = doms
        .iter()
        .enumerate()
        .map(|(i, &(n, weight, cap))| {
            let tasks: Vec<Value> =
                (0..n).map(|k| json!({ "name": format!("t{k}"), "vcpu": k, "workload": { "type": "cpu" } })).collect();
            json!({ "name": format!("d{i}"), "vcpus": n, "weight": weight, "cap_pct": cap * n, "tasks": tasks })
        })
        .collect();
    let sc = scenario(json!({
        "schema": 1, "id": "fair", "title": "fair", "seed": seed, "duration_ms": 5000, "warmup_ms": 1000,
        "host": { "pcpus": pcpus }, "domains": domains,
        "policies": [{ "id": "p", "scheduler": "credit", "params": params.clone() }]
    }));
    let report = crate::report::run_scenario(&sc, &[], &RunOptions::default()).unwrap();
    let per_vcpu = crate::policy::credit::ShareRule::of(&params) == crate::policy::credit::ShareRule::VcpuWeight;
    let weights: Vec<u32> = doms.iter().map(|&(n, w, _)| if per_vcpu { w * n } else { w } as u32).collect();
    let bounds: Vec<f64> =
        doms.iter().map(|&(n, _, cap)| if cap == 0 { n as f64 } else { (cap * n) as f64 / 100.0 }).collect();
    let entitled = crate::metrics::fair_shares(pcpus as f64, &weights, &bounds);
    (0..doms.len())
        .map(|i| (report.runs[0]["domains"][format!("d{i}")]["cpu_share"].as_f64().unwrap(), entitled[i]))
        .collect()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 12, ..ProptestConfig::default() })]

    /// Weights and caps, ceiling off (see `credit_ceiling_is_what_misses_weighted_shares` for weights alone).
    /// Finding: this does not hold on about 3 hosts in 100 (worst 0.17 when
    /// written): a capped domain's vCPUs are parked together once their debt passes the cap and unparked together
    /// with positive credit, so they come back as UNDER bursts that round-robin with uncapped UNDER vCPUs, and
    /// `csched_acct` hands the credit a capped domain cannot use only to the domains after it in its list (one
    /// pass; the reorder rotates it over periods). Both are Xen's code (credit.c `csched_acct`), not timing: the
    /// same hosts miss in lockstep. Kept, ignored, to run on demand (`cargo test -- --ignored`).
    #[test]
    #[ignore = "finding: with caps, Credit misses its entitlement by more than 0.05 on about 3 random hosts in 100"]
    fn credit_shares_fair_with_caps_without_the_ceiling(
        pcpus in 1u64..=8,
        doms in proptest::collection::vec((1u64..=4, 1u64..=1024, prop_oneof![Just(0u64), 10u64..=100]), 2..=4),
        seed in 0u64..1_000_000,
    ) {
        for (i, (share, fair)) in credit_shares(pcpus, &doms, seed, json!({ "credit_ceiling": false })).into_iter().enumerate() {
            prop_assert!((share - fair).abs() <= 0.05, "d{i}: cpu_share {share} against entitlement {fair} ({doms:?} on {pcpus} pCPUs)");
        }
    }
}

/// A CPU-bound domain of the fairness properties: (vCPUs, weight, cap per vCPU [%] or 0).
type CpuDomain = (u64, u64, u64);

/// `n` random hosts of CPU-bound domains, `(pcpus, [(vcpus, weight, cap per vCPU [%] or 0)], seed)`, drawn from a
/// fixed stream so that every run judges the same sample (the rates below are findings about that sample).
fn sample_hosts(n: usize, caps: bool) -> Vec<(u64, Vec<CpuDomain>, u64)> {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::{Config, RngAlgorithm, TestRng, TestRunner};
    let mut runner = TestRunner::new_with_rng(Config::default(), TestRng::deterministic_rng(RngAlgorithm::ChaCha));
    let cap = if caps { prop_oneof![Just(0u64), 10u64..=100].boxed() } else { Just(0u64).boxed() };
    let host = (1u64..=8, proptest::collection::vec((1u64..=4, 1u64..=1024, cap), 2..=4), 0u64..1_000_000);
    (0..n).map(|_| host.new_tree(&mut runner).unwrap().current()).collect()
}

/// Weights give their shares with pCPUs on their own clocks, except for what Credit's upper bound on credits
/// takes. On 200 random hosts of uncapped CPU-bound domains (1-8 pCPUs, 1-4 vCPUs each, weights 1-1024; 3.x and
/// 4.x rules in turn; Xen-like timing), a domain "misses" when its share is off its entitlement by more than 0.05
/// of the host over 4 s. With the bound switched off, misses are rare and small: two residual effects of Credit's
/// design remain (per-pCPU run queues: with one vCPU more than pCPUs, which vCPUs share a pCPU is placement, not
/// weight; the lower bound on credits: with tiny weights every vCPU sits at -1 slice, OVER, round-robin), 1-2 hosts
/// in 1,000 when measured (worst 0.078; in this sample one host, by 0.105: 8 vCPUs on 7 pCPUs). With the bound
/// (every Xen release) many more hosts miss, by up to half the host. The test fails if the ablated scheduler misses
/// on more than 1 host in 100, or if the bound stops mattering (with it, fewer than 5x the misses).
#[test]
fn credit_ceiling_is_what_misses_weighted_shares() {
    let (mut with, mut without, mut worst) = (0, 0, 0f64);
    for (k, (pcpus, doms, seed)) in sample_hosts(200, false).into_iter().enumerate() {
        let version = if k % 2 == 0 { "default" } else { "4.x" };
        // The default is 3.2 as paper 000 ran it (exact accounting); "3.2" would be stock 3.2's tick sampling.
        let rules = |ceiling: bool| {
            let mut p = json!({ "credit_ceiling": ceiling });
            if version != "default" {
                p["version"] = json!(version);
            }
            p
        };
        let miss = |params: Value| {
            credit_shares(pcpus, &doms, seed, params)
                .iter()
                .map(|&(share, fair)| (share - fair).abs())
                .fold(0f64, f64::max)
        };
        if miss(rules(true)) > 0.05 {
            with += 1;
        }
        let off = miss(rules(false));
        worst = worst.max(off);
        if off > 0.05 {
            without += 1;
            eprintln!("ceiling off, {version}: misses by {off:.3} on {doms:?}, {pcpus} pCPUs, seed {seed}");
        }
    }
    eprintln!("{with} of 200 hosts miss with the ceiling, {without} without it (worst {worst:.3})");
    assert!(without <= 2, "without the ceiling: {without} of 200 hosts miss, worst {worst}");
    assert!(with >= 5 * without.max(1), "with the ceiling only {with} of 200 hosts miss (without: {without})");
}

/// What the upper bound on credits costs (the finding behind the property above): one vCPU of weight 1024 beside
/// six of weight 64 on one pCPU is entitled to 1024/1088 = 0.941 of it under 3.x's rule (domain weights) and
/// 1024/1408 = 0.727 under 4.x's (weight x vCPUs). Under Xen's rules it waits in UNDER's round-robin behind the
/// crowd, which the negative balance keeps UNDER; its credit passes a slice, it leaves the active list (its weight
/// with it) and its credit is cut, so the next periods' credit goes to the crowd. It gets about two thirds under
/// 3.x (0.67 when written) and a quarter under 4.x, short of its entitlement by more than a fifth of the host;
/// without the bound, its entitlement.
#[test]
fn credit_ceiling_costs_weighted_shares() {
    let doms = [(1, 1024, 0), (6, 64, 0)];
    for (version, entitled) in [("3.2", 0.941), ("4.x", 0.727)] {
        let with = credit_shares(1, &doms, 1, json!({ "version": version }));
        let without = credit_shares(1, &doms, 1, json!({ "version": version, "credit_ceiling": false }));
        assert!((with[0].1 - entitled).abs() < 0.001, "entitlement {}", with[0].1);
        assert!(with[0].1 - with[0].0 > 0.2, "{version}: with the ceiling the heavy vCPU gets {}", with[0].0);
        assert!(
            // 0.02: under 3.x's rule the crowd's six vCPUs share 18 credits a period, less than their floor
            // of -1 slice lets them owe, and get 0.045 of the 0.059 entitled (0.955 for the heavy one).
            (without[0].0 - without[0].1).abs() < 0.02,
            "{version}: without it {} of {}",
            without[0].0,
            without[0].1
        );
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
    scenario(io_scenario_json())
}

fn io_scenario_json() -> Value {
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
            .filter_map(|(at, ev)| if let Ev::PeerTimer(c) = *ev { Some((at, c)) } else { None })
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
    assert!(sim.io.packets_sent > 100, "the check is not vacuous");
    assert_io_conserved(&sim);
    let served = sim.measure.dom_metrics[1].requests_served;
    let answered = sim.measure.dom_metrics[1].responses_ns.len();
    assert!(answered > 50, "too few responses: {answered}");
    assert!(served >= answered && served - answered <= 2, "served {served}, answered {answered}");
    // The domain's only server has all of its responses (per task, as paper 000's Fig. 13 needs them).
    let srv = sim.guests.tasks.iter().position(|t| t.name == "srv").unwrap();
    assert_eq!(sim.measure.task_metrics[srv].responses_ns.len(), answered);
    // Event latency is recorded for every notification and never negative; none exceeds the run.
    assert!(sim.measure.dom_metrics[1].event_latency_ns.max() <= sim.end.0);
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
    assert_eq!(sim.measure.dom_metrics[0].cpu_ns, 0);
    assert_eq!(sim.measure.dom_metrics[1].cpu_ns, 1_000_000_000);
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
    let r = &sim.measure.dom_metrics[1].responses_ns;
    assert!(!r.is_empty());
    // 50 us of CPU per request; dom0 costs nothing; the only wait is for dom0 to be scheduled (boosted).
    assert!(r.max() < 1_000_000, "max response {} ns", r.max());
}

/// Linux O(1) guest: a task that used its slice without being interactive goes to the expired array and waits
/// until no task is left in the active one (then the arrays switch); a woken task is active again; the expired
/// array is served anyway once it has starved MAX_SLEEP_AVG per runnable task.
#[test]
fn guest_expired_array() {
    let sc = scenario(json!({
        "schema": 1, "id": "o1", "title": "o1", "seed": 2, "duration_ms": 3000, "warmup_ms": 0,
        "host": { "pcpus": 1 },
        "domains": [{ "name": "g", "tasks": [cpu_task("b1"), cpu_task("b2"), cpu_task("b3")] }],
        "policies": [{ "id": "p", "scheduler": "credit" }]
    }));
    let mut sim = Simulation::new(&sc, "p").unwrap();
    let (v, [b1, b2, b3]) = (VcpuId(0), [TaskId(0), TaskId(1), TaskId(2)]);
    sim.host.vcpus[v.0].runnable = vec![b1, b2, b3];
    // TASK_INTERACTIVE for nice 0: dynamic priority 118 or better, i.e. sleep_avg of at least 70% of the maximum.
    sim.guests.tasks[b1.0].sleep_avg = MAX_SLEEP_AVG * 7 / 10;
    assert!(sim.interactive(b1));
    sim.guests.tasks[b1.0].sleep_avg = MAX_SLEEP_AVG * 6 / 10;
    assert!(!sim.interactive(b1));
    // An expired task is passed over while an active one is runnable, whatever their order and priorities.
    sim.guests.tasks[b1.0].sleep_avg = MAX_SLEEP_AVG;
    sim.guests.tasks[b1.0].expired = true;
    assert_eq!(sim.guest_pick(v), Some(b2));
    // Once every runnable task is expired, the arrays switch and the best priority runs.
    sim.guests.tasks[b2.0].expired = true;
    sim.guests.tasks[b3.0].expired = true;
    sim.host.vcpus[v.0].expired_since = Some(Nanos::ZERO);
    sim.expired_swap(v);
    assert!([b1, b2, b3].iter().all(|t| !sim.guests.tasks[t.0].expired));
    assert_eq!(sim.host.vcpus[v.0].expired_since, None);
    assert_eq!(sim.guest_pick(v), Some(b1));
    // Starvation: 3 runnable tasks, so the expired array may wait 3 x MAX_SLEEP_AVG before every task expires.
    sim.host.vcpus[v.0].current = Some(b2);
    sim.host.vcpus[v.0].expired_since = Some(Nanos::ZERO);
    sim.now = Nanos(3 * MAX_SLEEP_AVG - 1);
    assert!(!sim.expired_starving(v));
    sim.now = Nanos(3 * MAX_SLEEP_AVG);
    assert!(sim.expired_starving(v));
    // Run for real: three busy loops expire in turn and share the vCPU evenly.
    let sim = run(&sc, "p");
    let cpu: Vec<u64> = (0..3).map(|t| sim.measure.task_metrics[t].cpu_ns).collect();
    let (lo, hi) = (*cpu.iter().min().unwrap(), *cpu.iter().max().unwrap());
    assert!(hi - lo <= 100_000_000, "busy loops' CPU {cpu:?} ns");
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
    let measured: u64 = sim.measure.dom_metrics.iter().map(|m| m.event_latency_ns.len()).sum();
    assert_eq!(delivered.len() as u64, measured);
    let max_wait = sim.measure.dom_metrics.iter().map(|m| m.event_latency_ns.max()).max().unwrap();
    assert_eq!(delivered.iter().copied().max().unwrap(), max_wait);
    assert!(io.iter().any(|r| r.phase == "pending"), "some notifications had to wait");
    let states = sim.trace().task_states(0, u64::MAX, usize::MAX);
    for t in 0..sim.guests.tasks.len() as u32 {
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
        "schema": 1, "id": "pb0", "title": "pb0", "seed": 9, "duration_ms": 8000, "warmup_ms": 3000,
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
    assert!(b["partial_boosts"].get("pbhr").is_none(), "no boost, no hit ratio (not 0)");
    // The inference did run, and with an allowance the same host is scheduled differently.
    assert!(b["tasks"]["mixed/srv"]["belief"].as_i64().unwrap() > 20);
    // The trace's belief history ends where the report's belief is.
    let srv = zero.meta().tasks.iter().position(|t| t.path == "mixed/srv").unwrap() as u32;
    let history = zero.trace().beliefs(Some(srv));
    assert_eq!(history.last().map(|r| r.belief), b["tasks"]["mixed/srv"]["belief"].as_i64());
    assert_ne!(plain.trace().segments(), on.trace().segments());
    // The trace marks every partial boost (the belief view draws them); the report counts those of the measured
    // window, as every other metric. Only TAVS has a BelThreshold to draw.
    let given = |from: u64| on.trace().boosts().iter().filter(|r| r.kind == "boost" && r.t_ns >= from).count();
    assert!(given(0) > given(Nanos::from_ms(3000).0), "some boosts fall in the warm-up");
    let measured = on.report(&opts)["partial_boosts"]["count"].as_u64();
    assert_eq!(Some(given(Nanos::from_ms(3000).0) as u64), measured);
    assert!(on.trace().boosts().windows(2).all(|w| w[0].t_ns <= w[1].t_ns));
    assert!(zero.trace().boosts().is_empty() && plain.trace().boosts().is_empty());
    assert_eq!((plain.belief_threshold(), on.belief_threshold()), (None, Some(20)));
}

/// Shares of CPU-bound domains on one pCPU, from the report's per-domain CPU [fraction of the measured time].
pub(crate) fn shares(sim: &Simulation) -> Vec<f64> {
    let span = (sim.end.0 - sim.warmup.0) as f64 * sim.host.pcpus.len() as f64;
    sim.measure.dom_metrics.iter().map(|m| m.cpu_ns as f64 / span).collect()
}

fn weighted_hogs(scheduler: &str, pcpus: u32, params: Value) -> Scenario {
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

/// Credit2 honours weights: CPU-bound domains of weights 1:2:1:4 share one pCPU in proportion within 1.5
/// points; on two pCPUs in one run queue within 3 points (the reset clips the credit of the vCPU running on the
/// other pCPU to CREDIT_INIT + CARRYOVER_MAX, so the heaviest loses a little, as in Xen).
#[test]
fn credit2_weights_honoured() {
    for (pcpus, tol) in [(1, 0.015), (2, 0.03)] {
        let sim = run(&weighted_hogs("credit2", pcpus, json!({})), "p");
        assert_invariants(&sim);
        let s = shares(&sim);
        for (got, want) in s.iter().zip([0.125, 0.25, 0.125, 0.5]) {
            assert!((got - want).abs() < tol, "{pcpus} pCPU(s): shares {s:?}");
        }
    }
}

/// BVT is weighted fair: virtual time advances at 2560/weight per MCU, so the same domains share in proportion.
#[test]
fn bvt_weights_honoured() {
    let sim = run(&weighted_hogs("bvt", 1, json!({})), "p");
    let s = shares(&sim);
    for (got, want) in s.iter().zip([0.125, 0.25, 0.125, 0.5]) {
        assert!((got - want).abs() < 0.015, "shares {s:?}");
    }
}

/// A server beside CPU-bound domains under BVT: with a warp it is served at once on waking (its effective
/// virtual time goes back past the others'), without one it waits for its virtual time to come round.
#[test]
fn bvt_warp_cuts_latency() {
    let base = json!({
        "schema": 1, "id": "warp", "title": "warp", "seed": 6, "duration_ms": 6000, "warmup_ms": 500,
        "host": { "pcpus": 1, "net": { "latency_us": 50, "mbps": 1000 } },
        "domains": [
            { "name": "dom0", "role": "driver", "costs": { "packet_us": 10 } },
            { "name": "web", "tasks": [server_task("srv", 80, [5, 20])] },
            { "name": "h1", "tasks": [cpu_task("x")] }, { "name": "h2", "tasks": [cpu_task("x")] }
        ],
        "policies": [
            { "id": "plain", "scheduler": "bvt" },
            { "id": "warp", "scheduler": "bvt", "params": { "domains": {
                "web": { "warp_us": 50000 }, "dom0": { "warp_us": 50000 } } } }
        ]
    });
    let sc = scenario(base);
    let (plain, warp) = (run(&sc, "plain"), run(&sc, "warp"));
    let mean = |s: &Simulation| crate::metrics::Summary::of(&s.measure.dom_metrics[1].responses_ns).unwrap().mean;
    assert!(mean(&warp) * 3.0 < mean(&plain), "warp {} ms vs plain {} ms", mean(&warp), mean(&plain));
}

/// Atropos meets reservations: a CPU-bound domain reserved 6 ms every 20 ms without extra time gets at least
/// its slice in every period (its periods start at its first deadline, 20 ms), and no more than the 5 ms
/// minimum allocation beyond it, beside CPU-bound domains that take the slack.
#[test]
fn atropos_reservation_met() {
    for (timing, slop) in [("lockstep", 0), ("xen", TIMER_SLOP.0)] {
        atropos_reservation_met_with(timing, slop);
    }
}

/// As Atropos' guarantee under one host timing: late timers move up to one slop of a slice across a period edge.
fn atropos_reservation_met_with(timing: &str, slop: u64) {
    let sc = scenario(json!({
        "schema": 1, "id": "res", "title": "res", "seed": 2, "duration_ms": 2000,
        "host": { "pcpus": 1, "timing": timing },
        "domains": [
            { "name": "rt", "tasks": [cpu_task("x")] },
            { "name": "h1", "tasks": [cpu_task("x")] }, { "name": "h2", "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "p", "scheduler": "atropos", "params": { "domains": {
            "rt": { "slice_us": 6000, "period_us": 20000, "latency_us": 5000, "xtratime": false } } } }]
    }));
    let sim = run(&sc, "p");
    assert_invariants(&sim);
    let period = 20_000_000;
    for k in 1..(sim.end.0 / period) {
        let used = dom_cpu_in(&sim, 0, k * period, (k + 1) * period);
        assert!((6_000_000 - slop..=11_000_000 + slop).contains(&used), "{timing}: period {k}: {used} ns");
    }
    // The hogs share the slack.
    assert!(sim.measure.dom_metrics[1].cpu_ns > 500_000_000 && sim.measure.dom_metrics[2].cpu_ns > 500_000_000);
}

/// Atropos latency hint: a server domain that blocks for long wakes with its period cut to its latency hint and
/// preempts the best-effort hogs, so it is served within about the hint (plus the driver's own turn).
#[test]
fn atropos_latency_hint_bounds_response() {
    let sc = scenario(json!({
        "schema": 1, "id": "lat", "title": "lat", "seed": 3, "duration_ms": 4000, "warmup_ms": 200,
        "host": { "pcpus": 1, "net": { "latency_us": 50, "mbps": 1000 } },
        "domains": [
            { "name": "dom0", "role": "driver", "costs": { "packet_us": 10 } },
            { "name": "web", "tasks": [server_task("srv", 80, [20, 60])] },
            { "name": "h1", "tasks": [cpu_task("x")] }, { "name": "h2", "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "p", "scheduler": "atropos", "params": { "domains": {
            "web": { "slice_us": 2000, "period_us": 20000, "latency_us": 2000 } } } }]
    }));
    let sim = run(&sc, "p");
    assert_invariants(&sim);
    let r = &sim.measure.dom_metrics[1].responses_ns;
    assert!(r.len() > 50);
    // Each request needs dom0 (latency 5 ms) twice and the server once (latency 2 ms).
    let p90 = crate::metrics::Summary::of(r).unwrap().p90;
    assert!(p90 < 20.0, "p90 {p90} ms");
}

/// ARINC 653 windows are exact: a domain runs only inside its own windows, and a CPU-bound owner fills them.
#[test]
fn arinc653_windows_exact() {
    for (timing, slop) in [("lockstep", 0), ("xen", TIMER_SLOP.0)] {
        arinc653_windows_with(timing, slop);
    }
}

/// As ARINC 653's windows under one host timing: a window switch that fires late lets the outgoing vCPU run up to
/// one slop into the next window (Xen's a653sched uses the same timers); the schedule itself never drifts.
fn arinc653_windows_with(timing: &str, slop: u64) {
    let sc = scenario(json!({
        "schema": 1, "id": "a653", "title": "a653", "seed": 1, "duration_ms": 1000,
        "host": { "pcpus": 1, "timing": timing },
        "domains": [
            { "name": "a", "tasks": [cpu_task("x")] },
            { "name": "b", "vcpus": 2, "tasks": [cpu_task("x"), cpu_task("y")] }
        ],
        "policies": [{ "id": "p", "scheduler": "arinc653", "params": { "major_frame_us": 20000, "schedule": [
            { "domain": "a", "runtime_us": 5000 }, { "domain": "b", "vcpu": 1, "runtime_us": 3000 },
            { "domain": "b", "runtime_us": 7000 } ] } }]
    }));
    let sim = run(&sc, "p");
    assert_invariants(&sim);
    // vCPU -> its window [start, end) within the 20 ms frame.
    let windows = [(0u64, 5_000_000u64), (8_000_000, 15_000_000), (5_000_000, 8_000_000)];
    for s in sim.trace().segments() {
        let (a, b) = windows[s.vcpu as usize];
        // A window starts when the switch before it fires, never early; it ends up to one slop late.
        let off = s.start % 20_000_000;
        assert!(
            off >= a && off + (s.end - s.start) <= b + slop,
            "{timing}: vCPU {} ran {s:?} outside [{a}, {b})",
            s.vcpu
        );
    }
    // CPU-bound owners use their windows fully: 15 ms of every 20 ms frame (give or take a slop per switch).
    let want = 1_000_000_000 / 20 * 15;
    assert!(sim.measure.busy_ns.abs_diff(want) <= 50 * slop, "{timing}: busy {} ns", sim.measure.busy_ns);
}

/// Enhanced (003 4.3) on two pCPUs with one lone queued vCPU at a time: the max_credit rule must not bounce a
/// lone candidate between empty run queues (it once livelocked here), and it costs context switches.
#[test]
fn enhanced_lone_candidate_runs() {
    let sc = scenario(json!({
        "schema": 1, "id": "enh", "title": "enh", "seed": 1, "duration_ms": 400,
        "host": { "pcpus": 2 },
        "domains": [
            { "name": "dom0", "role": "driver", "vcpus": 2 },
            { "name": "net", "tasks": [{ "name": "tx", "workload": {
                "type": "net_bulk", "direction": "tx", "window_kb": 16, "cpu_us": 20 } }] },
            { "name": "hog", "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "enhanced", "scheduler": "enhanced" }, { "id": "credit", "scheduler": "credit", "params": { "version": "4.x" } }]
    }));
    let (e, c) = (run(&sc, "enhanced"), run(&sc, "credit"));
    assert_invariants(&e);
    // The hog and the stream both get the CPU.
    assert!(e.measure.dom_metrics[2].cpu_ns > 50_000_000);
    assert!(e.measure.dom_metrics[1].cpu_ns > 0);
    let switches = |s: &Simulation| s.measure.dom_metrics.iter().map(|m| m.context_switches).sum::<u64>();
    assert!(switches(&e) >= switches(&c), "enhanced {} vs credit {}", switches(&e), switches(&c));
}

/// The enhanced scheduler's decision path (003 4.3) always requeues the running vCPU, so it has no rate limit
/// unless asked: a stream beside busy dom0 vCPUs gets through at least as well as with Credit's 1 ms limit put
/// back, for more switches.
#[test]
fn enhanced_has_no_rate_limit_by_default() {
    let busy0 = json!({ "name": "dom0", "role": "driver", "vcpus": 2, "guest": { "scheduler": "cfs" },
        "tasks": [{ "name": "a", "vcpu": 0, "workload": { "type": "cpu" } },
                  { "name": "b", "vcpu": 1, "workload": { "type": "cpu" } }] });
    let sc = scenario(json!({
        "schema": 1, "id": "enh-rl", "title": "enh-rl", "seed": 1, "duration_ms": 600, "warmup_ms": 100,
        // In lockstep: the comparison is about the rate limit alone.
        "host": { "pcpus": 2, "timing": "lockstep" },
        "domains": [
            busy0,
            { "name": "net", "tasks": [{ "name": "tx", "workload": {
                "type": "net_bulk", "direction": "tx", "window_kb": 16, "cpu_us": 20 } }] }
        ],
        "policies": [{ "id": "enhanced", "scheduler": "enhanced" },
                     { "id": "limited", "scheduler": "enhanced", "params": { "ratelimit_us": 1000 } }]
    }));
    let (e, l) = (run(&sc, "enhanced"), run(&sc, "limited"));
    assert_invariants(&e);
    let switches = |s: &Simulation| s.measure.dom_metrics.iter().map(|m| m.context_switches).sum::<u64>();
    assert!(switches(&e) > 2 * switches(&l), "no limit {} vs 1 ms limit {}", switches(&e), switches(&l));
    assert!(e.measure.dom_metrics[1].bytes_out > l.measure.dom_metrics[1].bytes_out);
    assert!(e.measure.dom_metrics[1].event_latency_ns.max() < l.measure.dom_metrics[1].event_latency_ns.max());
}

/// Credit2 with one run queue per pCPU: of two CPU-bound domains placed on pCPU0, the second wakes while
/// pCPU1's queue is empty (the idle domain placed there never runs) and joins that lighter queue, so each gets a
/// whole pCPU instead of half of pCPU0; the engine invariants hold.
#[test]
fn credit2_balances_between_run_queues() {
    let sc = scenario(json!({
        "schema": 1, "id": "rq", "title": "rq", "seed": 1, "duration_ms": 3000, "warmup_ms": 500,
        "host": { "pcpus": 2 },
        "domains": [
            { "name": "a", "tasks": [cpu_task("x")] }, { "name": "idle" }, { "name": "c", "tasks": [cpu_task("x")] }
        ],
        "policies": [{ "id": "p", "scheduler": "credit2", "params": { "runqueue_pcpus": 1 } }]
    }));
    let sim = run(&sc, "p");
    assert_invariants(&sim);
    let s = shares(&sim);
    assert!((s[0] - 0.5).abs() < 0.01 && (s[2] - 0.5).abs() < 0.01, "shares of the host {s:?}");
}

/// Guest block-layer plugging: a lone reader's request waits for the unplug timer before the driver sees it,
/// and every plugged request still reaches the disk and comes back.
#[test]
fn plugged_block_requests_wait_for_the_unplug() {
    let with_unplug = |us: u64| {
        scenario(json!({
            "schema": 1, "id": "plug", "title": "plug", "seed": 3, "duration_ms": 2000, "warmup_ms": 0,
            "host": { "pcpus": 1, "disk": { "service_us": 100 } },
            "domains": [
                { "name": "dom0", "role": "driver" },
                { "name": "rd", "guest": { "block_unplug_us": us },
                  "tasks": [{ "name": "r", "workload": { "type": "io_loop", "io": "disk", "cpu_us": 0 } }] }
            ],
            "policies": [{ "id": "credit", "scheduler": "credit" }]
        }))
    };
    let mean_ms = |sim: &Simulation| {
        let r = sim.report(&RunOptions::default());
        r["domains"]["rd"]["io_latency_ms"]["mean"].as_f64().expect("io latency")
    };
    let plain = run(&with_unplug(0), "credit");
    let plugged = run(&with_unplug(3000), "credit");
    assert_io_conserved(&plugged);
    assert!(mean_ms(&plain) < 1.0, "unplugged reads take {} ms", mean_ms(&plain));
    assert!(mean_ms(&plugged) >= 3.0, "plugged reads take {} ms", mean_ms(&plugged));
}

/// A host whose disk serves every request in exactly `bytes / 100 MB/s` (no positioning time), with dom0's own
/// direct-I/O writer (64 KiB) and, if given, one guest task.
fn own_disk_host(guest_task: Option<Value>) -> Scenario {
    let mut domains = vec![json!({ "name": "dom0", "role": "driver", "costs": { "block_us": 40 },
        "tasks": [{ "name": "iozone", "workload": { "type": "disk_reader", "op": "write", "block_kb": 64, "cpu_us": 10 } }] })];
    if let Some(t) = guest_task {
        domains.push(json!({ "name": "g", "tasks": [t] }));
    }
    scenario(json!({
        "schema": 1, "id": "own-disk", "title": "own disk", "seed": 4, "duration_ms": 1000, "warmup_ms": 0,
        "host": { "pcpus": 2, "disk": { "service_us": 0, "mb_per_s": 100 } },
        "domains": domains,
        "policies": [{ "id": "credit", "scheduler": "credit" }]
    }))
}

/// The disk served enough requests for `assert_invariants`' disk conservation check (every request that reached
/// the disk completed or is still at it) to mean something.
fn assert_disk_used(sim: &Simulation) {
    assert!(sim.io.disk.submitted > 100, "the check is not vacuous: {} requests", sim.io.disk.submitted);
}

/// A driver domain owns the disk: its own writes go to the disk without its block backend (which never runs and
/// the policy never hears of), the task pays `block_us` per request itself, and the disk interrupt wakes it.
#[test]
fn driver_domain_own_disk_io_skips_the_backend() {
    let sc = own_disk_host(None);
    let sim = run(&sc, "credit");
    assert_invariants(&sim);
    assert_disk_used(&sim);
    let r = sim.report(&RunOptions::default());
    assert_eq!(r["tasks"]["dom0/backend"]["cpu_ms"].as_f64(), Some(0.0), "the backend handled dom0's own I/O");
    let writes = sim.measure.task_metrics[1].io_done;
    // One request at a time: the disk's 655 us per 64 KiB plus the task's 10 + 40 us of CPU.
    assert!((1400..=1530).contains(&writes), "{writes} writes in 1 s");
    let cpu = sim.measure.task_metrics[1].cpu_ns;
    assert!(cpu.abs_diff(writes * 50_000) <= 50_000, "{cpu} ns of CPU for {writes} writes");
    let m = &sim.measure.dom_metrics[0];
    assert_eq!((m.bytes_in, m.bytes_out), (0, writes * 65536), "writes count as data out");
    assert!(r["domains"]["dom0"]["throughput"]["mbps"].as_f64().unwrap() > 700.0);
}

/// dom0's own requests and a guest's requests through blkback share one FIFO disk: it never serves two at once
/// (total service fits in the run), it is kept busy while both wait, and the two alternate.
#[test]
fn disk_is_one_fifo_for_driver_and_guest_requests() {
    let reader = json!({ "name": "r", "workload": { "type": "disk_reader", "block_kb": 64, "cpu_us": 10 } });
    let sc = own_disk_host(Some(reader));
    let sim = run(&sc, "credit");
    assert_invariants(&sim);
    assert_disk_used(&sim);
    let (w, r) = (sim.measure.task_metrics[1].io_done, sim.measure.task_metrics[2].io_done);
    let per_req = 655_360;
    assert!((w + r) * per_req <= sim.end.0, "the disk served {w} + {r} requests of {per_req} ns in 1 s");
    assert!((w + r) * per_req >= sim.end.0 * 95 / 100, "the disk idled: {w} + {r} requests");
    assert!(w.abs_diff(r) <= 2, "FIFO alternation: dom0 {w}, guest {r}");
    // The backend handled exactly the guest's requests: half of block_us at submission, half at completion, for
    // each blkif request a 64 KiB read takes (two: 11 pages a request).
    let per_read = 40_000 * sim.costs.blk_requests(64 * 1024);
    assert_eq!(per_read, 80_000);
    let backend = sim.measure.task_metrics[0].cpu_ns;
    assert!(backend.abs_diff(r * per_read) <= per_read, "backend {backend} ns for {r} guest reads");
}

/// A server with per-request block I/O answers each request after its reads and writes went through blkback;
/// its CPU is split around them.
#[test]
fn server_requests_do_their_block_io() {
    let srv = json!({ "name": "db", "workload": { "type": "server", "port": 3306, "cpu_us": 300, "clients": 2,
        "think_ms": [0, 1], "disk": { "reads": 2, "writes": 1, "block_kb": 16 } } });
    let mut v = io_scenario_json();
    v["domains"] =
        json!([{ "name": "dom0", "role": "driver", "costs": { "block_us": 20 } }, { "name": "g", "tasks": [srv] }]);
    v["host"]["disk"] = json!({ "service_us": 100, "mb_per_s": 100 });
    let sim = run(&scenario(v), "credit");
    assert_invariants(&sim);
    assert_disk_used(&sim);
    let m = &sim.measure.dom_metrics[1];
    let served = m.requests_served;
    assert!(served > 200, "{served} requests");
    // Three block requests per answered request (plus those of requests still in progress).
    let ios = m.io_latency_ns.len();
    assert!(ios >= 3 * served && ios <= 3 * served + 6, "{ios} block requests for {served} requests");
    let fastest = m.responses_ns.points().first().map_or(0, |p| p.0);
    assert!(fastest >= 300_000 + 3 * 163_840, "a response after {fastest} ns: before its CPU and I/O were done");
    let cpu = sim.measure.task_metrics[1].cpu_ns;
    assert!(cpu.abs_diff(served * 300_000) <= 2 * 300_000, "{cpu} ns of CPU for {served} requests");
}

/// blkfront restarts the guest's request queue on every completion interrupt: two readers sharing a plugged queue
/// hand each other's requests to the driver as their reads complete, instead of waiting for the unplug timer.
#[test]
fn block_completions_dispatch_plugged_requests() {
    let readers = |n: usize| {
        let tasks: Vec<Value> = (0..n)
            .map(|i| json!({ "name": format!("r{i}"), "workload": { "type": "io_loop", "io": "disk", "cpu_us": 0 } }))
            .collect();
        scenario(json!({
            "schema": 1, "id": "plug2", "title": "plug2", "seed": 3, "duration_ms": 2000, "warmup_ms": 0,
            "host": { "pcpus": 1, "disk": { "service_us": 100 } },
            "domains": [
                { "name": "dom0", "role": "driver" },
                { "name": "rd", "guest": { "block_unplug_us": 50000 }, "tasks": tasks }
            ],
            "policies": [{ "id": "credit", "scheduler": "credit" }]
        }))
    };
    let reads_per_s = |sim: &Simulation, task: &str| {
        let r = sim.report(&RunOptions::default());
        r["tasks"][format!("rd/{task}")]["io_per_s"].as_f64().expect("io_per_s")
    };
    let lone = run(&readers(1), "credit");
    let pair = run(&readers(2), "credit");
    assert_io_conserved(&pair);
    // Alone, every read waits out the 50 ms timer; in a pair, each completion sends the other's read.
    assert!(reads_per_s(&lone, "r0") <= 20.5, "lone reader: {}", reads_per_s(&lone, "r0"));
    for t in ["r0", "r1"] {
        assert!(reads_per_s(&pair, t) > 500.0, "{t} in a pair: {}", reads_per_s(&pair, t));
    }
}

fn xballoon_host(pcpus: u32, guest: Value, neighbour: bool, scheduler: &str) -> Scenario {
    let mut domains = vec![json!({ "name": "dom0", "role": "driver" }), guest];
    if neighbour {
        domains.push(json!({ "name": "neighbour", "tasks": [cpu_task("burn")] }));
    }
    scenario(json!({
        "schema": 1, "id": "xb", "title": "xb", "seed": 3, "duration_ms": 1500, "warmup_ms": 0,
        // In lockstep, so that the tests can find each accounting period at its nominal 30 ms boundary.
        "host": { "pcpus": pcpus, "timing": "lockstep" }, "domains": domains,
        "policies": [
            { "id": "credit", "scheduler": "credit" },
            { "id": "off", "scheduler": "credit", "params": { "xballoon": false } },
            { "id": "xb", "scheduler": "credit", "params": { "xballoon": true } }
        ]
    }))
    .with_guest_scheduler(scheduler)
}

impl Scenario {
    /// Test helper: every guest domain runs the given guest scheduler.
    fn with_guest_scheduler(mut self, s: &str) -> Scenario {
        let s = if s == "cfs" { GuestScheduler::Cfs } else { GuestScheduler::Linux };
        self.domains.iter_mut().for_each(|d| d.guest.scheduler = s);
        self
    }
}

fn mixed_guest(cap_pct: u32, balloon: bool) -> Value {
    let srv = json!({ "name": "srv", "priority": "rt",
                      "workload": { "type": "server", "port": 7, "cpu_us": 150, "clients": 4, "think_ms": [1, 3] } });
    json!({ "name": "vm", "cap_pct": cap_pct, "guest": { "clock": "two_clocks", "balloon": balloon },
            "tasks": [srv, cpu_task("burn")] })
}

/// The balloon never holds a vCPU while an event waits for its guest: whenever a vCPU is paused with a
/// notification pending, the cap parked it (not the balloon); and at every balloon pause no event was pending and
/// no task an event woke was runnable. Checked after every event, with static and dynamic guest priorities, by
/// cap and by sharing.
#[test]
fn balloon_never_runs_while_an_event_is_pending() {
    for (sched, cap, neighbour, pcpus) in [("linux", 50, false, 2), ("cfs", 50, false, 2), ("linux", 0, true, 1)] {
        let sc = xballoon_host(pcpus, mixed_guest(cap, true), neighbour, sched);
        let mut sim = Simulation::new(&sc, "xb").unwrap();
        let v = sim.host.dom_info[1].vcpus[0];
        let mut paused_steps = 0;
        while !sim.step(1).unwrap() {
            if sim.host.vcpus[v.0].paused {
                paused_steps += 1;
                if !sim.host.vcpus[v.0].pending.is_empty() {
                    assert_eq!(sim.vcpu_sched(v).pri.label, "PARKED", "{sched}: balloon pause with an event pending");
                }
            }
        }
        assert_eq!(sim.measure.balloon_violations, 0, "{sched}");
        assert!(paused_steps > 1000, "{sched}: the balloon paused the vCPU ({paused_steps} steps)");
        assert_io_conserved(&sim);
        assert_cpu_conserved(&sim);
    }
}

/// Each accounting period the guest reserves period x (1 - share): with a 40% cap (or an equal share of one pCPU
/// beside a CPU-bound neighbour) and no I/O, the vCPU stays off the CPU for the first 18 ms (15 ms) of every 30 ms
/// period, then runs work-conserving: its CPU over the period still reaches its share.
#[test]
fn reservation_is_met_each_period() {
    for (cap, neighbour, reserve_ms, share_ms) in [(40u64, false, 18u64, 12u64), (0, true, 15, 15)] {
        let guest = json!({ "name": "vm", "cap_pct": cap, "guest": { "balloon": true }, "tasks": [cpu_task("burn")] });
        let sc = xballoon_host(1, guest, neighbour, "linux");
        let sim = run(&sc, "xb");
        let ms = 1_000_000;
        // From the fourth period on: the first ones settle Credit's shares (beside the neighbour).
        for k in 3..sim.end.0 / (30 * ms) {
            let start = k * 30 * ms;
            let before = dom_cpu_in(&sim, 1, start, start + (reserve_ms - 1) * ms);
            assert!(before < ms / 10, "period {k}: ran {before} ns inside its reservation");
            let used = dom_cpu_in(&sim, 1, start, start + 30 * ms);
            let lost = (share_ms * ms).saturating_sub(used);
            assert!(lost < 2 * ms, "period {k}: used {used} ns of its {share_ms} ms share");
        }
    }
}

/// With xBalloon off, or on but with no guest running a balloon, the run is plain Credit's, bit for bit.
#[test]
fn xballoon_off_is_plain_credit() {
    let opts = RunOptions { deterministic: true, ..RunOptions::default() };
    for (guest, cmp) in [(mixed_guest(50, true), "off"), (mixed_guest(50, false), "xb")] {
        let sc = xballoon_host(2, guest, true, "linux");
        let (plain, other) = (run(&sc, "credit"), run(&sc, cmp));
        assert_eq!(plain.trace().segments(), other.trace().segments(), "{cmp}");
        let (mut a, mut b) = (plain.report(&opts), other.report(&opts));
        a["policy"] = Value::Null;
        b["policy"] = Value::Null;
        assert_eq!(a, b, "{cmp}");
    }
}

/// A host for the co-scheduling tests: two CON domains running spin-barrier jobs (always runnable), HIT domains
/// of busy loops, and halfway through the 3-vCPU HIT domain turned CON (a run-time type change).
fn cosched_scenario(scheduler: &str, change: bool) -> Scenario {
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

/// Paper 001's co-scheduling guarantees, checked on the trace of the hybrid and gang schedulers: no run queue ever
/// holds two vCPUs of a CON domain (so two siblings never time-share a pCPU), and a CON domain's vCPUs start and
/// stop together (every stretch one of them runs is run by all of them, on distinct pCPUs, over the same times).
#[test]
fn con_domains_are_co_scheduled() {
    for scheduler in ["hybrid", "gang"] {
        let sc = cosched_scenario(scheduler, true);
        let sim = run(&sc, "p");
        assert_cpu_conserved(&sim);
        assert_no_double_running(&sim);
        let change_at = if scheduler == "hybrid" { 600_000_000 } else { u64::MAX };
        // Gang co-schedules every domain; hybrid the CON ones (and web once it turns CON).
        let con = |d: usize, t: u64| scheduler == "gang" || d < 2 || (d == 2 && t >= change_at);
        for (d, dom) in sc.domains.iter().enumerate() {
            let n = dom.vcpus as usize;
            let mut by_start: std::collections::BTreeMap<u64, Vec<&Segment>> = Default::default();
            for s in sim.trace().segments().iter().filter(|s| sim.host.vcpus[s.vcpu as usize].dom.0 == d) {
                by_start.entry(s.start).or_default().push(s);
            }
            for (start, segs) in &by_start {
                // A stretch that began before a type change may run on alone until its slot ends.
                if !con(d, *start) || (d == 2 && *start < change_at.saturating_add(10_000_000)) {
                    continue;
                }
                let mut pcpus: Vec<u32> = segs.iter().map(|s| s.pcpu).collect();
                pcpus.sort_unstable();
                pcpus.dedup();
                assert_eq!(segs.len(), n, "{scheduler}: {} starts {} of {n} vCPUs at {start}", dom.name, segs.len());
                assert_eq!(pcpus.len(), n, "{scheduler}: {} siblings share a pCPU at {start}", dom.name);
                assert!(segs.iter().all(|s| s.end == segs[0].end), "{scheduler}: {} stops apart: {segs:?}", dom.name);
            }
        }
        if scheduler == "hybrid" {
            for p in 0..sim.host.pcpus.len() {
                for snap in sim.trace().runqueue_history(p) {
                    let mut doms: Vec<usize> = snap
                        .queued
                        .iter()
                        .chain(snap.running.iter())
                        .map(|e| sim.host.vcpus[e.vcpu as usize].dom.0)
                        .filter(|&d| con(d, snap.t_ns))
                        .collect();
                    doms.sort_unstable();
                    let n = doms.len();
                    doms.dedup();
                    assert_eq!(doms.len(), n, "pCPU{p} holds two vCPUs of a CON domain at {}: {snap:?}", snap.t_ns);
                }
            }
        }
    }
}

/// Potential energy keeps weights: with every domain busy, each domain's CPU from the start up to every
/// allocation boundary (L = 3 slots of 10 ms) stays within one allocation interval plus one slot per vCPU of its
/// weighted share, co-scheduled or not: what a domain misses in one interval it gets back in the next ones.
/// (Strict gangs give no such promise: pCPUs left after packing go to whichever domain fits.)
#[test]
fn hybrid_honours_weights_per_allocation_interval() {
    for scheduler in ["hybrid"] {
        // Without the type change: three CON domains would need gangs more than 100% of the time (one
        // co-scheduling at a time, as in the paper), and no scheduler could then give each its share.
        let sc = cosched_scenario(scheduler, false);
        let sim = run(&sc, "p");
        let interval = 30_000_000u64;
        let pcpus = sc.host.pcpus as f64;
        let weights: Vec<u32> = sc.domains.iter().map(|d| d.weight).collect();
        let bounds: Vec<f64> = sc.domains.iter().map(|d| f64::from(d.vcpus)).collect();
        let fair = crate::metrics::fair_shares(pcpus, &weights, &bounds);
        let mut checked = 0;
        for k in 1..=(sim.end.0 / interval) {
            let b = k * interval;
            for (d, dom) in sc.domains.iter().enumerate() {
                let used = dom_cpu_in(&sim, d, 0, b) as f64;
                let want = fair[d] * pcpus * b as f64;
                let slack = (interval + 10_000_000) as f64 * f64::from(dom.vcpus);
                assert!((used - want).abs() <= slack, "{scheduler} {} used {used} in [0, {b}), want {want}", dom.name);
                checked += 1;
            }
        }
        assert!(checked > 40, "{scheduler}: only {checked} intervals checked");
    }
}

/// A run-time type change names its domain; a bad one is rejected with the field path, before any run.
#[test]
fn domain_type_changes_are_validated() {
    let mut v = serde_json::to_value(json!({
        "schema": 1, "id": "t", "title": "t", "seed": 1, "duration_ms": 100, "warmup_ms": 0, "host": { "pcpus": 2 },
        "domains": [{ "name": "a", "vcpus": 2, "tasks": [cpu_task("burn")] }],
        "policies": [{ "id": "h", "scheduler": "hybrid" }],
        "changes": [{ "at_ms": 50, "policy": "h", "param": "domain_type.b", "value": "concurrent" }]
    }))
    .unwrap();
    let err = Scenario::from_value(v.clone()).unwrap_err().to_string();
    assert!(err.contains("changes[0].param") && err.contains("'b'"), "{err}");
    v["changes"][0]["param"] = json!("domain_type.a");
    v["changes"][0]["value"] = json!("gang");
    let err = Scenario::from_value(v.clone()).unwrap_err().to_string();
    assert!(err.contains("changes[0]") && err.contains("throughput"), "{err}");
    v["changes"][0]["value"] = json!("concurrent");
    let sim = run(&scenario(v.clone()), "h");
    assert_cpu_conserved(&sim);
    // Initial types are checked the same way, and co-scheduled domains must fit the host.
    v["policies"][0]["params"] = json!({ "domain_type.x": "concurrent" });
    let err = Scenario::from_value(v.clone()).unwrap_err().to_string();
    assert!(err.contains("policies[0].params.domain_type.x"), "{err}");
    v["policies"][0]["params"] = json!({ "domain_type.a": "concurrent" });
    v["host"]["pcpus"] = json!(1);
    let err = Scenario::from_value(v).unwrap_err().to_string();
    assert!(err.contains("domains[0].vcpus") && err.contains("'h'"), "{err}");
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
    assert_eq!(sim.measure.dom_metrics[0].messages, 1010);
    assert_eq!(r["domains"]["hack"]["throughput"]["messages_per_s"], 10_100.0);
    assert!(sim.measure.dom_metrics[0].event_latency_ns.is_empty(), "no hypervisor event on a one-vCPU ring");
    for k in 0..4 {
        let cpu = r["tasks"][format!("hack/h.{k}")]["cpu_ms"].as_f64().unwrap();
        assert!((cpu - 25.0).abs() < 0.2, "task {k} ran {cpu} ms");
    }
    // Two rings of two: tasks 0-1 and 2-3, each ring with its own message.
    let sc = pipe_scenario(1, 1, 4, 2, 99.0, json!({}));
    let sim = run(&sc, "credit");
    assert_eq!(sim.measure.dom_metrics[0].messages, 1010);
    match (&sim.guests.tasks[1].work, &sim.guests.tasks[3].work) {
        (Work::Pipe { next: a, .. }, Work::Pipe { next: b, .. }) => assert_eq!((a.0, b.0), (0, 2)),
        _ => panic!("pipe tasks expected"),
    }
    // Across two vCPUs a wakeup is an IPI through the hypervisor.
    let sc = pipe_scenario(2, 2, 2, 2, 100.0, json!({}));
    let sim = run(&sc, "credit");
    assert!(sim.measure.dom_metrics[0].messages > 900);
    assert!(sim.measure.dom_metrics[0].event_latency_ns.len() > 900, "every hop to the other vCPU is an IPI");
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
    assert_eq!(off.measure.dom_metrics[0].cpu_ns, on.measure.dom_metrics[0].cpu_ns, "the vCPU's CPU time is the same");
    assert_eq!(off.measure.dom_metrics[0].tracking_ns, 0);
    assert_eq!(off.measure.dom_metrics[0].messages, 11_111);
    assert_eq!(on.measure.dom_metrics[0].messages, 10_000);
    // One observed switch per message, and the first task's at boot.
    assert_eq!(on.measure.dom_metrics[0].tracking_ns, (10_000 + 1) * 1000);
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
    let tracking = sim.measure.dom_metrics[0].tracking_ns as f64 / 1e6;
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

/// TCP flow control: with it, the receiver's unread data never exceeds its socket buffer (window_kb), even when
/// the reader waits behind CPU-bound domains, and the stream still flows; without it, unread data piles up.
#[test]
fn flow_control_bounds_the_receive_buffer() {
    let most_unread = |flow_control: bool| {
        let sc = scenario(json!({
            "schema": 1, "id": "rwnd", "title": "rwnd", "seed": 2, "duration_ms": 3000, "warmup_ms": 0,
            "host": { "pcpus": 1, "net": { "latency_us": 100, "mbps": 1000 } },
            "domains": [
                { "name": "dom0", "role": "driver" },
                { "name": "rx", "tasks": [
                    { "name": "iperf", "workload": { "type": "net_bulk", "direction": "rx", "window_kb": 16,
                                                     "flow_control": flow_control } },
                    cpu_task("burn") ] },
                { "name": "c1", "tasks": [cpu_task("burn")] },
                { "name": "c2", "tasks": [cpu_task("burn")] }
            ],
            "policies": [{ "id": "credit", "scheduler": "credit" }]
        }));
        let mut sim = Simulation::new(&sc, "credit").unwrap();
        let mut most = 0;
        while !sim.step(200).unwrap() {
            for t in &sim.guests.tasks {
                if let Work::BulkRx { queue, .. } = &t.work {
                    most = most.max(queue.len());
                }
            }
        }
        assert_io_conserved(&sim);
        let mbps = sim.report(&RunOptions::default())["domains"]["rx"]["throughput"]["mbps"].as_f64().unwrap_or(0.0);
        (most, mbps)
    };
    // 16 KiB is 12 segments of 1448 bytes.
    let (bounded, mbps) = most_unread(true);
    assert!(bounded <= 12, "{bounded} segments unread with a 12-segment buffer");
    assert!(mbps > 1.0, "the stream stalled: {mbps} Mbit/s");
    let (unbounded, _) = most_unread(false);
    assert!(unbounded > 12, "without flow control unread data piles up ({unbounded} segments)");
}

/// The trace's `meta.caps` come from the scheduler registry; beliefs only while the policy infers.
#[test]
fn meta_caps_describe_the_scheduler() {
    let sc = scenario(json!({"schema":1,"id":"caps","title":"t","seed":1,"duration_ms":100,"host":{"pcpus":2},
        "domains":[{"name":"a","vcpus":2,"tasks":[cpu_task("burn")]}],
        "policies":[{"id":"credit","scheduler":"credit"},
                    {"id":"tavs","scheduler":"credit","params":{"tavs":{}}},
                    {"id":"gang","scheduler":"gang"}]}));
    let caps = |id: &str| Simulation::new(&sc, id).unwrap().meta().caps;
    assert_eq!(caps("credit"), Caps { co_schedules: false, beliefs: false, lag: false });
    assert_eq!(caps("tavs"), Caps { co_schedules: false, beliefs: true, lag: false });
    assert_eq!(caps("gang"), Caps { co_schedules: true, beliefs: false, lag: true });
}

/// A host with one echo server (no other load), to watch the I/O path's mechanics.
fn echo_host(costs_free: bool) -> (Scenario, SimOptions) {
    let sc = scenario(json!({
        "schema": 1, "id": "echo", "title": "echo", "seed": 3, "duration_ms": 4000, "warmup_ms": 0,
        "host": { "pcpus": 1 },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "web", "tasks": [{ "name": "srv", "workload": { "type": "server", "port": 80, "cpu_us": 50,
                                                                     "clients": 1, "think_ms": [50, 100] } }] }
        ],
        "policies": [{ "id": "credit", "scheduler": "credit" }]
    }));
    let costs = if costs_free { crate::costs::HostCosts::FREE } else { crate::costs::PROFILE };
    (sc, SimOptions { trace: false, costs, ..SimOptions::default() })
}

/// `n` pure ACKs from the first client arrive at the NIC for server task `srv`, all at the present instant.
fn arrive_acks(sim: &mut Simulation, srv: TaskId, n: usize) {
    for _ in 0..n {
        let pkt = Packet {
            src: Endpoint::Peer(PeerId(0)),
            dst: Endpoint::Task(srv),
            kind: PKind::Ack,
            bytes: 0,
            origin_at: Nanos::ZERO,
            port: 80,
            segs: 1,
            rwnd: NO_RWND,
            seq: 0,
        };
        sim.io.packets_sent += 1;
        sim.nic_rx(pkt);
    }
}

/// The backend takes what is queued as one batch: 100 packets that reach the NIC together are handed to the guest
/// at one instant (not one per packet time), and right after notifying, the backend is still runnable, in the
/// return path a woken guest can preempt, rather than already idle.
#[test]
fn backend_hands_a_batch_on_at_once() {
    let (sc, opts) = echo_host(false);
    let mut sim = Simulation::with_options(&sc, "credit", opts).unwrap();
    let srv = TaskId(sim.guests.tasks.iter().position(|t| matches!(t.work, Work::Server { .. })).unwrap());
    let backend = TaskId(sim.guests.tasks.iter().position(|t| matches!(t.work, Work::Driver { .. })).unwrap());
    let web = sim.guests.tasks[srv.0].vcpu;
    arrive_acks(&mut sim, srv, 100);
    let mut seen = false;
    while !sim.step(1).unwrap() {
        let pending = &sim.host.vcpus[web.0].pending;
        if pending.is_empty() {
            continue;
        }
        assert_eq!(pending.len(), 100, "the batch's packets are posted together");
        assert!(pending.iter().all(|p| p.at == pending[0].at));
        let c = sim.costs;
        let b = &sim.guests.tasks[backend.0];
        assert_eq!(b.state, TState::Runnable, "the backend has not reached its idle loop");
        assert_eq!(b.burst_left, Some(c.evtchn_send_ns), "one send for the one guest");
        // After the backend's switch, refill and upcall: 100 packets and one NIC interrupt.
        let pass = c.vcpu_switch_ns + c.cache_refill_ns + c.upcall_ns + 100 * c.net_backend_pkt_ns + c.nic_irq_ns;
        assert!(pending[0].at >= Nanos(pass), "{:?}", pending[0].at);
        seen = true;
        break;
    }
    assert!(seen, "the guest never got its packets");
}

/// What the I/O path costs shows in the response time: a request and its response each cross the backend and a
/// guest stack, and each hop wakes a vCPU (switch, refill, one upcall).
#[test]
fn the_io_path_costs_show_in_response_times() {
    let mean = |costs_free: bool| {
        let (sc, opts) = echo_host(costs_free);
        let mut sim = Simulation::with_options(&sc, "credit", opts).unwrap();
        sim.run().unwrap();
        assert_io_conserved(&sim);
        sim.report(&RunOptions::default())["domains"]["web"]["response_ms"]["mean"].as_f64().unwrap() * 1e6
    };
    let (free, costed) = (mean(true), mean(false));
    let c = crate::costs::PROFILE;
    let per_packet = 2 * (c.net_backend_pkt_ns + c.net_frontend_pkt_ns);
    let wakes = 3 * (c.vcpu_switch_ns + c.cache_refill_ns + c.upcall_ns);
    let extra = costed - free;
    assert!(extra >= per_packet as f64, "{extra} ns more, the stacks alone take {per_packet}");
    assert!(extra <= (per_packet + wakes + 2 * c.nic_irq_ns + 4 * c.evtchn_send_ns) as f64, "{extra} ns more");
}

/// A scenario may depart from the host cost profile only as a labelled sensitivity study.
#[test]
fn cost_overrides_need_a_sensitivity_label() {
    let mut v = io_scenario_json();
    v["domains"][0]["costs"] = json!({ "packet_us": 20 });
    let err = Scenario::from_value(v.clone()).unwrap_err();
    assert!(err.to_string().contains("domains[0].costs"), "{err}");
    v["sensitivity"] = json!("dom0 at 20 us per packet: how Fig. 7a's cliff moves with the backend's cost");
    let sc = Scenario::from_value(v).unwrap();
    let sim = Simulation::new(&sc, "credit").unwrap();
    let b = sim.guests.tasks.iter().find(|t| matches!(t.work, Work::Driver { .. })).unwrap();
    assert!(matches!(b.work, Work::Driver { packet_ns: 20_000, .. }));
}

/// Issue 18: a spin barrier with 1 us phases on one vCPU per pCPU re-arms each vCPU's guest timer earlier than the
/// slice end it had queued, once per phase. Past a cap per vCPU the superseded events are cancelled, so the queue
/// stays bounded instead of holding one per phase (10,000 per 10 ms, 50,000 by the end here, before), and the event
/// count is what it was.
#[test]
fn superseded_guest_timers_do_not_pile_up_in_the_queue() {
    let sc = scenario(json!({"schema":1,"id":"b","title":"b","seed":1,"duration_ms":50,"host":{"pcpus":2},
        "domains":[{"name":"job","vcpus":2,"tasks":[{"name":"b","workload":
            {"type":"barrier","compute_us":1,"phases":100000000,"sync":"spin"}}]}],
        "policies":[{"id":"credit","scheduler":"credit"}]}));
    let mut sim =
        Simulation::with_options(&sc, "credit", SimOptions { trace: false, ..SimOptions::default() }).unwrap();
    let mut most = 0;
    while !sim.step(1000).unwrap() {
        most = most.max(sim.queue.len());
    }
    assert!(most < 2 * (4096 + 2 * super::queue::MAX_QUEUED_PER_OWNER) + 64, "the queue held {most} entries");
    // Cancelled events still count: pinned so that a change in what is counted shows (99,994 for 50 ms on the
    // Xen-like host timing; the cap itself changed no library report's count when it came in).
    assert_eq!(sim.events(), 99_994);
}

/// `--max-events` stops a run once its work (events and what they walk) passes it, whatever the estimate said.
#[test]
fn max_events_stops_a_run() {
    let sc = scenario(json!({"schema":1,"id":"m","title":"m","seed":1,"duration_ms":1000,"host":{"pcpus":1},
        "domains":[{"name":"a","tasks":[{"name":"t","workload":{"type":"cpu"}}]}],
        "policies":[{"id":"credit","scheduler":"credit"}]}));
    let mut sim =
        Simulation::with_options(&sc, "credit", SimOptions { max_events: Some(50), ..SimOptions::default() }).unwrap();
    match sim.run() {
        Err(SimError::WorkLimit { work, limit: 50, .. }) => assert!(work > 50 && sim.events() <= 51, "{work}"),
        other => panic!("expected the work limit to stop the run, got {other:?}"),
    }
}

/// The page's state lanes over a whole co-scheduling run: each vCPU's spans tile the run without gaps,
/// the running and spinning spans add up to the CPU its segments got, and the spinning ones to the spin the report
/// gives per vCPU. Credit's job spins; the gang scheduler's never does.
#[test]
fn vcpu_state_lanes_match_segments_and_spin() {
    let text = include_str!("../../../../scenarios/p001-mp-coscheduling.json");
    let sc = Scenario::from_value(serde_json::from_str(text).unwrap()).unwrap();
    for policy in ["credit", "gang"] {
        let mut sim = Simulation::new(&sc, policy).unwrap();
        sim.run().unwrap();
        let end = sim.end.0;
        let spans = sim.trace().vcpu_states(0, end, usize::MAX);
        let nv = sim.host.vcpus.len();
        let (mut at, mut on_cpu, mut spin) = (vec![0u64; nv], vec![0u64; nv], vec![0u64; nv]);
        for s in &spans {
            let v = s.vcpu as usize;
            assert_eq!(s.start, at[v], "{policy}: vCPU {v}'s spans leave a gap or overlap at {}", s.start);
            at[v] = s.end;
            match s.state {
                crate::trace::VcpuState::Running => on_cpu[v] += s.end - s.start,
                crate::trace::VcpuState::Spinning => {
                    on_cpu[v] += s.end - s.start;
                    spin[v] += s.end - s.start;
                }
                _ => {}
            }
        }
        assert!(at.iter().all(|&t| t == end), "{policy}: every lane ends with the run");
        let mut segs = vec![0u64; nv];
        for s in sim.trace().segments() {
            segs[s.vcpu as usize] += s.end - s.start;
        }
        assert_eq!(on_cpu, segs, "{policy}: running + spinning is the CPU the segments show");
        let r = sim.report(&RunOptions::default());
        let by_vcpu = r["jobs"]["job/app"]["spin_ms_by_vcpu"].as_object().unwrap();
        for (v, vc) in sim.host.vcpus.iter().enumerate() {
            if let Some(ms) = by_vcpu.get(&vc.name).and_then(Value::as_f64) {
                assert!((spin[v] as f64 / 1e6 - ms).abs() < 1e-3, "{policy}: {} spun {ms} ms", vc.name);
            }
        }
        let total: u64 = spin.iter().sum();
        if policy == "credit" {
            assert!(total > 0, "Credit's job threads spin while a sibling is descheduled");
        } else {
            assert_eq!(total, 0, "gang scheduling never leaves a sibling descheduled");
        }
    }
}

/// A host that sends more than its link carries (UDP streams: no flow control) drops at the driver domain's NIC
/// queue rather than queueing without end: what is on its way out stays within the queue's bound, the drops are
/// counted against the sending domain, and every packet is accounted for.
#[test]
fn an_overloaded_link_drops_at_the_nic_queue() {
    let sc = scenario(json!({
        "schema": 1, "id": "overload", "title": "overload", "seed": 1, "duration_ms": 3000, "warmup_ms": 0,
        "host": { "pcpus": 2, "net": { "latency_us": 100, "mbps": 30 } },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "media", "tasks": [{ "name": "stream", "workload": { "type": "stream_server", "clients": 30,
                "kbps": 3000, "buffer_kb": 64, "cpu_us": 4, "interval_ms": 10 } }] }
        ],
        "policies": [{ "id": "credit", "scheduler": "credit" }]
    }));
    let mut sim =
        Simulation::with_options(&sc, "credit", SimOptions { trace: false, ..SimOptions::default() }).unwrap();
    let limit = sim.costs.nic_tx_queue;
    let mut most_on_the_way = 0;
    while !sim.step(10_000).unwrap() {
        let on_the_way = sim.queue.iter().filter(|(_, ev)| matches!(ev, Ev::PeerRx(_))).count();
        most_on_the_way = most_on_the_way.max(on_the_way);
    }
    // 90 Mbit/s offered to a 30 Mbit/s link: about two packets in three are dropped.
    let media = DomId(1);
    assert!(sim.io.packets_dropped * 2 > sim.io.packets_sent, "{} of {}", sim.io.packets_dropped, sim.io.packets_sent);
    assert_eq!(sim.measure.dom_metrics[media.0].dropped, sim.io.packets_dropped);
    // Queued at the NIC plus on the wire (its latency is under one packet's serialisation here).
    assert!(most_on_the_way <= limit + 1, "{most_on_the_way} packets on their way out, queue {limit}");
    assert_io_conserved(&sim);
}

/// A streaming server writes as Linux does: each wake fills its sockets' buffers and netfront's ring, never past
/// either, and netback takes the ring in passes, so dom0 is switched in about once per round, not once per packet.
#[test]
fn a_stream_server_fills_its_buffers_and_the_ring_per_wake() {
    let sc = scenario(json!({
        "schema": 1, "id": "sendbuf", "title": "sendbuf", "seed": 1, "duration_ms": 500, "warmup_ms": 0,
        "host": { "pcpus": 1, "net": { "latency_us": 100, "mbps": 1000 } },
        "domains": [
            { "name": "dom0", "role": "driver" },
            { "name": "media", "tasks": [{ "name": "stream", "workload": { "type": "stream_server", "clients": 30,
                "kbps": 3000, "buffer_kb": 64, "cpu_us": 4, "interval_ms": 10 } }] },
            { "name": "hog", "tasks": [cpu_task("burn")] }
        ],
        "policies": [{ "id": "credit", "scheduler": "credit" }]
    }));
    let mut sim =
        Simulation::with_options(&sc, "credit", SimOptions { trace: false, ..SimOptions::default() }).unwrap();
    let srv = TaskId(sim.guests.tasks.iter().position(|t| matches!(t.work, Work::Stream { .. })).unwrap());
    let mut most_on_ring = 0;
    while !sim.step(1).unwrap() {
        let Work::Stream { tx, .. } = &sim.guests.tasks[srv.0].work else { unreachable!() };
        assert!(tx.on_ring <= tx.ring_cap, "{} on a ring of {}", tx.on_ring, tx.ring_cap);
        assert!(tx.buffered.len() as u32 + tx.on_ring <= tx.buf_cap, "buffers over their room");
        most_on_ring = most_on_ring.max(tx.on_ring);
    }
    let Work::Stream { tx, .. } = &sim.guests.tasks[srv.0].work else { unreachable!() };
    // 30 sockets of 16 KiB hold 11 packets each; each round of 10 ms writes about 78 packets at once.
    assert_eq!((tx.buf_cap, tx.ring_cap), (330, 256));
    assert!(most_on_ring >= 50, "at most {most_on_ring} packets on the ring at once: not written per wake");
    // 90 Mbit/s offered; dom0 switched in about once per 10 ms round, not once per packet (~7,800 packets/s).
    let media = &sim.measure.dom_metrics[1];
    let mbps = media.bytes_out as f64 * 8.0 / 0.5e6;
    assert!(mbps > 85.0, "{mbps} Mbit/s of 90 offered");
    assert!(sim.io.packets_sent > 3_500, "{} packets", sim.io.packets_sent);
    let dom0_runs = sim.measure.dom_metrics[0].context_switches;
    assert!(dom0_runs < 250, "dom0 switched in {dom0_runs} times for {} packets", sim.io.packets_sent);
    assert_io_conserved(&sim);
}

/// The NIC's receive ring holds what the driver domain has not taken yet: packets beyond it are dropped, counted
/// against the domain they were for, and neither delivered nor lost track of.
#[test]
fn a_full_nic_ring_drops() {
    let (sc, opts) = echo_host(false);
    let mut sim = Simulation::with_options(&sc, "credit", opts).unwrap();
    let srv = TaskId(sim.guests.tasks.iter().position(|t| matches!(t.work, Work::Server { .. })).unwrap());
    let web = sim.guests.tasks[srv.0].dom;
    let ring = sim.costs.nic_rx_ring;
    let extra = 10;
    arrive_acks(&mut sim, srv, ring + extra);
    // Nothing ran yet: the backend holds a full ring and the rest were dropped.
    assert_eq!(sim.io.packets_dropped, extra as u64);
    assert_eq!(sim.measure.dom_metrics[web.0].dropped, extra as u64);
    assert_io_conserved(&sim);
    // Once the backend has taken the ring, packets are accepted again.
    while sim.io.packets_consumed == 0 && !sim.step(1).unwrap() {}
    let before = sim.io.packets_dropped;
    sim.io.packets_sent += 1;
    sim.nic_rx(Packet {
        src: Endpoint::Peer(PeerId(0)),
        dst: Endpoint::Task(srv),
        kind: PKind::Ack,
        bytes: 0,
        origin_at: Nanos::ZERO,
        port: 80,
        segs: 1,
        rwnd: NO_RWND,
        seq: 0,
    });
    assert_eq!(sim.io.packets_dropped, before, "a drained ring takes the packet");
    sim.run().unwrap();
    assert_io_conserved(&sim);
    let rep = sim.report(&RunOptions::default());
    assert_eq!(rep["domains"]["web"]["dropped"].as_u64(), Some(extra as u64), "the report counts the drops");
}

/// A bulk TCP receiver sharing one pCPU with the driver domain and `hogs` CPU-bound domains; `window_kb` is the
/// sender's socket buffer.
fn bulk_rx_host(hogs: usize, window_kb: u32) -> Scenario {
    let mut domains = vec![
        json!({ "name": "dom0", "role": "driver" }),
        json!({ "name": "net", "tasks": [
            { "name": "iperf", "workload": { "type": "net_bulk", "direction": "rx", "window_kb": window_kb } }] }),
    ];
    for i in 0..hogs {
        domains.push(json!({ "name": format!("cpu{i}"), "tasks": [cpu_task("burn")] }));
    }
    scenario(json!({
        "schema": 1, "id": "bulk", "title": "bulk", "seed": 1, "duration_ms": 6000, "warmup_ms": 1000,
        "host": { "pcpus": 1, "net": { "latency_us": 100, "mbps": 100 } },
        "domains": domains,
        "policies": [{ "id": "credit", "scheduler": "credit" }]
    }))
}

fn bulk_sender(sim: &Simulation) -> &crate::tcp::TcpSender {
    sim.io.peers.iter().find_map(|p| if let Peer::BulkSender { tcp, .. } = p { Some(&**tcp) } else { None }).unwrap()
}

/// Without loss, congestion control only opens the window: a stream alone with its driver domain fills the link
/// as the fixed window did, with no drop, no retransmission and the window at the sender's buffer.
#[test]
fn a_lossless_stream_keeps_the_link_rate() {
    let sc = bulk_rx_host(0, 64);
    let mut sim = Simulation::with_options(&sc, "credit", SimOptions::default()).unwrap();
    sim.run().unwrap();
    assert_io_conserved(&sim);
    let tcp = bulk_sender(&sim);
    assert_eq!((sim.io.packets_dropped, tcp.timeouts, tcp.fast_retransmits), (0, 0, 0));
    assert_eq!(tcp.cwnd, (64 * 1024u32).div_ceil(MSS), "slow start opened the window to the send buffer");
    let mbps = sim.report(&RunOptions::default())["domains"]["net"]["throughput"]["mbps"].as_f64().unwrap();
    assert!(mbps > 90.0, "{mbps} Mbit/s on a 100 Mbit/s link");
}

/// A sender whose window exceeds the NIC's ring, behind a driver domain that waits for the CPU: the ring
/// overflows, TCP recovers the losses (by fast retransmit and by timeout), and every byte the receiver read
/// arrived in order.
#[test]
fn a_starved_driver_domain_loses_packets_and_tcp_recovers() {
    let sc = bulk_rx_host(5, 4096);
    let mut sim = Simulation::with_options(&sc, "credit", SimOptions::default()).unwrap();
    sim.run().unwrap();
    assert_io_conserved(&sim);
    let tcp = bulk_sender(&sim);
    assert!(sim.io.packets_dropped > 0, "the ring never overflowed");
    assert!(tcp.timeouts > 0, "no timeout: {} drops, {tcp:?}", sim.io.packets_dropped);
    let rcv =
        sim.guests.tasks.iter().find_map(|t| if let Work::BulkRx { tcp, .. } = &t.work { Some(tcp) } else { None });
    let rcv = rcv.unwrap();
    assert!(rcv.rcv_nxt > 0 && rcv.rcv_nxt <= tcp.snd_nxt.max(tcp.snd_una) + 1);
    assert!(tcp.snd_una <= rcv.rcv_nxt, "the sender never sees an ACK beyond what arrived");
}

/// Linux scales the CFS tunables by 1 + ilog2 of the CPUs it has, counting at most eight.
#[test]
fn cfs_tunables_scale_with_the_guests_vcpus() {
    use super::guest::cfs_factor;
    let factors: Vec<u64> = [1, 2, 3, 4, 7, 8, 16].iter().map(|&n| cfs_factor(n)).collect();
    assert_eq!(factors, vec![1, 2, 2, 3, 3, 4, 4]);
}

/// Thesis 003 Table 5's set-up: dom0 (2 vCPUs, CFS) runs a busy task on each vCPU beside netback, a domU streams.
/// With no rate limit the domU preempts dom0's vCPU0 at netback's notification while netback is current; dom0's
/// wall clock charges netback for the domU's run, so netback falls behind the busy task in vruntime, loses wake-up
/// preemption and waits out a CFS slice. A steal-aware dom0 charges it only its own run and keeps the stream up.
#[test]
fn netback_preempted_while_current_waits_behind_dom0s_own_task_on_the_wall_clock() {
    let with_clock = |clock: &str| {
        scenario(json!({
            "schema": 1, "id": "nb", "title": "nb", "seed": 1, "duration_ms": 1500, "warmup_ms": 300,
            "host": { "pcpus": 2, "net": { "latency_us": 100, "mbps": 100 } },
            "domains": [
                { "name": "dom0", "role": "driver", "vcpus": 2, "backend_priority": 0,
                  "guest": { "scheduler": "cfs", "clock": clock },
                  "tasks": [{ "name": "a", "vcpu": 0, "workload": { "type": "cpu" } },
                            { "name": "b", "vcpu": 1, "workload": { "type": "cpu" } }] },
                { "name": "domU", "guest": { "scheduler": "cfs" }, "tasks": [{ "name": "tx", "workload": {
                    "type": "net_bulk", "direction": "tx", "window_kb": 16, "cpu_us": 20 } }] }
            ],
            "policies": [{ "id": "credit", "scheduler": "credit", "params": { "version": "4.x", "ratelimit_us": 0 } }]
        }))
    };
    // On the host cost profile: netback's per-packet work is what the domU's run interrupts.
    let profiled = |sc: &Scenario| {
        let mut sim = Simulation::with_options(sc, "credit", SimOptions::default()).unwrap();
        sim.run().unwrap();
        sim
    };
    let (wall, steal) = (profiled(&with_clock("wall")), profiled(&with_clock("steal")));
    assert_invariants(&wall);
    let out = |s: &Simulation| s.measure.dom_metrics[1].bytes_out as f64;
    // Measured at the time of writing: about 27% less on the wall clock.
    assert!(out(&wall) < 0.85 * out(&steal), "wall {} vs steal {} bytes", out(&wall), out(&steal));
}
