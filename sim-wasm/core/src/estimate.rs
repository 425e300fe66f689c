//! What a run will cost, estimated from the scenario before anything runs: work, in the engine's own units
//! (events plus the run-queue entries they walk, what `--max-events` limits), so a front end can refuse or ask
//! before a run of hours, and memory. The model counts, per simulated second, the events each source raises:
//! scheduler timers per pCPU, guest slices per vCPU, and each workload kind's share (its request, packet, block
//! or phase rate times the events one of those takes along the split-driver path, in `workload/`). It is
//! meant to be right within a stated factor (checked against the library's scenarios and worst cases by a
//! test), not exact: what it guards against are runs thousands of times longer than intended.

use crate::scenario::{Scenario, Timing};
use crate::workload::{Estimate, EstimateCx};
use serde::Serialize;
use serde_json::Value;

/// Events a run may be estimated at before the CLI asks for `--max-events` (about a minute or two of one core).
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;

/// Events per wall second a run processes, on the slow side (the browser's wasm build on a laptop; the native CLI
/// is faster), for turning an event estimate into time.
pub const EVENTS_PER_WALL_SECOND: f64 = 5.0e6;

/// A script policy's interpreter operations per wall second, on the slow side (the page's wasm build: a hook
/// writing a thousand log lines a tick ran at about 2M a second; natively about 0.1 us an operation), for
/// turning a script's work into time.
pub const SCRIPT_OPERATIONS_PER_WALL_SECOND: f64 = 2.0e6;

/// A script policy's cost is sampled, not modelled (what a hook does is the script's): its run over the first
/// [`SCRIPT_SAMPLE_MS`] of simulated time, stopped early once it has spent [`SCRIPT_SAMPLE_OPERATIONS`]
/// (a few tenths of a second of interpreting), its rate extrapolated to the whole duration.
pub const SCRIPT_SAMPLE_MS: u64 = 50;
pub const SCRIPT_SAMPLE_OPERATIONS: u64 = 4_000_000;

/// Refuses a run whose estimate passes `max_events` events per run, with a message that gives the estimate and the
/// option that allows it; returns the estimate otherwise.
pub fn within(sc: &Scenario, policies: &[String], max_events: u64) -> Result<Cost, String> {
    within_naming(sc, policies, max_events, "--max-events ")
}

/// [`within`], the message naming the option as the caller spells it (`max_events=` in Python).
pub fn within_naming(sc: &Scenario, policies: &[String], max_events: u64, option: &str) -> Result<Cost, String> {
    let cost = estimate(sc, policies);
    if cost.events_per_run > max_events {
        return Err(format!(
            "'{}' is estimated at {}: more than the limit of {max_events} events per run; pass {option}{} to run \
             it anyway",
            sc.id,
            cost.describe(),
            cost.events_per_run.saturating_mul(2)
        ));
    }
    Ok(cost)
}

/// The estimated cost of running a scenario.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct Cost {
    /// Events of one policy's run (the largest, if policies differ).
    pub events_per_run: u64,
    /// Runs the estimate covers (policies).
    pub runs: u64,
    /// Events of all the runs.
    pub events: u64,
    /// Memory of one run while it runs, trace not counted [bytes].
    pub bytes_per_run: u64,
    /// Interpreter operations of the script policies' hooks over all the runs (0 without one), from a sample.
    pub script_operations: u64,
    /// Wall time at [`EVENTS_PER_WALL_SECOND`] for all the runs [s].
    pub seconds: f64,
}

impl Cost {
    /// The estimate in words, for a refusal or a question: `~2.1e9 events (~7 min at 5M events/s), ~40 MB`.
    pub fn describe(&self) -> String {
        let t = self.seconds;
        let time = if t < 120.0 {
            format!("{t:.0} s")
        } else if t < 7200.0 {
            format!("{:.0} min", t / 60.0)
        } else {
            format!("{:.1} h", t / 3600.0)
        };
        let script = if self.script_operations > 0 {
            format!(" and ~{:.2e} script operations", self.script_operations as f64)
        } else {
            String::new()
        };
        format!(
            "~{:.2e} events{script} over {} run(s) (~{time} at {:.0}M events/s), ~{:.0} MB per run",
            self.events as f64,
            self.runs,
            EVENTS_PER_WALL_SECOND / 1e6,
            self.bytes_per_run as f64 / 1e6
        )
    }
}

/// Events per simulated second from the policy's timers: the shortest period among its parameters (tick, slice,
/// slot, SEDF period, ARINC frame), a few events per pCPU each time, and Xen's 10 ms tick at least.
fn policy_rate(params: &Value, pcpus: f64, domains: f64, timing: Timing) -> f64 {
    fn shortest(v: &Value, key: &str, best: &mut f64) {
        match v {
            Value::Object(o) => o.iter().for_each(|(k, x)| shortest(x, k, best)),
            Value::Array(a) => a.iter().for_each(|x| shortest(x, key, best)),
            Value::Number(n) => {
                let timer = ["period", "slot", "frame", "slice", "tick", "runtime"].iter().any(|w| key.contains(w));
                let secs = if key.ends_with("_ms") {
                    n.as_f64().map(|x| x / 1e3)
                } else if key.ends_with("_us") {
                    n.as_f64().map(|x| x / 1e6)
                } else {
                    None
                };
                if let Some(s) = secs.filter(|&s| timer && s > 0.0) {
                    *best = best.min(s);
                }
            }
            _ => {}
        }
    }
    let mut period = 0.01_f64;
    shortest(params, "", &mut period);
    // A charging unit with a context-switch allowance (BVT's `mcu_us` and `ctx_allow_us`): a vCPU runs the
    // allowance past the next one's virtual time, and at least one unit, so the two bound its slice from below.
    let us = |k: &str| params.get(k).and_then(Value::as_f64);
    if us("mcu_us").is_some() || us("ctx_allow_us").is_some() {
        let d = crate::policy::bvt::BvtParams::default();
        let unit = us("mcu_us").unwrap_or(d.mcu_us as f64);
        let allow = us("ctx_allow_us").unwrap_or(d.ctx_allow_us as f64);
        // Xen's timers fire up to TIMER_SLOP late (half of it on average), which lengthens the shortest slices.
        let slop_us = match timing {
            Timing::Xen => crate::sim::timing::TIMER_SLOP.0 as f64 / 2e3,
            Timing::Lockstep => 0.0,
        };
        period = period.min((unit.max(allow).max(1.0) + slop_us) / 1e6);
    }
    // Per-domain periods (SEDF, Atropos) fire per domain; host-wide ones per pCPU.
    2.0 * pcpus.max(domains.min(pcpus * 4.0)) / period
}

/// A script policy's operations over a run of `sc` under `id`, from a sample of its start (see
/// [`SCRIPT_SAMPLE_MS`]): what `init` and `timers` took once, plus the sample's rate over the whole duration,
/// at most the run's budget. 0 when the scenario does not build (the run says why).
fn script_operations(sc: &Scenario, id: &str) -> u64 {
    use crate::policy::script::MAX_RUN_OPERATIONS;
    use crate::sim::{SimOptions, Simulation};
    let mut sample = sc.clone();
    sample.duration_ms = sc.duration_ms.min(SCRIPT_SAMPLE_MS);
    sample.warmup_ms = 0;
    sample.changes.retain(|c| c.at_ms < sample.duration_ms);
    let opts = SimOptions { trace: false, max_events: Some(1_000_000), ..SimOptions::default() };
    let Ok(mut sim) = Simulation::with_options(&sample, id, opts) else {
        return 0;
    };
    let boot = sim.script_operations();
    // The script's fault ends the sample where the run would end too (a storm stopped, a bound passed); the
    // sample's event cap only ends the sample.
    let mut faulted = false;
    // A sample that has not left the first instant goes on longer: a storm of cheap calls there is stopped by
    // the bound on calls at one instant well before it spends the longer allowance, and then costs no more.
    let room = |sim: &Simulation| {
        let cap = if sim.now_ns() == 0 { 5 * SCRIPT_SAMPLE_OPERATIONS } else { SCRIPT_SAMPLE_OPERATIONS };
        sim.script_operations() < boot + cap
    };
    while room(&sim) {
        match sim.step(64) {
            Ok(false) => {}
            Ok(true) => break,
            Err(e) => {
                faulted = matches!(e, crate::sim::SimError::Policy(_));
                break;
            }
        }
    }
    let spent = (sim.script_operations() - boot) as f64;
    let total = if faulted || (sim.is_finished() && sample.duration_ms == sc.duration_ms) {
        spent
    } else {
        // The rate over the simulated time the sample reached (at least 1 us: a storm at one instant).
        spent / (sim.now_ns().max(1_000) as f64 / 1e9) * (sc.duration_ms as f64 / 1e3)
    };
    (boot as f64 + total).min(MAX_RUN_OPERATIONS as f64) as u64
}

/// Estimates the cost of running the named policies (all when `policies` is empty).
/// The share of each domain's vCPUs a scheduler ever runs: all of them, except under null, which gives each of
/// the first `pcpus` vCPUs (in creation order) a pCPU of its own at boot and never runs the rest.
fn running_share(sc: &Scenario, scheduler: &str) -> Vec<f64> {
    if scheduler != crate::policy::null::ROW.name {
        return vec![1.0; sc.domains.len()];
    }
    let mut free = sc.host.pcpus;
    sc.domains
        .iter()
        .map(|d| {
            let run = d.vcpus.min(free);
            free -= run;
            f64::from(run) / f64::from(d.vcpus.max(1))
        })
        .collect()
}

pub fn estimate(sc: &Scenario, policies: &[String]) -> Cost {
    let pcpus = f64::from(sc.host.pcpus);
    let net_rtt_s = 2.0 * sc.host.net.latency_us / 1e6 + 100e-6;
    let disk_s = sc.host.disk.service_us / 1e6 + 16.0 / 1024.0 / sc.host.disk.mb_per_s.max(1.0);
    let sim_s = sc.duration_ms as f64 / 1e3;
    // Memory: the engine, the policy, the report. Events per simulated second (policy timers aside) are counted
    // per domain, so that a policy that never runs some vCPUs counts only the domains it runs.
    let mut bytes = 1_000_000.0;
    // Bulk packets and block reads share the host's one link (each way) and one disk, which bound their rates.
    let link_pkts = sc.host.net.mbps * 1e6 / 8.0 / 1500.0;
    let mut vcpus = 0.0;
    let drivers = sc.domains.iter().filter(|d| d.role == crate::scenario::Role::Driver).count() as f64;
    let mut parts = Vec::with_capacity(sc.domains.len());
    for d in &sc.domains {
        let dv = f64::from(d.vcpus);
        vcpus += dv;
        // Guest slices and hypervisor slices of a busy vCPU.
        let mut e = Estimate { rate: dv * 100.0, bytes: dv * 2048.0, ..Estimate::default() };
        let cx = EstimateCx {
            pcpus,
            dom_vcpus: dv,
            net_rtt_s,
            disk_s,
            link_pkts,
            disk_service_us: sc.host.disk.service_us,
            disk_mb_per_s: sc.host.disk.mb_per_s,
            request_cap: drivers.max(1.0) * 1e9 / (2.0 * crate::costs::PROFILE.net_backend_pkt_ns.max(1) as f64),
        };
        for t in &d.tasks {
            e.bytes += 1024.0;
            t.workload.kind().estimate(&cx, &mut e);
        }
        bytes += e.bytes;
        parts.push(e);
    }
    // The domains' events per simulated second under a policy, each domain weighed by the share of its vCPUs the
    // policy ever runs, shared devices bounded after the sum.
    let rate = |running: &[f64]| {
        let (mut r, mut net, mut disk) = (0.0, 0.0, 0.0);
        for (e, f) in parts.iter().zip(running) {
            (r, net, disk) = (r + f * e.rate, net + f * e.net_pkts, disk + f * e.disk_blocks);
        }
        r + 8.0 * net.min(2.0 * link_pkts) + 12.0 * disk.min(1.0 / disk_s.max(1e-6))
    };
    let ids: Vec<&str> = if policies.is_empty() {
        sc.policies.iter().map(|p| p.id.as_str()).collect()
    } else {
        policies.iter().map(String::as_str).collect()
    };
    let ndom = sc.domains.len() as f64;
    let per_run = ids
        .iter()
        .filter_map(|id| sc.policy(id))
        .map(|p| (rate(&running_share(sc, &p.scheduler)) + policy_rate(&p.params, pcpus, ndom, sc.host.timing)) * sim_s)
        .fold(0.0_f64, f64::max);
    // A live event per vCPU, pCPU and client at most, 64 bytes each, twice over for the heap's growth.
    bytes += (vcpus + pcpus) * 128.0;
    let runs = ids.len().max(1) as u64;
    // Booting: each vCPU, pCPU and task starts with a few events, whatever the duration.
    let boot = 10.0 * (vcpus + pcpus + sc.domains.iter().map(|d| d.tasks.len()).sum::<usize>() as f64);
    let events_per_run = (per_run + boot).ceil().min(u64::MAX as f64 / 16.0) as u64;
    let events = events_per_run.saturating_mul(runs);
    let script_ops: u64 = ids
        .iter()
        .filter(|id| sc.policy(id).is_some_and(|p| p.scheduler == crate::policy::script::ROW.name))
        .map(|id| script_operations(sc, id))
        .sum();
    let seconds = events as f64 / EVENTS_PER_WALL_SECOND + script_ops as f64 / SCRIPT_OPERATIONS_PER_WALL_SECOND;
    Cost { events_per_run, runs, events, bytes_per_run: bytes as u64, script_operations: script_ops, seconds }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn library() -> Vec<(String, Scenario)> {
        let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios");
        let mut out = Vec::new();
        for e in std::fs::read_dir(dir).unwrap() {
            let p = e.unwrap().path();
            let name = p.file_name().unwrap().to_string_lossy().to_string();
            if !name.ends_with(".json") || name == "schema.json" || name == "index.json" {
                continue;
            }
            out.push((name, Scenario::from_json(&std::fs::read_to_string(&p).unwrap()).unwrap()));
        }
        out
    }

    /// `sc` cut to its first `ms` of simulated time (no warm-up, later changes dropped): the estimate scales with
    /// the duration, so a short run checks the rate.
    fn cut(sc: &Scenario, ms: u64) -> Scenario {
        let mut s = sc.clone();
        s.duration_ms = s.duration_ms.min(ms);
        s.warmup_ms = 0;
        s.changes.retain(|c| c.at_ms < s.duration_ms);
        s
    }

    /// `policy`'s run of `sc` with no trace, stopped once its work passes `cap`, and how it ended.
    fn run_capped(sc: &Scenario, policy: &str, cap: u64) -> (crate::sim::Simulation, Result<(), crate::sim::SimError>) {
        let opts = crate::sim::SimOptions { trace: false, max_events: Some(cap), ..Default::default() };
        let mut sim = crate::sim::Simulation::with_options(sc, policy, opts).unwrap();
        let ended = sim.run();
        (sim, ended)
    }

    /// (estimate, actual work) of `policy`'s run of `sc`, the run stopped once its work passes `cap`.
    fn estimate_and_work(sc: &Scenario, policy: &str, cap: u64) -> (u64, u64) {
        let est = estimate(sc, &[policy.to_string()]).events_per_run;
        (est, run_capped(sc, policy, cap).0.work())
    }

    /// Worst cases: the shapes whose work per simulated second the estimate once missed by far (a pipe ring of
    /// thousands of threads, BVT with a 1 us charging unit and no switch allowance, 1 us barrier phases, a
    /// stream server waking every 0.1 ms for thousands of clients, many busy loops on one vCPU). Each is a guest
    /// `g` of `vcpus` vCPUs running `tasks`, beside dom0 and a 2-vCPU busy loop, on 4 pCPUs under `policy`.
    fn worst_cases() -> Vec<(String, Scenario)> {
        let busy = |n: usize| {
            (0..n).map(|i| format!(r#"{{"name":"c{i}","workload":{{"type":"cpu"}}}}"#)).collect::<Vec<_>>().join(",")
        };
        let credit = r#"{"id":"credit","scheduler":"credit"}"#.to_string();
        let bvt =
            |allow: u32| format!(r#"{{"id":"bvt","scheduler":"bvt","params":{{"mcu_us":1,"ctx_allow_us":{allow}}}}}"#);
        let cases: [(&str, String, u32, String); 8] = [
            ("pipe-8192", r#"{"name":"p","workload":{"type":"pipe","threads":8192,"group":2,"cpu_us":1}}"#.into(), 4, credit.clone()),
            (
                "pipe-8192-full",
                r#"{"name":"p","workload":{"type":"pipe","threads":8192,"group":8,"messages":8,"cpu_us":1}}"#.into(),
                2,
                credit.clone(),
            ),
            ("bvt-mcu-1", busy(8), 8, bvt(0)),
            ("bvt-mcu-1-allow-50", busy(8), 8, bvt(50)),
            (
                "barrier-1us",
                r#"{"name":"j","workload":{"type":"barrier","compute_us":1,"phases":0,"sync":"block"}}"#.into(),
                8,
                credit.clone(),
            ),
            (
                "stream-2000",
                r#"{"name":"s","workload":{"type":"stream_server","clients":2000,"kbps":64,"buffer_kb":64,"interval_ms":0.1}}"#.into(),
                1,
                credit.clone(),
            ),
            ("cpu-many", busy(2000), 1, credit.clone()),
            (
                "server-clients",
                r#"{"name":"s","workload":{"type":"server","port":80,"clients":10000,"think_ms":[0,0],"cpu_us":1}}"#.into(),
                2,
                credit,
            ),
        ];
        cases
            .into_iter()
            .map(|(name, tasks, vcpus, policy)| {
                // The pipe rings do the most work per simulated ms: a short run shows their rate.
                let ms = if tasks.contains("pipe") { 20 } else { 200 };
                let text = format!(
                    r#"{{"schema":1,"id":"w","title":"w","seed":1,"duration_ms":{ms},"host":{{"pcpus":4}},
                    "domains":[{{"name":"dom0","role":"driver"}},{{"name":"g","vcpus":{vcpus},"tasks":[{tasks}]}},
                    {{"name":"h","vcpus":2,"tasks":[{{"name":"burn","workload":{{"type":"cpu"}}}}]}}],
                    "policies":[{policy}]}}"#
                );
                (name.to_string(), Scenario::from_json(&text).unwrap())
            })
            .collect()
    }

    /// The estimate is in the engine's own units of work ([`crate::sim::Simulation::work`]: events plus the run
    /// queue entries and threads they walk), and within stated factors of the work every library scenario (cut
    /// to 500 ms) and every worst case does under each of its policies: at most [`LOW`] times low (beyond it the
    /// engine's limit, not the estimate, is what stops a run) and at most [`HIGH`] times high (a run refused
    /// that would have been cheap). Measured: 8.5x low at worst (p003-table4-disk-stress under SEDF, whose disk
    /// path takes more events per request than the split-driver average) and 31x high (p000-fig1b under
    /// aggressive boosting, which starves the bulk receiver the estimate counts at link rate).
    #[test]
    fn the_estimate_is_within_a_factor_of_the_work() {
        const LOW: f64 = 10.0;
        const HIGH: f64 = 40.0;
        let cases = library().into_iter().map(|(n, sc)| (n, cut(&sc, 500))).chain(worst_cases());
        for (name, sc) in cases {
            for p in &sc.policies {
                let est = estimate(&sc, std::slice::from_ref(&p.id)).events_per_run;
                let (_, work) = estimate_and_work(&sc, &p.id, (est as f64 * LOW) as u64 + 1);
                let r = work as f64 / est.max(1) as f64;
                assert!(r <= LOW, "{name} under {}: estimated {est}, did {work} ({r:.1}x the estimate)", p.id);
                assert!(1.0 / r <= HIGH, "{name} under {}: estimated {est}, did only {work}", p.id);
            }
        }
    }

    /// A script policy's hooks and `timers()` count: a tick hook that loops is estimated near the operations its
    /// run spends, and a long run of it well past the page's 20 s question, where the same host under an empty
    /// tick stays a few seconds (some 10^7 hook calls of a few operations each).
    #[test]
    fn a_script_policys_hooks_and_timers_count() {
        let scripted = |tick: &str, ms: u64| {
            let src = format!(
                "fn timers() {{ #{{ tick_us: 1000 }} }}\nfn tick(p) {{ {tick} }}\nfn wake(v, cause) {{ resched(v % 2); }}\n\
                 fn do_schedule(p, cur, runnable) {{ #{{ next: p, slice_us: 1000 }} }}"
            );
            Scenario::from_value(serde_json::json!({
                "schema": 1, "id": "s", "title": "s", "seed": 1, "duration_ms": ms, "host": { "pcpus": 2 },
                "domains": [{ "name": "a", "vcpus": 2, "tasks": [
                    { "name": "x", "workload": { "type": "cpu" } }, { "name": "y", "workload": { "type": "cpu" } }] }],
                "policies": [{ "id": "mine", "scheduler": "script", "params": { "source": src } }]
            }))
            .unwrap()
        };
        let looping = "let n = 0; while n < 2000 { n += 1; }";
        let sc = scripted(looping, 300);
        let est = estimate(&sc, &[]).script_operations;
        let (sim, ended) = run_capped(&sc, "mine", u64::MAX);
        ended.unwrap();
        let r = est as f64 / sim.script_operations() as f64;
        assert!((0.5..2.0).contains(&r), "estimated {est}, spent {}", sim.script_operations());

        let long = estimate(&scripted("let n = 0; while n < 100000 { n += 1; }", 60_000), &[]);
        assert!(long.seconds > 20.0, "{long:?}");
        assert!(long.describe().contains("script operations"), "{}", long.describe());
        let cheap = estimate(&scripted("", 60_000), &[]);
        assert!(cheap.seconds < 5.0, "{cheap:?}");
    }

    /// A run whose work passes `--max-events` stops there, counted in work (a pipe ring of 8,192 threads does
    /// ~500 units an event), with an error that names the limit and how to raise it.
    #[test]
    fn the_engine_stops_a_run_whose_work_passes_the_limit() {
        let (_, sc) = worst_cases().into_iter().find(|(n, _)| n == "pipe-8192").unwrap();
        let (sim, ended) = run_capped(&sc, "credit", 1_000_000);
        let e = ended.unwrap_err();
        assert!(matches!(e, crate::sim::SimError::WorkLimit { limit: 1_000_000, .. }), "{e:?}");
        assert!(sim.events() < 100_000, "events alone ({}) would not have stopped it", sim.events());
        let msg = e.to_string();
        assert!(msg.contains("limit of 1000000") && msg.contains("--max-events"), "{msg}");
        // And the estimate says so before anything runs.
        assert!(within(&sc, &[], 1_000_000).is_err());
    }

    #[test]
    #[ignore = "prints the estimates, to compare with the runs' events by hand"]
    fn print_estimates() {
        for (name, sc) in library() {
            println!("EST {name} {}", estimate(&sc, &[sc.policies[0].id.clone()]).events_per_run);
        }
    }

    #[test]
    fn every_library_scenario_is_well_under_the_default_limit() {
        for (name, sc) in library() {
            let c = estimate(&sc, &[]);
            assert!(c.events_per_run < DEFAULT_MAX_EVENTS / 20, "{name}: {}", c.describe());
            assert!(c.bytes_per_run < 500_000_000, "{name}: {}", c.describe());
        }
    }

    #[test]
    fn within_refuses_naming_the_estimate_and_the_option() {
        let sc = &library()[0].1;
        let cost = estimate(sc, &[]);
        assert!(within(sc, &[], cost.events_per_run).is_ok());
        let e = within(sc, &[], cost.events_per_run - 1).unwrap_err();
        assert!(e.contains("--max-events") && e.contains("events"), "{e}");
    }

    #[test]
    fn a_huge_host_for_an_hour_is_over_the_limit() {
        let doms: Vec<String> = (0..256)
            .map(|i| format!(r#"{{"name":"d{i}","vcpus":16,"tasks":[{{"name":"t","workload":{{"type":"cpu"}}}}]}}"#))
            .collect();
        let text = format!(
            r#"{{"schema":1,"id":"big","title":"big","seed":1,"duration_ms":3600000,"host":{{"pcpus":256}},
                "domains":[{}],"policies":[{{"id":"c2","scheduler":"credit2"}}]}}"#,
            doms.join(",")
        );
        let sc = Scenario::from_json(&text).unwrap();
        let c = estimate(&sc, &[]);
        assert!(c.events_per_run > DEFAULT_MAX_EVENTS, "{}", c.describe());
        assert!(c.describe().contains("events"));
    }
}
