//! What the page and the report read of a run besides its metrics: the names and shapes that label the trace
//! (`Meta`) and the queries of the trace, distributions and the policy's inference.

use super::*;

/// Names and shapes the UI needs to label the trace.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Meta {
    pub scenario: String,
    pub policy: String,
    pub label: String,
    pub pcpus: usize,
    pub duration_ns: u64,
    pub warmup_ns: u64,
    pub domains: Vec<MetaDomain>,
    pub vcpus: Vec<MetaVcpu>,
    pub tasks: Vec<MetaTask>,
    /// Decisions in the trace; in replay mode, the scheduling decisions the run made (`do_schedule` calls and
    /// scenario changes, without the policies' notes, which only a recorded stretch formats).
    pub decisions: usize,
    pub decisions_dropped: u64,
    /// Trace detail starts here [ns]: 0 for a full trace; in replay mode, the checkpoint the focused window was
    /// replayed from (detail is held for `trace_detail_from_ns <= t < trace_detail_until_ns`).
    pub trace_detail_from_ns: u64,
    /// Trace detail (segments, decisions, run queues) stops here because its memory budget was spent; shares
    /// over time stay complete (aggregated) [ns].
    pub trace_detail_until_ns: Option<u64>,
    /// Memory the trace detail takes, and in replay mode the checkpoints (estimate) [bytes].
    pub trace_bytes: usize,
    /// What the policy's scheduler is (co-scheduling, task beliefs, Lag view), so the page chooses its views by
    /// capability rather than by scheduler name. `beliefs` holds only while the policy infers (Credit with tavs).
    pub caps: Caps,
    /// Hardware threads per core on an SMT host (pCPUs `c * t .. (c + 1) * t` are core c's threads); omitted
    /// without SMT.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[cfg_attr(test, ts(optional))]
    pub threads_per_core: Option<usize>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct MetaDomain {
    pub name: String,
    pub role: &'static str,
    pub vcpus: usize,
    pub weight: u32,
    pub cap_pct: u32,
    pub color_index: usize,
    /// Declared concurrent (co-scheduled, paper 001) in the scenario.
    pub concurrent: bool,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct MetaVcpu {
    pub domain: usize,
    pub index: usize,
    pub name: String,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct MetaTask {
    pub domain: usize,
    pub name: String,
    pub path: String,
}

impl Simulation {
    /// The run's own trace: its detail (in [`Detail::Full`] mode) and the per-domain CPU aggregate behind
    /// `share_series` (always).
    pub fn trace(&self) -> &Trace {
        &self.rec.trace
    }

    /// Where the detail queries (segments, run queues, decisions, I/O events, task states, beliefs, boosts)
    /// answer from: the run's trace in [`Detail::Full`] mode, the focused window's in [`Detail::Replay`] mode
    /// (empty before the first `focus`).
    pub fn detail(&self) -> &Trace {
        self.replay.as_ref().and_then(|r| r.window_trace()).unwrap_or(&self.rec.trace)
    }

    /// Distribution points (value [ns], count) of one of a domain's distributions (empty for no such domain).
    pub fn distribution(&self, domain: usize, metric: Distribution) -> Vec<(u64, u64)> {
        self.measure.dom_metrics.get(domain).map_or_else(Vec::new, |m| m.samples(metric).points())
    }

    /// The policy's beliefs and partial boosts over the whole run in fixed time buckets (the belief chart's
    /// series): a replay run's overview, or the same buckets filled from a full run's trace.
    pub fn inference_buckets(&self) -> std::borrow::Cow<'_, InferenceBuckets> {
        match &self.rec.inference {
            Some(o) => std::borrow::Cow::Borrowed(o),
            None => {
                let t = &self.rec.trace;
                let ntasks = self.guests.tasks.len();
                std::borrow::Cow::Owned(InferenceBuckets::from_records(
                    self.end.0,
                    ntasks,
                    &t.beliefs(None),
                    t.boosts(),
                ))
            }
        }
    }

    /// BelThreshold of the policy's task inference, if it infers.
    pub fn belief_threshold(&self) -> Option<i64> {
        self.policy.belief_threshold()
    }

    /// The policy's inference about a task: (degree of belief, inferred I/O-bound), if it infers.
    pub fn task_belief(&self, t: TaskId) -> Option<(i64, bool)> {
        self.policy.task_belief(t)
    }

    /// Partial boosts and hits within the measured window so far, if the policy boosts partially. A boost begun
    /// in the warm-up that hits after it counts as a hit of none, so hits are capped at the boosts.
    pub fn partial_boosts(&self) -> Option<(u64, u64)> {
        let (b, h) = self.policy.partial_boosts()?;
        let (b0, h0) = self.measure.pb_at_warmup.unwrap_or((b, h));
        let boosts = b - b0;
        Some((boosts, (h - h0).min(boosts)))
    }

    /// Domain `dom`'s policy-accounted host time within the measured window so far, if the policy accounts any.
    pub fn domain_times(&self, dom: usize) -> Option<policy::DomainTimes> {
        let now = self.now.min(self.end);
        let t = self.policy.domain_times(dom, now)?;
        let at_warmup = self.measure.times_at_warmup.as_ref().and_then(|w| w.get(dom).copied().flatten());
        Some(at_warmup.map_or(t, |w| t.since(w)))
    }

    /// How the policy sees a vCPU now (priority class and credit).
    pub fn vcpu_sched(&self, v: VcpuId) -> policy::VcpuSched {
        self.policy.vcpu_sched(v)
    }

    pub fn meta(&self) -> Meta {
        let spec = self.scenario.policy(&self.policy_id).expect("policy exists");
        Meta {
            scenario: self.scenario.id.clone(),
            policy: self.policy_id.clone(),
            label: spec.label().to_string(),
            pcpus: self.host.pcpus.len(),
            duration_ns: self.end.0,
            warmup_ns: self.warmup.0,
            domains: self
                .scenario
                .domains
                .iter()
                .enumerate()
                .map(|(i, d)| MetaDomain {
                    name: d.name.clone(),
                    role: if d.role == Role::Driver { "driver" } else { "guest" },
                    vcpus: d.vcpus as usize,
                    weight: d.weight,
                    cap_pct: d.cap_pct,
                    color_index: i,
                    concurrent: d.kind == crate::scenario::DomainType::Concurrent,
                })
                .collect(),
            vcpus: self
                .host
                .vcpus
                .iter()
                .map(|v| MetaVcpu { domain: v.dom.0, index: v.index, name: v.name.clone() })
                .collect(),
            tasks: self
                .guests
                .tasks
                .iter()
                .map(|t| MetaTask {
                    domain: t.dom.0,
                    name: t.name.clone(),
                    path: format!("{}/{}", self.host.dom_info[t.dom.0].name, t.name),
                })
                .collect(),
            decisions: match self.replay {
                Some(_) => self.rec.decisions_made as usize,
                None => self.rec.trace.decision_count(),
            },
            decisions_dropped: self.rec.trace.decisions_dropped,
            trace_detail_from_ns: self.focused().map_or(0, |(from, _)| from),
            trace_detail_until_ns: match self.focused() {
                Some((_, to)) => Some(to),
                None => self.rec.trace.detail_until_ns,
            },
            trace_bytes: self.detail().used_bytes() + self.checkpoints().1,
            caps: self.caps(&spec.scheduler),
            threads_per_core: self.host.topology.smt().then_some(self.host.topology.threads_per_core),
        }
    }

    /// The scheduler's capabilities as this run shows them.
    pub(super) fn caps(&self, scheduler: &str) -> Caps {
        let caps = registry::lookup(scheduler).map(|s| s.caps).expect("the policy was built from the registry");
        Caps { beliefs: caps.beliefs && self.policy.belief_threshold().is_some(), ..caps }
    }
}
