//! The report: one JSON object per scenario with a run object per policy. Keys that do not
//! apply to a domain (no server, no events) are omitted, never faked.
//!
//! The run object is typed ([`RunReport`] and the structs below); the TypeScript side's types are generated from
//! them (see `bindings.rs`). serde_json keeps key order here (its `preserve_order` feature), so the JSON keys come
//! out in field declaration order: fields are declared in the order the report has always printed them.

use crate::claims::{self, ClaimResult};
use crate::metrics::{fair_shares, jain, round6, Summary};
use crate::policy::ShareBasis;
use crate::scenario::{Role, Scenario};
use crate::sim::{SimError, SimOptions, Simulation};
use crate::trace::LagSeries;
use indexmap::IndexMap;
use serde::Serialize;
use serde_json::Value;

/// How to run a scenario.
#[derive(Debug, Clone, Default)]
pub struct RunOptions {
    /// Omit wall-clock fields so the report is byte-identical across runs and platforms.
    pub deterministic: bool,
    /// Overrides the scenario's seed.
    pub seed: Option<u64>,
    /// Overrides the scenario's duration [ms].
    pub duration_ms: Option<u64>,
    /// Stop each run after this many events (`--max-events`), whatever the estimate said.
    pub max_events: Option<u64>,
}

/// What `schedsim run` prints: the scenario's run objects, claims attached.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Report {
    pub scenario: String,
    /// [`RunReport`]s as JSON objects: claims, multi-seed statistics and sweeps address them by metric path.
    #[cfg_attr(test, ts(as = "Vec<RunReport>"))]
    pub runs: Vec<Value>,
}

/// One policy's run of the scenario (an element of the report's `runs`).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct RunReport {
    /// Policy id (of the scenario's `policies`).
    pub policy: String,
    /// Its scheduler id; null for a policy the scenario does not list (a run of it cannot be built).
    #[cfg_attr(test, ts(optional = false))]
    pub scheduler: Option<String>,
    /// Simulated time at the end, whole [ms].
    pub sim_ms: u64,
    /// Events processed.
    pub events: u64,
    /// Wall-clock time the run took [ms]; omitted in deterministic reports.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wall_ms: Option<f64>,
    pub host: HostReport,
    /// By domain name, in scenario order.
    pub domains: IndexMap<String, DomainReport>,
    /// By "DOMAIN/TASK", in scenario order.
    pub tasks: IndexMap<String, TaskReport>,
    pub fairness: Fairness,
    /// Gang jobs by key (paper 001); omitted when the scenario has none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jobs: Option<IndexMap<String, JobReport>>,
    /// Partial boosts of task-aware scheduling (paper 000); omitted for policies that do not boost partially.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub partial_boosts: Option<PartialBoosts>,
    /// Names of the driver domains, for the UI; omitted when there are none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub drivers: Option<Vec<String>>,
    /// The scenario's claims about this policy, once judged over every run ([`attach_claims`]).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub claims: Option<Vec<ClaimResult>>,
}

/// The whole host over the measured window.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct HostReport {
    /// Fraction of pCPU time spent running vCPUs (0..1).
    pub busy_share: f64,
    /// Switches to a different vCPU on any pCPU (the domains' counts summed).
    pub context_switches: u64,
    /// Time the sibling threads of one core ran vCPUs of different domains at once, summed over cores [ms]; only
    /// on SMT hosts (`threads_per_core` above 1). 0 by construction under `sched_gran` "core" or "socket".
    #[serde(skip_serializing_if = "Option::is_none")]
    pub core_shared_ms: Option<f64>,
    /// Thread time spent idle while a sibling thread of its core ran a vCPU and some runnable vCPU waited for a
    /// pCPU, summed over threads [ms]: the capacity core scheduling leaves unused; only on SMT hosts.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub forced_idle_ms: Option<f64>,
}

/// One domain over the measured window.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct DomainReport {
    /// CPU time used [ms].
    pub cpu_ms: f64,
    /// CPU used over the host's capacity (0..1).
    pub cpu_share: f64,
    /// Weighted max-min share of the host by domain weight if every domain were busy (0..1), whatever the policy.
    pub fair_share: f64,
    /// Its entitlement under the rule of the policy that ran (`fairness.rule`), if every domain were busy (0..1):
    /// by domain weight (Credit 3.x, the hybrid's per-VM weight), by weight x vCPUs (Credit 4.x, Credit2), or the
    /// CPU its reservations guarantee (SEDF).
    pub entitled_share: f64,
    /// Times a pCPU switched to one of its vCPUs.
    pub context_switches: u64,
    /// Times one of its vCPUs ran on another pCPU than the one it last ran on.
    pub migrations: u64,
    /// Request response times [ms].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_ms: Option<Summary>,
    /// Event-channel notification to delivery [ms].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub event_latency_ms: Option<Summary>,
    /// Omitted when none of its workloads has a throughput.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throughput: Option<Throughput>,
    /// I/O operation latencies [ms].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_latency_ms: Option<Summary>,
    /// Stream under-runs; only for domains with a stream: a client's buffer running dry while it played (in the
    /// window), and each client whose playback did not start within its start-up budget (twice the time its own
    /// bit rate takes to fill the half buffer playback starts at), or never started.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub underruns: Option<u64>,
    /// Stream clients that never started playback in the run; only for domains with a stream.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub stalled_clients: Option<u64>,
    /// Hypervisor time spent tracking switches to its tasks (task-aware scheduling) [ms]; omitted when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tracking_ms: Option<f64>,
    /// Packets dropped; omitted when none.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dropped: Option<u64>,
    /// Time its cgroup's bandwidth limit (`cpu.max`) kept it off the host [ms] (cgroup `cpu.stat`
    /// `throttled_usec`); only under a policy with such limits, for a domain that has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub throttled_ms: Option<f64>,
    /// Periods in which its limit throttled it (`cpu.stat` `nr_throttled`); with `throttled_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub nr_throttled: Option<u64>,
    /// Host CPU its halting vCPUs spent polling before they blocked [ms] (KVM halt polling: it counts as the
    /// domain's CPU time, `cpu_ms` includes it); only where the host polls.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halt_poll_ms: Option<f64>,
    /// Halts that polled (KVM's `halt_attempted_poll`); with `halt_poll_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halt_attempted_poll: Option<u64>,
    /// Polled halts that a wake-up ended during the poll, so the vCPU ran again without leaving its pCPU
    /// (`halt_successful_poll`); with `halt_poll_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub halt_successful_poll: Option<u64>,
    /// Runnable at least 99% of the window: fairness is judged over busy domains.
    pub busy: bool,
    /// Largest |Lag| (paper 001, equation 1) of its vCPUs over the window [ms]; only for busy domains.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_abs_lag_ms: Option<f64>,
    /// Critical sections its spinlock threads completed per second [1/s]; only for a domain with a spinlock job.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lock_acquisitions_per_s: Option<f64>,
    /// CPU its threads burnt spinning, for its lock or for TLB-shootdown acknowledgements [ms]; only for a domain
    /// with a spinlock job or a shootdown thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub spin_ms: Option<f64>,
    /// Time its shootdowns waited from their IPIs to the last acknowledgement, summed [ms]; only for a domain with a
    /// shootdown thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ipi_wait_ms: Option<f64>,
    /// Shootdowns completed per second [1/s]; with `ipi_wait_ms`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub shootdowns_per_s: Option<f64>,
    /// Pause-loop exits of its vCPUs (KVM with `ple`); only for a domain with a spinlock job or a shootdown thread.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ple_exits: Option<u64>,
}

/// A domain's throughput; each key only for the workloads that have it.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct Throughput {
    /// Requests served [1/s].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub requests_per_s: Option<f64>,
    /// I/O loop operations done [1/s].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_per_s: Option<f64>,
    /// Disk blocks read [1/s].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blocks_per_s: Option<f64>,
    /// Network or disk bytes in and out [Mbit/s].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mbps: Option<f64>,
    /// Pipe messages [1/s].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub messages_per_s: Option<f64>,
    /// Busy loops' work: CPU time done per second of measured time [ms/s].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub progress_per_s: Option<f64>,
}

/// One guest task over the measured window.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct TaskReport {
    /// [ms]
    pub cpu_ms: f64,
    /// I/O loop operations [1/s]; only for I/O loops.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_per_s: Option<f64>,
    /// Response times [ms].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub response_ms: Option<Summary>,
    /// The policy's degree of belief that it is I/O-bound at the end (paper 000 3.3); policies that infer only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub belief: Option<i64>,
    /// Inferred I/O-bound at the end; policies that infer only.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_bound: Option<bool>,
    /// How long after the last scenario change it was first inferred I/O-bound [ms].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_bound_after_ms: Option<f64>,
}

/// One gang job (paper 001).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct JobReport {
    /// When it finished [ms]; omitted when it did not.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub makespan_ms: Option<f64>,
    pub phases_done: u32,
    /// Time its threads spun waiting for each other [ms].
    pub spin_ms: f64,
    /// The same per thread, keyed by the vCPU the thread runs on (`dom.v0`) [ms].
    pub spin_ms_by_vcpu: IndexMap<String, f64>,
}

/// Fairness over the busy domains; the figures are omitted when no domain stayed busy.
#[derive(Debug, Clone, Default, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct Fairness {
    /// Jain's index of their share over their work-conserving entitlement by `basis`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jain: Option<f64>,
    /// Largest |Lag| of any of their vCPUs, entitled by `basis` [ms].
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_abs_lag_ms: Option<f64>,
    /// The rule `jain` and `max_abs_lag_ms` entitle by: always `domain_weight` (each domain's `fair_share`).
    pub basis: &'static str,
    /// The rule of the policy that ran (each domain's `entitled_share`): `domain_weight`, `vcpu_weight` or
    /// `reservation`.
    pub rule: &'static str,
    /// Jain's index against the policy's own rule; omitted for reservations (a floor, not a division of the host).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub jain_by_rule: Option<f64>,
    /// Largest |Lag| against the policy's own rule [ms]; omitted as `jain_by_rule` is.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_abs_lag_ms_by_rule: Option<f64>,
}

/// Partial boosts in the measured window (paper 000).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct PartialBoosts {
    pub count: u64,
    /// Boosts whose vCPU then ran the I/O-bound task.
    pub hits: u64,
    /// Partial boost hit ratio, hits / count; omitted with no boost (0/0 does not exist).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub pbhr: Option<f64>,
}

/// Every vCPU's Lag (paper 001, equation 1) over the measured window, for the Lag chart.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct LagReport {
    pub vcpus: Vec<VcpuLag>,
}

/// One vCPU's Lag at the usage record's bucket boundaries; positive: behind its share.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct VcpuLag {
    /// "DOMAIN.vN".
    pub name: String,
    /// Its domain's name.
    pub domain: String,
    /// [ns]
    pub t_ns: Vec<u64>,
    /// [ns], one per `t_ns`.
    pub lag_ns: Vec<i64>,
}

impl RunReport {
    /// The run as a JSON object, the form claims and statistics read by metric path.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).expect("run report serialises")
    }
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
        // A change the run would never reach is refused here as it is in the file, not silently dropped.
        if let Some((i, c)) = s.changes.iter().enumerate().find(|(_, c)| c.at_ms >= d) {
            return Err(format!(
                "--duration-ms: {d} is not after changes[{i}].at_ms ({}), so that change would never happen",
                c.at_ms
            ));
        }
        s.duration_ms = d;
    }
    Ok(s)
}

/// Runs the named policies (all when `policies` is empty) and builds the report, claims included.
pub fn run_scenario(sc: &Scenario, policies: &[String], opts: &RunOptions) -> Result<Report, SimError> {
    run_scenario_observed(sc, policies, opts, &mut |_, _| {})
}

/// [`run_scenario`], telling `progress` (policy index, fraction of its simulated time done) as each run advances,
/// so a front end can show progress on a long run.
pub fn run_scenario_observed(
    sc: &Scenario,
    policies: &[String],
    opts: &RunOptions,
    progress: &mut dyn FnMut(usize, f64),
) -> Result<Report, SimError> {
    let sc = with_overrides(sc, opts).map_err(SimError::Options)?;
    let ids: Vec<String> =
        if policies.is_empty() { sc.policies.iter().map(|p| p.id.clone()).collect() } else { policies.to_vec() };
    let mut runs = Vec::with_capacity(ids.len());
    for (i, id) in ids.iter().enumerate() {
        // Reports never read the trace: skip recording it.
        let sim_opts = SimOptions { trace: false, max_events: opts.max_events, ..SimOptions::default() };
        let mut sim = Simulation::with_options(&sc, id, sim_opts)?;
        let t0 = crate::time::WallClock::start();
        while !sim.step(100_000)? {
            progress(i, sim.progress());
        }
        sim.add_wall_ns(t0.elapsed_ns());
        progress(i, 1.0);
        runs.push(sim.run_report(opts));
    }
    Ok(Report { scenario: sc.id.clone(), runs: attach_claims(&sc, runs) })
}

/// Evaluates the scenario's claims over all runs, gives each run the claims about its policy, and returns the
/// runs as the JSON objects of [`Report::runs`].
pub fn attach_claims(sc: &Scenario, mut runs: Vec<RunReport>) -> Vec<Value> {
    let values: Vec<Value> = runs.iter().map(RunReport::to_value).collect();
    let results = claims::evaluate(sc, &values);
    for run in &mut runs {
        let mine = results.iter().filter(|r| r.policy.as_deref() == Some(run.policy.as_str())).cloned().collect();
        run.claims = Some(mine);
    }
    runs.iter().map(RunReport::to_value).collect()
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
    /// The policy's own rule ([`ShareBasis`]) and each domain's share of the host under it if every domain were
    /// busy; for a weight rule also its work-conserving version (None for reservations: a floor, not a division).
    rule: ShareBasis,
    entitled: Vec<f64>,
    wc_entitled: Option<Vec<f64>>,
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

        let rule = self.policy.share_rule();
        let (entitled, wc_entitled) = match &rule {
            ShareBasis::DomainWeight => (fair.clone(), Some(wc_fair.clone())),
            ShareBasis::VcpuWeight => {
                let w: Vec<u32> =
                    self.host.dom_info.iter().map(|d| d.weight.saturating_mul(d.vcpus.len() as u32)).collect();
                (fair_shares(pcpus, &w, &bounds), Some(fair_shares(pcpus, &w, &wc_bounds)))
            }
            ShareBasis::Reserved(r) => {
                let e = (0..weights.len()).map(|i| r.get(i).copied().unwrap_or(0.0).min(bounds[i]) / pcpus).collect();
                (e, None)
            }
        };
        Entitlements { fair, wc_fair, busy, shares, rule, entitled, wc_entitled }
    }

    /// Paper 001's Lag (equation 1) of every vCPU over the measured window, at the usage record's bucket
    /// boundaries. w(V_i) is the domain's work-conserving entitlement (its weighted max-min share when it stayed
    /// busy, what it used otherwise), split equally among its vCPUs as the paper does.
    pub fn lag_series(&self) -> LagSeries {
        self.lag_against(&self.entitlements().wc_fair)
    }

    /// Lag with w(V_i) from `wc_share`, each domain's work-conserving share of the host.
    fn lag_against(&self, wc_share: &[f64]) -> LagSeries {
        let pcpus = self.host.pcpus.len() as f64;
        let rates: Vec<f64> = self
            .host
            .vcpus
            .iter()
            .map(|v| wc_share[v.dom.0] * pcpus / self.host.dom_info[v.dom.0].vcpus.len().max(1) as f64)
            .collect();
        self.measure.usage.lag(&rates, self.warmup.0, self.end.0)
    }

    /// Every vCPU's Lag series ([`Simulation::lag_series`]) with its name and domain, for the page.
    pub fn lag_report(&self) -> LagReport {
        let lags = self.lag_series();
        let meta = self.meta();
        let vcpus = meta
            .vcpus
            .iter()
            .zip(lags.lag_ns)
            .map(|(m, lag_ns)| VcpuLag {
                name: m.name.clone(),
                domain: meta.domains[m.domain].name.clone(),
                t_ns: lags.t_ns.clone(),
                lag_ns,
            })
            .collect();
        LagReport { vcpus }
    }

    /// The run object as JSON (see [`Simulation::run_report`]).
    pub fn report(&self, opts: &RunOptions) -> Value {
        self.run_report(opts).to_value()
    }

    /// The run object of the report (claims are attached by [`run_scenario`], which sees every run).
    pub fn run_report(&self, opts: &RunOptions) -> RunReport {
        let measured_ns = (self.end - self.warmup).0.max(1);
        let measured_s = measured_ns as f64 / 1e9;
        let pcpus = self.host.pcpus.len() as f64;
        let host_ns = measured_ns as f64 * pcpus;
        let Entitlements { fair, wc_fair, busy, shares, rule, entitled, wc_entitled } = self.entitlements();
        let lags = self.lag_against(&wc_fair);
        // The same judged by the policy's own rule, when it divides the host by weight.
        let rule_lags = wc_entitled.as_ref().map(|wc| self.lag_against(wc));
        let mut rule_ratios = Vec::new();
        let mut rule_max_lag_ms: f64 = 0.0;
        let per_s = |n: u64| round6(n as f64 / measured_s);
        let smt = self.host.topology.smt();

        let mut domains = IndexMap::new();
        let mut ratios = Vec::new();
        let mut max_lag_ms: f64 = 0.0;
        for (i, info) in self.host.dom_info.iter().enumerate() {
            let m = &self.measure.dom_metrics[i];
            let share = shares[i];
            let kinds = &self.host.kinds[i];
            let cpu_tasks: Vec<usize> = (0..self.guests.tasks.len())
                .filter(|&k| {
                    self.guests.tasks[k].dom.0 == i && matches!(self.guests.tasks[k].work, crate::model::Work::Cpu)
                })
                .collect();
            let throughput = Throughput {
                requests_per_s: kinds.server.then(|| per_s(m.requests_served)),
                io_per_s: kinds.io_loop.then(|| per_s(m.io_done)),
                blocks_per_s: kinds.disk_reader.then(|| per_s(m.io_done)),
                mbps: (kinds.bulk || kinds.stream || kinds.disk_reader).then(|| {
                    let bits = (m.bytes_in + m.bytes_out) as f64 * 8.0;
                    round6(bits / 1e6 / measured_s)
                }),
                messages_per_s: kinds.pipe.then(|| per_s(m.messages)),
                // Progress of busy loops: CPU-ms of work done per second of measured time (hypervisor time spent
                // tracking switches to them is not their work).
                progress_per_s: (!cpu_tasks.is_empty()).then(|| {
                    let ns: u64 = cpu_tasks
                        .iter()
                        .map(|&k| {
                            let tm = &self.measure.task_metrics[k];
                            // Nor is the time a busy sibling thread took from it (SMT).
                            tm.cpu_ns.saturating_sub(tm.tracking_ns).saturating_sub(self.smt_lost_ns(k))
                        })
                        .sum();
                    round6(ns as f64 / 1e6 / measured_s)
                }),
            };
            let startup = if kinds.stream { self.stream_startup(crate::model::DomId(i)) } else { (0, 0) };
            let max_abs_lag_ms = (busy[i] && wc_fair[i] > 0.0).then(|| {
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
                worst_ms
            });
            if let (Some(wc), Some(rl)) = (&wc_entitled, &rule_lags) {
                if busy[i] && wc[i] > 0.0 {
                    rule_ratios.push(share / wc[i]);
                    let worst = info
                        .vcpus
                        .iter()
                        .flat_map(|v| rl.lag_ns[v.0].iter().map(|l| l.unsigned_abs()))
                        .max()
                        .unwrap_or(0);
                    rule_max_lag_ms = rule_max_lag_ms.max(round6(worst as f64 / 1e6));
                }
            }
            let times = self.domain_times(i);
            let d = DomainReport {
                cpu_ms: round6(m.cpu_ns as f64 / 1e6),
                cpu_share: round6(share),
                fair_share: round6(fair[i]),
                entitled_share: round6(entitled[i]),
                context_switches: m.context_switches,
                migrations: m.migrations,
                response_ms: Summary::of(&m.responses_ns),
                event_latency_ms: Summary::of(&m.event_latency_ns),
                throughput: (throughput != Throughput::default()).then_some(throughput),
                io_latency_ms: Summary::of(&m.io_latency_ns),
                underruns: kinds.stream.then(|| m.underruns + startup.0),
                stalled_clients: kinds.stream.then_some(startup.1),
                tracking_ms: (m.tracking_ns > 0).then(|| round6(m.tracking_ns as f64 / 1e6)),
                dropped: (m.dropped > 0).then_some(m.dropped),
                throttled_ms: times.filter(|t| t.limited).map(|t| round6(t.throttled_ns as f64 / 1e6)),
                nr_throttled: times.filter(|t| t.limited).map(|t| t.nr_throttled),
                halt_poll_ms: times.filter(|t| t.polls).map(|t| round6(t.halt_poll_ns as f64 / 1e6)),
                halt_attempted_poll: times.filter(|t| t.polls).map(|t| t.halt_attempted_poll),
                halt_successful_poll: times.filter(|t| t.polls).map(|t| t.halt_successful_poll),
                busy: busy[i],
                max_abs_lag_ms,
                lock_acquisitions_per_s: kinds.lock.then(|| per_s(m.lock_acquisitions)),
                spin_ms: (kinds.lock || kinds.tlb).then(|| round6(m.spin_ns as f64 / 1e6)),
                ipi_wait_ms: kinds.tlb.then(|| round6(m.ipi_wait_ns as f64 / 1e6)),
                shootdowns_per_s: kinds.tlb.then(|| per_s(m.shootdowns)),
                ple_exits: (kinds.lock || kinds.tlb).then_some(m.ple_exits),
            };
            domains.insert(info.name.clone(), d);
        }

        let mut tasks = IndexMap::new();
        for (k, t) in self.guests.tasks.iter().enumerate() {
            let tm = &self.measure.task_metrics[k];
            let belief = self.task_belief(crate::model::TaskId(k));
            let report = TaskReport {
                cpu_ms: round6(tm.cpu_ns as f64 / 1e6),
                io_per_s: matches!(t.work, crate::model::Work::IoLoop { .. }).then(|| per_s(tm.io_done)),
                response_ms: Summary::of(&tm.responses_ns),
                belief: belief.map(|(b, _)| b),
                io_bound: belief.map(|(_, io)| io),
                io_bound_after_ms: belief
                    .and(tm.inferred_io_at)
                    .map(|at| round6(at.saturating_sub(self.measure.last_change_at).as_ms_f64())),
            };
            tasks.insert(format!("{}/{}", self.host.dom_info[t.dom.0].name, t.name), report);
        }

        let jobs: IndexMap<String, JobReport> = self
            .guests
            .groups
            .iter()
            .map(|g| {
                // Per thread, by the vCPU it runs on: where the spinning happened.
                let spin_ms_by_vcpu = g
                    .members
                    .iter()
                    .zip(&g.spin_ns_by_member)
                    .map(|(m, &ns)| {
                        let v = self.guests.tasks[m.0].vcpu;
                        (self.host.vcpus[v.0].name.clone(), round6(ns as f64 / 1e6))
                    })
                    .collect();
                let j = JobReport {
                    makespan_ms: g.done_at.map(|done| round6(done.as_ms_f64())),
                    phases_done: g.phases_done,
                    spin_ms: round6(g.spin_ns as f64 / 1e6),
                    spin_ms_by_vcpu,
                };
                (g.key.clone(), j)
            })
            .collect();

        let by_rule = jain(&rule_ratios).filter(|_| wc_entitled.is_some());
        let fairness = Fairness {
            jain: jain(&ratios).map(round6),
            max_abs_lag_ms: jain(&ratios).map(|_| round6(max_lag_ms)),
            basis: ShareBasis::DomainWeight.name(),
            rule: rule.name(),
            jain_by_rule: by_rule.map(round6),
            max_abs_lag_ms_by_rule: by_rule.map(|_| round6(rule_max_lag_ms)),
        };

        // Which driver domains exist is part of the run's shape, for the UI.
        let drivers: Vec<String> =
            self.scenario.domains.iter().filter(|d| d.role == Role::Driver).map(|d| d.name.clone()).collect();

        RunReport {
            policy: self.policy_id.clone(),
            scheduler: self.scenario.policy(&self.policy_id).map(|p| p.scheduler.clone()),
            sim_ms: self.now.0 / 1_000_000,
            events: self.events(),
            wall_ms: (!opts.deterministic).then(|| round6(self.measure.wall_ns as f64 / 1e6)),
            // Context switches host-wide, the count paper 004 (4.5) took from XenMon: every time a pCPU switched
            // to a different vCPU (from idle or from another vCPU) in the measured window; the domains' counts
            // summed.
            host: HostReport {
                busy_share: round6(self.measure.busy_ns as f64 / host_ns),
                context_switches: self.measure.dom_metrics.iter().map(|m| m.context_switches).sum(),
                core_shared_ms: smt.then(|| round6(self.measure.cores.core_shared_ns as f64 / 1e6)),
                forced_idle_ms: smt.then(|| round6(self.measure.cores.forced_idle_ns as f64 / 1e6)),
            },
            domains,
            tasks,
            fairness,
            jobs: (!jobs.is_empty()).then_some(jobs),
            partial_boosts: self.partial_boosts().map(|(count, hits)| PartialBoosts {
                count,
                hits,
                // With no boost the ratio does not exist (0/0): omitted, not reported as 0.
                pbhr: (count > 0).then(|| round6(hits as f64 / count as f64)),
            }),
            drivers: (!drivers.is_empty()).then_some(drivers),
            claims: None,
        }
    }
}
