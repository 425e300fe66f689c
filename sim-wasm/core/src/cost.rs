//! What a run will cost, estimated from the scenario before anything runs: events (so a front end can refuse or
//! ask before a run of hours) and memory. The model counts, per simulated second, the events each source raises:
//! scheduler timers per pCPU, guest slices per vCPU, and each workload's request, packet, block or phase rate
//! times the events one of those takes along the split-driver path. It is meant to be right within a small factor
//! (checked against the library's scenarios by a test), not exact: what it guards against are runs thousands of
//! times longer than intended.

use crate::scenario::Scenario;
use crate::sim::workload::{Estimate, EstimateCx};
use serde::Serialize;
use serde_json::Value;

/// Events a run may be estimated at before the CLI asks for `--max-events` (about a minute or two of one core).
pub const DEFAULT_MAX_EVENTS: u64 = 1_000_000_000;

/// Events per wall second a run processes, on the slow side (the browser's wasm build on a laptop; the native CLI
/// is faster), for turning an event estimate into time.
pub const EVENTS_PER_WALL_SECOND: f64 = 5.0e6;

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
        format!(
            "~{:.2e} events over {} run(s) (~{time} at {:.0}M events/s), ~{:.0} MB per run",
            self.events as f64,
            self.runs,
            EVENTS_PER_WALL_SECOND / 1e6,
            self.bytes_per_run as f64 / 1e6
        )
    }
}

/// Events per simulated second from the policy's timers: the shortest period among its parameters (tick, slice,
/// slot, SEDF period, ARINC frame), a few events per pCPU each time, and Xen's 10 ms tick at least.
fn policy_rate(params: &Value, pcpus: f64, domains: f64) -> f64 {
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
    // Per-domain periods (SEDF, Atropos) fire per domain; host-wide ones per pCPU.
    2.0 * pcpus.max(domains.min(pcpus * 4.0)) / period
}

/// Estimates the cost of running the named policies (all when `policies` is empty).
pub fn estimate(sc: &Scenario, policies: &[String]) -> Cost {
    let pcpus = f64::from(sc.host.pcpus);
    let net_rtt_s = 2.0 * sc.host.net.latency_us / 1e6 + 100e-6;
    let disk_s = sc.host.disk.service_us / 1e6 + 16.0 / 1024.0 / sc.host.disk.mb_per_s.max(1.0);
    let sim_s = sc.duration_ms as f64 / 1e3;
    // Events per simulated second (policy timers aside) and memory: the engine, the policy, the report.
    let mut e = Estimate { bytes: 1_000_000.0, ..Estimate::default() };
    // Bulk packets and block reads share the host's one link (each way) and one disk, which bound their rates.
    let link_pkts = sc.host.net.mbps * 1e6 / 8.0 / 1500.0;
    let mut vcpus = 0.0;
    for d in &sc.domains {
        let dv = f64::from(d.vcpus);
        vcpus += dv;
        // Guest slices and hypervisor slices of a busy vCPU.
        e.rate += dv * 100.0;
        e.bytes += dv * 2048.0;
        let cx = EstimateCx {
            pcpus,
            dom_vcpus: dv,
            net_rtt_s,
            disk_s,
            link_pkts,
            disk_service_us: sc.host.disk.service_us,
            disk_mb_per_s: sc.host.disk.mb_per_s,
        };
        for t in &d.tasks {
            e.bytes += 1024.0;
            t.workload.kind().estimate(&cx, &mut e);
        }
    }
    let rate = e.rate + (8.0 * e.net_pkts.min(2.0 * link_pkts) + 12.0 * e.disk_blocks.min(1.0 / disk_s.max(1e-6)));
    let mut bytes = e.bytes;
    let ids: Vec<&str> = if policies.is_empty() {
        sc.policies.iter().map(|p| p.id.as_str()).collect()
    } else {
        policies.iter().map(String::as_str).collect()
    };
    let ndom = sc.domains.len() as f64;
    let per_run = ids
        .iter()
        .filter_map(|id| sc.policy(id))
        .map(|p| (rate + policy_rate(&p.params, pcpus, ndom)) * sim_s)
        .fold(0.0_f64, f64::max);
    // A live event per vCPU, pCPU and client at most, 64 bytes each, twice over for the heap's growth.
    bytes += (vcpus + pcpus) * 128.0;
    let runs = ids.len().max(1) as u64;
    let events_per_run = per_run.ceil().min(u64::MAX as f64 / 16.0) as u64;
    let events = events_per_run.saturating_mul(runs);
    Cost { events_per_run, runs, events, bytes_per_run: bytes as u64, seconds: events as f64 / EVENTS_PER_WALL_SECOND }
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
