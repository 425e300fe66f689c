//! The thesis's enhanced credit scheduler (003, 4.3): Xen's Credit (4.x rules: 30 ms slices, 1 ms rate limit)
//! whose selection lets the starved vCPU with the most remaining credit supersede the others.
//!
//! `enhanced_schedule`, as the thesis gives it: the current vCPU goes to the end of the run queue; the candidate
//! at the head is taken only if it is not OVER and has at least `max_credit` (the credit of the last vCPU chosen
//! with credit left). Otherwise it is moved to another pCPU whose run queue is empty, if there is one, or sent to
//! the end of this queue, and the next candidate is examined. Once every queued vCPU has been examined without
//! one passing, the one with the most credit supersedes. Two modelling choices the algorithm leaves open: a
//! BOOSTed vCPU (a woken I/O-bound one) passes without the credit test, so the scheme never delays the I/O it
//! means to help; and a vCPU sent to an empty queue makes that pCPU reschedule if it is idle.
//! The thesis's decision path starts by putting a runnable current vCPU at the end of the run queue; it has no
//! counterpart of Credit 4.2+'s rate limit (a current vCPU that ran under 1 ms keeps the pCPU), so the rate limit
//! is off here unless `ratelimit_us` asks for it. That is what lets a woken I/O vCPU in at once, and it is where
//! both the gain under stress and the extra context switches come from (003 4.5).
//! The extra examinations and migrations cost context switches too, which the report counts.

use super::{Credit, CreditSpec, Selection, PRI_BOOST, PRI_OVER};
use crate::model::PcpuId;
use crate::policy::{common, Ctx, DomainInfo};
use serde_json::Value;
use std::fmt::Write;

/// Enhanced-scheme state: the credit bar per pCPU and whether migration to empty run queues is on.
#[derive(Debug, Clone)]
pub struct Rule {
    /// `max_credit` of each pCPU's selection (credits).
    max_credit: Vec<i64>,
    /// Send a passed-over candidate to an empty run queue (the thesis's migration step).
    migrate_to_empty: bool,
}

/// Keys this scheduler adds to Credit's.
const OWN_KEYS: [&str; 1] = ["migrate_to_empty"];

/// Builds Credit with Xen 4.x defaults (the thesis ran Xen 4.4.1) but no rate limit, and the enhanced selection.
pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Credit, String> {
    let mut credit_params = serde_json::Map::new();
    credit_params.insert("version".into(), Value::from("4.x"));
    credit_params.insert("ratelimit_us".into(), Value::from(0));
    let mut migrate_to_empty = true;
    if let Some(obj) = common::object("enhanced", params)? {
        for (k, v) in obj {
            if k == "migrate_to_empty" {
                migrate_to_empty = common::boolean("enhanced.migrate_to_empty", v)?;
            } else {
                credit_params.insert(k.clone(), v.clone());
            }
        }
    }
    let c = Credit::new(&Value::Object(credit_params), pcpus, domains)?;
    Ok(c.with_selection(Box::new(Rule { max_credit: vec![0; pcpus], migrate_to_empty })))
}

/// Checks a run-time change: Credit's parameters (the enhanced rule's own are fixed at boot).
pub fn check_param(param: &str, value: &Value) -> Result<(), String> {
    if OWN_KEYS.contains(&param) {
        return Err(format!("enhanced.{param}: fixed at boot"));
    }
    CreditSpec::check_param(param, value)
}

impl Selection for Rule {
    /// Reorders `p`'s run queue so its head is the enhanced choice (the caller has requeued the current vCPU).
    fn select(&mut self, c: &mut Credit, p: PcpuId, ctx: &mut Ctx) {
        let n = c.runq_of(p).len();
        let mut chosen = None;
        for _ in 0..n {
            let Some(&cand) = c.runq_of(p).first() else { break };
            // A lone candidate has nobody to supersede it: passing it over (or moving it to another empty queue,
            // whence it would bounce straight back) would only idle the pCPU.
            if c.runq_of(p).len() < 2 {
                chosen = Some(cand);
                break;
            }
            let (pri, credit) = (c.pri(cand), c.credit(cand));
            let passes = pri == PRI_BOOST || (pri > PRI_OVER && credit >= self.max_credit[p.0]);
            if passes {
                chosen = Some(cand);
                break;
            }
            let empty = (0..ctx.host.pcpus).map(PcpuId).find(|&q| q != p && c.runq_of(q).is_empty());
            match empty.filter(|_| self.migrate_to_empty) {
                Some(q) => {
                    c.runq_remove(cand);
                    c.runq_insert(q, cand);
                    if ctx.host.running[q.0].is_none() {
                        ctx.resched(q);
                    }
                    let name = &ctx.host.vcpu_name[cand.0];
                    ctx.note(q, |w| write!(w, "enhanced: {name} below max_credit, moved to empty pCPU{}", q.0));
                }
                None => c.runq_move(p, cand, usize::MAX),
            }
        }
        if chosen.is_none() {
            // Nobody reached the bar: the vCPU with the most remaining credit supersedes (first among equals).
            let q = c.runq_of(p);
            chosen =
                q.iter().copied().enumerate().max_by_key(|(i, v)| (c.credit(*v), std::cmp::Reverse(*i))).map(|x| x.1);
        }
        if let Some(v) = chosen {
            c.runq_move(p, v, 0);
            let credit = c.credit(v);
            if credit > 0 {
                self.max_credit[p.0] = credit;
            }
        }
    }
}

crate::size::heap_size!(Rule { max_credit });

#[cfg(test)]
mod tests {

    use crate::sim::test_support::*;
    use crate::sim::Simulation;
    use serde_json::json;

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
}
