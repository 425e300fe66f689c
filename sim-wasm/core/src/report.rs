//! The report of DESIGN.md section 5: one JSON object per scenario with a run object per policy. Keys that do not
//! apply to a domain (no server, no events) are omitted, never faked.

use crate::claims;
use crate::metrics::{fair_shares, jain, round6, Summary};
use crate::scenario::{Role, Scenario};
use crate::sim::{SimError, SimOptions, Simulation};
use crate::trace::LagSeries;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// How to run a scenario.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Omit wall-clock fields so the report is byte-identical across runs and platforms.
    pub deterministic: bool,
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// Overrides the scenario's duration [ms].
    pub duration_ms: Option<u64>,
}

#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub scenario: String,
    pub runs: Vec<Value>,
}

/// Applies `--seed` / `--duration-ms` overrides, re-validating the result.
pub fn with_overrides(sc: &Scenario, opts: &RunOptions) -> Result<Scenario, String> {
    let mut s = sc.clone();
    if let Some(seed) = opts.seed {
        s.seed = seed;
    }
    if let Some(d) = opts.duration_ms {
        if d == 0 || d > 3_600_000 {
            return Err(format!("--duration-ms: {d} is outside 1..=3600000"));
        }
        if d <= s.warmup_ms {
            return Err(format!("--duration-ms: {d} is not above the scenario's warmup_ms ({})", s.warmup_ms));
        }
        s.duration_ms = d;
    }
    Ok(s)
}

/// Runs the named policies (all when `policies` is empty) and builds the report, claims included.
pub fn run_scenario(sc: &Scenario, policies: &[String], opts: &RunOptions) -> Result<Report, SimError> {
    let sc = with_overrides(sc, opts).map_err(SimError::Options)?;
    let ids: Vec<String> =
        if policies.is_empty() { sc.policies.iter().map(|p| p.id.clone()).collect() } else { policies.to_vec() };
    let mut runs = Vec::with_capacity(ids.len());
    for id in &ids {
        // Reports never read the trace: skip recording it.
        let mut sim = Simulation::with_options(&sc, id, SimOptions { trace: false, ..SimOptions::default() })?;
        sim.run()?;
        runs.push(sim.report(opts));
    }
    attach_claims(&sc, &mut runs);
    Ok(Report { scenario: sc.id.clone(), runs })
}

/// Evaluates the scenario's claims over all runs and puts each into the run of the policy it is about.
pub fn attach_claims(sc: &Scenario, runs: &mut [Value]) {
    let results = claims::evaluate(sc, runs);
    for run in runs.iter_mut() {
        let id = run["policy"].as_str().unwrap_or_default().to_string();
        let mine: Vec<Value> = results
            .iter()
            .filter(|r| r.policy.as_deref() == Some(id.as_str()))
            .map(|r| serde_json::to_value(r).expect("claim result serialises"))
            .collect();
        if let Some(obj) = run.as_object_mut() {
            obj.insert("claims".into(), Value::Array(mine));
        }
    }
}

pub fn to_json_string(r: &Report) -> String {
    serde_json::to_string_pretty(r).expect("report serialises")
}

/// The report as CSV: one row per (policy, domain).
pub fn to_csv(r: &Report) -> String {
    let mut out = String::from(
        "scenario,policy,domain,cpu_ms,cpu_share,fair_share,context_switches,response_count,response_mean_ms,response_p99_ms,event_latency_mean_ms,event_latency_p99_ms,requests_per_s,progress_per_s\n",
    );
    let num = |v: &Value| v.as_f64().map(|x| x.to_string()).unwrap_or_default();
    for run in &r.runs {
        let policy = run["policy"].as_str().unwrap_or_default();
        if let Some(domains) = run["domains"].as_object() {
            for (name, d) in domains {
                let cols = [
                    num(&d["cpu_ms"]),
                    num(&d["cpu_share"]),
                    num(&d["fair_share"]),
                    num(&d["context_switches"]),
                    num(&d["response_ms"]["count"]),
                    num(&d["response_ms"]["mean"]),
                    num(&d["response_ms"]["p99"]),
                    num(&d["event_latency_ms"]["mean"]),
                    num(&d["event_latency_ms"]["p99"]),
                    num(&d["throughput"]["requests_per_s"]),
                    num(&d["throughput"]["progress_per_s"]),
                ];
                out.push_str(&format!("{},{},{},{}\n", r.scenario, policy, name, cols.join(",")));
            }
        }
    }
    out
}

/// Each domain's CPU share over the measured window and what it was entitled to.
struct Entitlements {
    /// Weighted max-min share of the host if every domain were busy.
    fair: Vec<f64>,
    /// The same with idle domains bounded by what they used (work-conserving).
    wc_fair: Vec<f64>,
    /// Runnable at least 99% of the window.
    busy: Vec<bool>,
    /// CPU used over the host's capacity.
    shares: Vec<f64>,
}

impl Simulation {
    /// Shares and entitlements over the measured window (see [`Entitlements`]).
    fn entitlements(&self) -> Entitlements {
        let measured_ns = (self.end - self.warmup).0.max(1);
        let pcpus = self.host.pcpus.len() as f64;
        let host_ns = measured_ns as f64 * pcpus;
        let weights: Vec<u32> = self.host.dom_info.iter().map(|d| d.weight).collect();
        let bounds: Vec<f64> = self
            .host
            .dom_info
            .iter()
            .map(|d| {
                let v = d.vcpus.len() as f64;
                if d.cap_pct > 0 {
                    v.min(f64::from(d.cap_pct) / 100.0)
                } else {
                    v
                }
            })
            .collect();
        let fair = fair_shares(pcpus, &weights, &bounds);

        // Which domains stayed busy (runnable at least 99% of the time): fairness is judged over them, against
        // the work-conserving entitlement in which idle domains keep only what they used.
        let busy: Vec<bool> = self
            .host
            .dom_info
            .iter()
            .enumerate()
            .map(|(i, info)| {
                (self.measure.dom_metrics[i].blocked_ns as f64) <= 0.01 * measured_ns as f64 * info.vcpus.len() as f64
            })
            .collect();
        let shares: Vec<f64> = self.measure.dom_metrics.iter().map(|m| m.cpu_ns as f64 / host_ns).collect();
        let wc_bounds: Vec<f64> =
            bounds.iter().enumerate().map(|(i, &b)| if busy[i] { b } else { b.min(shares[i] * pcpus) }).collect();
        let wc_fair = fair_shares(pcpus, &weights, &wc_bounds);
        Entitlements { fair, wc_fair, busy, shares }
    }

    /// Paper 001's Lag (equation 1) of every vCPU over the measured window, at the usage record's bucket
    /// boundaries. w(V_i) is the domain's work-conserving entitlement (its weighted max-min share when it stayed
    /// busy, what it used otherwise), split equally among its vCPUs as the paper does.
    pub fn lag_series(&self) -> LagSeries {
        let e = self.entitlements();
        let pcpus = self.host.pcpus.len() as f64;
        let rates: Vec<f64> = self
            .host
            .vcpus
            .iter()
            .map(|v| e.wc_fair[v.dom.0] * pcpus / self.host.dom_info[v.dom.0].vcpus.len().max(1) as f64)
            .collect();
        self.measure.usage.lag(&rates, self.warmup.0, self.end.0)
    }

    /// The run object of the report (claims are attached by [`run_scenario`], which sees every run).
    pub fn report(&self, opts: &RunOptions) -> Value {
        let measured_ns = (self.end - self.warmup).0.max(1);
        let measured_s = measured_ns as f64 / 1e9;
        let pcpus = self.host.pcpus.len() as f64;
        let host_ns = measured_ns as f64 * pcpus;
        let Entitlements { fair, wc_fair, busy, shares } = self.entitlements();
        let lags = self.lag_series();

        let mut domains = Map::new();
        let mut ratios = Vec::new();
        let mut max_lag_ms: f64 = 0.0;
        for (i, info) in self.host.dom_info.iter().enumerate() {
            let m = &self.measure.dom_metrics[i];
            let share = shares[i];
            let mut d = Map::new();
            d.insert("cpu_ms".into(), json!(round6(m.cpu_ns as f64 / 1e6)));
            d.insert("cpu_share".into(), json!(round6(share)));
            d.insert("fair_share".into(), json!(round6(fair[i])));
            d.insert("context_switches".into(), json!(m.context_switches));
            if let Some(s) = Summary::of(&m.responses_ns) {
                d.insert("response_ms".into(), serde_json::to_value(s).expect("summary"));
            }
            if let Some(s) = Summary::of(&m.event_latency_ns) {
                d.insert("event_latency_ms".into(), serde_json::to_value(s).expect("summary"));
            }
            let kinds = &self.host.kinds[i];
            let mut thr = Map::new();
            if kinds.server {
                thr.insert("requests_per_s".into(), json!(round6(m.requests_served as f64 / measured_s)));
            }
            if kinds.io_loop {
                thr.insert("io_per_s".into(), json!(round6(m.io_done as f64 / measured_s)));
            }
            if kinds.disk_reader {
                let blocks = m.io_done as f64 / measured_s;
                thr.insert("blocks_per_s".into(), json!(round6(blocks)));
            }
            if kinds.bulk || kinds.stream || kinds.disk_reader {
                let bits = (m.bytes_in + m.bytes_out) as f64 * 8.0;
                thr.insert("mbps".into(), json!(round6(bits / 1e6 / measured_s)));
            }
            let cpu_tasks: Vec<usize> = (0..self.guests.tasks.len())
                .filter(|&k| {
                    self.guests.tasks[k].dom.0 == i && matches!(self.guests.tasks[k].work, crate::model::Work::Cpu)
                })
                .collect();
            if kinds.pipe {
                thr.insert("messages_per_s".into(), json!(round6(m.messages as f64 / measured_s)));
            }
            if !cpu_tasks.is_empty() {
                // Progress of busy loops: CPU-ms of work done per second of measured time (hypervisor time spent
                // tracking switches to them is not their work).
                let ns: u64 = cpu_tasks
                    .iter()
                    .map(|&k| {
                        self.measure.task_metrics[k].cpu_ns.saturating_sub(self.measure.task_metrics[k].tracking_ns)
                    })
                    .sum();
                thr.insert("progress_per_s".into(), json!(round6(ns as f64 / 1e6 / measured_s)));
            }
            if !thr.is_empty() {
                d.insert("throughput".into(), Value::Object(thr));
            }
            if let Some(s) = Summary::of(&m.io_latency_ns) {
                d.insert("io_latency_ms".into(), serde_json::to_value(s).expect("summary"));
            }
            if kinds.stream {
                d.insert("underruns".into(), json!(m.underruns));
            }
            if m.tracking_ns > 0 {
                d.insert("tracking_ms".into(), json!(round6(m.tracking_ns as f64 / 1e6)));
            }
            if m.dropped > 0 {
                d.insert("dropped".into(), json!(m.dropped));
            }
            d.insert("busy".into(), json!(busy[i]));
            if busy[i] && wc_fair[i] > 0.0 {
                ratios.push(share / wc_fair[i]);
                // The paper's per-vCPU Lag (equation 1), its largest magnitude at any time in the window.
                let worst = info
                    .vcpus
                    .iter()
                    .flat_map(|v| lags.lag_ns[v.0].iter().map(|l| l.unsigned_abs()))
                    .max()
                    .unwrap_or(0);
                let worst_ms = round6(worst as f64 / 1e6);
                max_lag_ms = max_lag_ms.max(worst_ms);
                d.insert("max_abs_lag_ms".into(), json!(worst_ms));
            }
            domains.insert(info.name.clone(), Value::Object(d));
        }

        let mut tasks = Map::new();
        for (k, t) in self.guests.tasks.iter().enumerate() {
            let path = format!("{}/{}", self.host.dom_info[t.dom.0].name, t.name);
            let mut t = Map::new();
            t.insert("cpu_ms".into(), json!(round6(self.measure.task_metrics[k].cpu_ns as f64 / 1e6)));
            if matches!(self.guests.tasks[k].work, crate::model::Work::IoLoop { .. }) {
                t.insert("io_per_s".into(), json!(round6(self.measure.task_metrics[k].io_done as f64 / measured_s)));
            }
            if let Some(s) = Summary::of(&self.measure.task_metrics[k].responses_ns) {
                t.insert("response_ms".into(), serde_json::to_value(s).expect("summary"));
            }
            if let Some((belief, io_bound)) = self.task_belief(crate::model::TaskId(k)) {
                t.insert("belief".into(), json!(belief));
                t.insert("io_bound".into(), json!(io_bound));
                if let Some(at) = self.measure.task_metrics[k].inferred_io_at {
                    let after = at.saturating_sub(self.measure.last_change_at);
                    t.insert("io_bound_after_ms".into(), json!(round6(after.as_ms_f64())));
                }
            }
            tasks.insert(path, Value::Object(t));
        }

        let mut jobs = Map::new();
        for g in &self.guests.groups {
            let mut j = Map::new();
            if let Some(done) = g.done_at {
                j.insert("makespan_ms".into(), json!(round6(done.as_ms_f64())));
            }
            j.insert("phases_done".into(), json!(g.phases_done));
            j.insert("spin_ms".into(), json!(round6(g.spin_ns as f64 / 1e6)));
            // Per thread, by the vCPU it runs on: where the spinning happened.
            let by_vcpu: Map<String, Value> = g
                .members
                .iter()
                .zip(&g.spin_ns_by_member)
                .map(|(m, &ns)| {
                    let v = self.guests.tasks[m.0].vcpu;
                    (self.host.vcpus[v.0].name.clone(), json!(round6(ns as f64 / 1e6)))
                })
                .collect();
            j.insert("spin_ms_by_vcpu".into(), Value::Object(by_vcpu));
            jobs.insert(g.key.clone(), Value::Object(j));
        }

        let mut fairness = Map::new();
        if let Some(j) = jain(&ratios) {
            fairness.insert("jain".into(), json!(round6(j)));
            fairness.insert("max_abs_lag_ms".into(), json!(round6(max_lag_ms)));
        }

        let mut run = Map::new();
        run.insert("policy".into(), json!(self.policy_id));
        run.insert("scheduler".into(), json!(self.scenario.policy(&self.policy_id).map(|p| p.scheduler.clone())));
        run.insert("sim_ms".into(), json!(self.now.0 / 1_000_000));
        run.insert("events".into(), json!(self.events));
        if !opts.deterministic {
            run.insert("wall_ms".into(), json!(round6(self.measure.wall_ns as f64 / 1e6)));
        }
        // Context switches host-wide, the count paper 004 (4.5) took from XenMon: every time a pCPU switched to a
        // different vCPU (from idle or from another vCPU) in the measured window; the domains' counts summed.
        let switches: u64 = self.measure.dom_metrics.iter().map(|m| m.context_switches).sum();
        run.insert(
            "host".into(),
            json!({ "busy_share": round6(self.measure.busy_ns as f64 / host_ns), "context_switches": switches }),
        );
        run.insert("domains".into(), Value::Object(domains));
        run.insert("tasks".into(), Value::Object(tasks));
        run.insert("fairness".into(), Value::Object(fairness));
        if !jobs.is_empty() {
            run.insert("jobs".into(), Value::Object(jobs));
        }
        if let Some((count, hits)) = self.partial_boosts() {
            let mut pb = json!({ "count": count, "hits": hits });
            // With no boost the ratio does not exist (0/0): omitted, not reported as 0.
            if count > 0 {
                pb["pbhr"] = json!(round6(hits as f64 / count as f64));
            }
            run.insert("partial_boosts".into(), pb);
        }
        if self.scenario.domains.iter().any(|d| d.role == Role::Driver) {
            // Which driver domains exist is part of the run's shape, for the UI.
            let drivers: Vec<&str> =
                self.scenario.domains.iter().filter(|d| d.role == Role::Driver).map(|d| d.name.as_str()).collect();
            run.insert("drivers".into(), json!(drivers));
        }
        Value::Object(run)
    }
}
