//! The same load, simulated: a scenario fitted to a recorded run, and its runs beside the recording.
//!
//! Each domain keeps its vCPU count and weight; each vCPU's thread becomes one task pinned to it, its workload
//! chosen from the existing kinds by what the trace shows of it:
//! - `cpu` when it was blocked at most [`CPU_BOUND_BLOCKED`] of the time it was seen, and was seen for at least
//!   [`CPU_BOUND_SEEN`] of the trace and ran at least [`CPU_BOUND_RAN`] of the time it was runnable or running;
//! - `interactive` with one burst per trace (its whole CPU time) when no sleep of it ended in the trace;
//! - `server` (closed-loop UDP requests, one client) when most of its wake-ups came from another thread: the wake
//!   source is kept as a request from a client, with `cpu_us` its mean CPU per wake-up and `think_ms` the 10th to
//!   90th percentile of its sleeps (the model's think times are uniform over a range);
//! - `interactive` otherwise (woken from interrupt context: timers, devices), `cpu_us` and `think_ms` alike.
//!
//! A wake-up is counted as from interrupt context when the waker recorded is the idle task, or a thread that never
//! blocks (a timer interrupt hitting a busy loop names the loop as the waker). Requests and events reach a guest
//! through a driver domain in the model, so a scenario with servers or interactive tasks gets one (`dom0`, one
//! vCPU), which the real host did not have as such.

use super::replay::{add_wake_to_run, RecordedRun, Waker};
use super::wake::WakeToRun;
use crate::metrics::Samples;
use crate::report::{attach_claims, Report, RunOptions};
use crate::scenario::Scenario;
use crate::sim::{SimOptions, Simulation};
use serde_json::{json, Value};

/// Largest blocked fraction of a CPU-bound thread.
pub const CPU_BOUND_BLOCKED: f64 = 0.05;

/// What a thread was fitted as, and why.
#[derive(Debug, Clone, PartialEq)]
pub struct Fitted {
    pub workload: Value,
    /// One line: the kind and the evidence.
    pub why: String,
}

/// Least part of the trace a thread must be seen in to be fitted as CPU-bound: one seen briefly (it ran a little
/// and then blocked for good, or the trace began or ended around it) shows no sleep that ended, which says
/// nothing of how often it runs.
pub const CPU_BOUND_SEEN: f64 = 0.5;

/// Least part of its runnable-or-running time a CPU-bound thread must have run: one runnable all along that
/// hardly ran (its state before its first record unknown, or starved) shows no demand to fit a loop to.
pub const CPU_BOUND_RAN: f64 = 0.01;

fn cpu_bound(run: &RecordedRun, v: usize) -> bool {
    let s = &run.stats[v];
    let seen = s.active_ns + s.blocked_ns;
    seen > 0
        && s.blocked_ns as f64 <= CPU_BOUND_BLOCKED * seen as f64
        && seen as f64 >= CPU_BOUND_SEEN * run.end_ns as f64
        && run.cpu_ns[v] as f64 >= CPU_BOUND_RAN * s.active_ns as f64
}

/// A quantile of samples [ns] (nearest rank over the distribution's points).
fn quantile(s: &Samples, p: f64) -> u64 {
    let pts = s.points();
    let n: u64 = pts.iter().map(|&(_, c)| c).sum();
    if n == 0 {
        return 0;
    }
    let rank = ((p * n as f64).ceil() as u64).clamp(1, n);
    let mut seen = 0;
    for (v, c) in pts {
        seen += c;
        if seen >= rank {
            return v;
        }
    }
    0
}

fn mean_us(s: &Samples) -> f64 {
    let pts = s.points();
    let n: u64 = pts.iter().map(|&(_, c)| c).sum();
    if n == 0 {
        return 0.0;
    }
    let sum: f64 = pts.iter().map(|&(v, c)| v as f64 * c as f64).sum();
    (sum / n as f64 / 1e3 * 1e3).round() / 1e3
}

fn ms(ns: u64) -> f64 {
    (ns as f64 / 1e3).round() / 1e3
}

/// The workload of vCPU `v`'s thread.
pub fn fit_vcpu(run: &RecordedRun, v: usize, port: u16) -> Fitted {
    let s = &run.stats[v];
    let seen = (s.active_ns + s.blocked_ns).max(1);
    if cpu_bound(run, v) {
        return Fitted {
            workload: json!({ "type": "cpu" }),
            why: format!("cpu (blocked {:.1}% of the time)", 100.0 * s.blocked_ns as f64 / seen as f64),
        };
    }
    if s.sleeps.is_empty() {
        // No sleep seen to its end: what it did is one stretch of CPU in the whole trace.
        let window_ms = ms(run.end_ns.max(1_000_000));
        let cpu_us = ((run.cpu_ns[v] as f64 / 1e3).round()).max(1.0);
        return Fitted {
            workload: json!({ "type": "interactive", "cpu_us": cpu_us, "think_ms": [window_ms, window_ms] }),
            why: format!(
                "interactive: ran {cpu_us} us in all and no sleep of it ended in the trace (seen {:.0}% of it)",
                100.0 * seen as f64 / run.end_ns.max(1) as f64
            ),
        };
    }
    let (mut by_thread, mut by_irq) = (0u64, 0u64);
    for (w, &n) in &s.wakers {
        match w {
            Waker::Vcpu(u) if !cpu_bound(run, *u) => by_thread += n,
            _ => by_irq += n,
        }
    }
    let cpu_us = mean_us(&s.bursts).max(1.0);
    let think = [ms(quantile(&s.sleeps, 0.10)), ms(quantile(&s.sleeps, 0.90))];
    let wakes = by_thread + by_irq;
    if by_thread * 2 > wakes {
        Fitted {
            workload: json!({ "type": "server", "port": port, "proto": "udp", "cpu_us": cpu_us, "clients": 1, "think_ms": think }),
            why: format!("server: {by_thread} of {wakes} wake-ups from other threads"),
        }
    } else {
        Fitted {
            workload: json!({ "type": "interactive", "cpu_us": cpu_us, "think_ms": think }),
            why: format!("interactive: {by_irq} of {wakes} wake-ups from interrupt context"),
        }
    }
}

/// The fitted scenario, with the policies to run it under (ids = scheduler ids).
pub fn scenario(run: &RecordedRun, title: &str, schedulers: &[&str]) -> Value {
    let mut notes = Vec::new();
    let mut needs_driver = false;
    let mut port = 7000u16;
    let mut domains = run.domains_json(|domain, task, v| {
        port += 1;
        let f = fit_vcpu(run, v, port);
        needs_driver |= f.workload["type"] != "cpu";
        notes.push(format!("{domain}/{task}: {}", f.why));
        f.workload
    });
    if needs_driver {
        let taken: Vec<String> = run.model.domains.iter().map(|d| d.name.clone()).collect();
        let name = super::mapping::domain_name("dom0", &taken);
        // Last, so each recorded domain keeps its index, and with it its colour in the page, in the fitted runs.
        domains.push(json!({ "name": name, "role": "driver", "vcpus": 1, "weight": 256 }));
    }
    let duration_ms = run.end_ns.div_ceil(1_000_000).max(1);
    // A KVM host is the recorded one's twin: each domain's cgroup settings come from the mapping.
    let kvm_domains: serde_json::Map<String, Value> =
        run.model.domains.iter().map(|d| (d.name.clone(), d.settings.clone())).collect();
    let policies: Vec<Value> = schedulers
        .iter()
        .map(|s| match *s {
            // The recorded threads are processes, not vCPUs: nothing polls when they block.
            "kvm" => json!({
                "id": s, "label": fitted_label(s), "scheduler": s,
                "params": { "halt_poll_ns": 0, "domains": kvm_domains }
            }),
            _ => json!({ "id": s, "label": fitted_label(s), "scheduler": s }),
        })
        .collect();
    json!({
        "schema": 1,
        "id": "fitted",
        "title": format!("Fitted to {title}"),
        "summary": format!("The load of a recorded trace ({} pCPU{}, {} ms), each thread a task on its own vCPU: {}.",
            run.model.pcpus, if run.model.pcpus == 1 { "" } else { "s" }, duration_ms, notes.join("; ")),
        "source": format!("recorded trace {title}"),
        "seed": 1,
        "duration_ms": duration_ms,
        "warmup_ms": (duration_ms / 10).min(1000),
        "host": { "pcpus": run.model.pcpus },
        "domains": domains,
        "policies": policies,
    })
}

/// The recorded run's report followed by the fitted scenario's runs under `schedulers`, each with its domains'
/// `wake_to_run_ms` from its trace's state lanes (the same accumulator as the recording's).
pub fn compare(run: &RecordedRun, title: &str, schedulers: &[&str]) -> Result<Report, String> {
    let recorded = run.report(title)?;
    let fitted = Scenario::from_value(scenario(run, title, schedulers)).map_err(|e| e.problems.join("; "))?;
    let opts = RunOptions { deterministic: true, ..RunOptions::default() };
    let mut reports = Vec::new();
    let mut wakes = Vec::new();
    for p in &fitted.policies {
        let mut sim = Simulation::with_options(&fitted, &p.id, SimOptions::default()).map_err(|e| e.to_string())?;
        sim.run().map_err(|e| e.to_string())?;
        wakes.push((WakeToRun::of_run(&sim).map_err(|e| e.to_string())?, sim.meta()));
        reports.push(sim.run_report(&opts));
    }
    let mut runs = vec![recorded];
    for (mut v, (w, meta)) in attach_claims(&fitted, reports).into_iter().zip(wakes) {
        let names: Vec<String> = meta.domains.iter().map(|d| d.name.clone()).collect();
        add_wake_to_run(&mut v, &names, &w);
        runs.push(v);
    }
    Ok(Report { scenario: format!("recorded:{title}"), runs })
}

/// A fitted column's label: the scheduler as people name it, marked as a simulation of the recorded load.
fn fitted_label(scheduler: &str) -> String {
    let name = match scheduler {
        "credit" => "Xen Credit",
        "credit2" => "Xen Credit2",
        "sedf" => "SEDF",
        "bvt" => "BVT",
        "kvm" => "KVM on Linux",
        other => other,
    };
    format!("{name} (simulated)")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::recorded::replay::tests::fixture;
    use crate::recorded::{Mapping, ReadOptions};

    #[test]
    fn the_perf_fixture_fits_cpu_loops_and_a_request_server() {
        let text = fixture("perf/sched.perf-script.txt.gz");
        let mapping: Mapping = serde_json::from_slice(&fixture("perf/sched.mapping.json")).unwrap();
        let run = RecordedRun::from_bytes(&text, &ReadOptions::default(), Some(mapping)).unwrap();
        let sc = scenario(&run, "sched", &["credit", "credit2"]);
        let kinds: Vec<(String, String)> = sc["domains"]
            .as_array()
            .unwrap()
            .iter()
            .flat_map(|d| d["tasks"].as_array().cloned().unwrap_or_default())
            .map(|t| (t["name"].as_str().unwrap().to_string(), t["workload"]["type"].as_str().unwrap().to_string()))
            .collect();
        let kind = |prefix: &str| kinds.iter().find(|(n, _)| n.starts_with(prefix)).map(|(_, k)| k.as_str());
        assert_eq!(kind("burn-hi"), Some("cpu"), "{kinds:?}");
        assert_eq!(kind("burn-lo"), Some("cpu"));
        assert_eq!(kind("udp-echo"), Some("server"), "{}", sc["summary"]);
        Scenario::from_value(sc).expect("the fitted scenario is valid");
        // Under the proposed mapping, a thread of another process that hardly ran (runnable from its first record
        // on, woken once) is no CPU loop.
        let run = RecordedRun::from_bytes(&text, &ReadOptions::default(), None).unwrap();
        let sc = scenario(&run, "sched", &["credit"]);
        let brief = sc["domains"].as_array().unwrap().iter().find(|d| d["name"] == "tokio-rt-worker").unwrap();
        assert_ne!(brief["tasks"][0]["workload"]["type"], "cpu", "{}", sc["summary"]);
        Scenario::from_value(sc).expect("the fitted scenario is valid");
    }
}
