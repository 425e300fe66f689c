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
