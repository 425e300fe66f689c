//! The scheduling granularity against Xen's `sched-gran` semantics: a core's threads hold one domain at a time,
//! the threads a domain cannot fill idle, and with one thread per unit nothing changes.

use super::*;
use crate::sim::test_support::*;
use serde_json::{json, Value};

/// `doms` CPU-bound domains of the given vCPU counts on `cores` cores of 2 threads, under `scheduler` with
/// `sched_gran`.
fn smt_host(scheduler: &str, gran: &str, cores: u32, doms: &[u64]) -> crate::scenario::Scenario {
    let domains: Vec<Value> = hog_domains(doms.iter().map(|&n| (n, 256, 0))).into_iter().collect();
    scenario(json!({
        "schema": 1, "id": "gran", "title": "gran", "seed": 3, "duration_ms": 3000, "warmup_ms": 500,
        "host": { "pcpus": cores * 2, "threads_per_core": 2 },
        "domains": domains,
        "policies": [{ "id": "p", "scheduler": scheduler, "params": { "sched_gran": gran } }]
    }))
}

#[test]
fn units_are_cores_or_sockets_of_consecutive_threads() {
    assert_eq!(unit_size(Gran::Cpu, 8, 2, None), 1);
    assert_eq!(unit_size(Gran::Core, 8, 2, None), 2);
    assert_eq!(unit_size(Gran::Core, 8, 1, None), 1, "no SMT: a core is one pCPU");
    assert_eq!(unit_size(Gran::Socket, 8, 2, Some(2)), 4);
    assert_eq!(unit_size(Gran::Socket, 8, 2, None), 8, "one socket by default");
    assert_eq!(serde_json::to_value(Gran::Core).unwrap(), json!("core"));
}

/// Two 1-vCPU CPU hogs on one core: under "core" they take turns with the whole core, the sibling thread idle
/// (forced idle) and never shared; under "cpu" they share the core all the time, each thread at 0.65 speed.
#[test]
fn one_core_two_domains_take_turns_under_core() {
    for scheduler in ["credit", "credit2", "rtds"] {
        let core = run(&smt_host(scheduler, "core", 1, &[1, 1]), "p");
        assert_invariants(&core);
        assert_one_domain_per_core(&core, 2);
        assert_eq!(core.measure.cores.core_shared_ns, 0, "{scheduler}");
        let window = 2_500_000_000u64;
        assert!(
            core.measure.cores.forced_idle_ns > window / 2,
            "{scheduler}: the sibling idles while the other domain waits: {}",
            core.measure.cores.forced_idle_ns
        );
        let s = shares(&core);
        assert!(s.iter().all(|&x| x > 0.15), "{scheduler}: both domains get turns: {s:?}");
        let cpu = run(&smt_host(scheduler, "cpu", 1, &[1, 1]), "p");
        assert!(cpu.measure.cores.core_shared_ns > window * 9 / 10, "{scheduler}: shared all the time under cpu");
    }
}

/// A 2-vCPU domain alone fills its core under "core": nothing is forced idle, as under "cpu".
#[test]
fn a_domain_that_fills_its_core_loses_nothing() {
    let sim = run(&smt_host("credit", "core", 1, &[2]), "p");
    assert_eq!(sim.measure.cores.forced_idle_ns, 0);
    assert!((shares(&sim)[0] - 1.0).abs() < 0.01, "{:?}", shares(&sim));
}

/// With one thread per core "core" is "cpu": the same decisions, the same report.
#[test]
fn without_smt_core_is_cpu() {
    let mk = |gran: &str| {
        scenario(json!({
            "schema": 1, "id": "flat", "title": "flat", "seed": 3, "duration_ms": 1500, "warmup_ms": 100,
            "host": { "pcpus": 2 },
            "domains": hog_domains([(1, 256, 0), (2, 512, 0)].into_iter()),
            "policies": [{ "id": "p", "scheduler": "credit", "params": { "sched_gran": gran } }]
        }))
    };
    let opts = crate::report::RunOptions { deterministic: true, ..Default::default() };
    let a = crate::report::run_scenario(&mk("cpu"), &[], &opts).unwrap();
    let b = crate::report::run_scenario(&mk("core"), &[], &opts).unwrap();
    assert_eq!(crate::report::to_json_string(&a), crate::report::to_json_string(&b));
}

/// The granularity is fixed at boot.
#[test]
fn sched_gran_cannot_change_at_run_time() {
    let e = crate::policy::registry::check_param("credit2", "sched_gran", &json!("core")).unwrap_err();
    assert!(e.contains("fixed at boot"), "{e}");
}
