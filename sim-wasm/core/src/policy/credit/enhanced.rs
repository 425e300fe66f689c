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

use super::{Credit, CreditSpec, CreditVersion, Selection, PRI_BOOST, PRI_OVER};
use crate::model::PcpuId;
use crate::policy::params::{self, Params};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::policy::{Ctx, DomainInfo};
use schemars::{JsonSchema, Schema, SchemaGenerator};
use serde::{de::Error as _, Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Value};
use std::borrow::Cow;
use std::fmt::Write;

/// The thesis's enhanced credit scheduler (003 4.3): Credit with Xen 4.x defaults (version 4.x unless given) whose
/// selection lets the queued vCPU with the most remaining credit supersede (max_credit rule), moving passed-over
/// candidates to an empty run queue. The thesis's decision path always requeues the running vCPU, so Credit's 1 ms
/// rate limit is off (ratelimit_us 0) unless given. Takes every credit parameter, with these defaults.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct EnhancedOwn {
    /// Move a candidate below max_credit to another pCPU whose run queue is empty (the thesis's migration step).
    pub migrate_to_empty: bool,
}

impl Default for EnhancedOwn {
    fn default() -> EnhancedOwn {
        EnhancedOwn { migrate_to_empty: true }
    }
}

/// The enhanced scheduler's parameters: Credit's declaration under the thesis's defaults, and its own. The two
/// are composed explicitly rather than with `#[serde(flatten)]`, which cannot refuse unknown keys: a file's keys
/// are split by the names `EnhancedOwn` declares, and each part is read by its own declaration, which refuses
/// what it does not know. Its `$defs` are Credit's properties (with these defaults) beside its own.
#[derive(Debug, Clone, PartialEq)]
pub struct EnhancedParams {
    pub credit: CreditSpec,
    pub own: EnhancedOwn,
}

impl Default for EnhancedParams {
    /// Xen 4.x's Credit (the thesis ran Xen 4.4.1) with no rate limit.
    fn default() -> EnhancedParams {
        EnhancedParams { credit: Self::credit_preset(CreditVersion::V4), own: EnhancedOwn::default() }
    }
}

impl EnhancedParams {
    /// Credit's preset for `version`, with the rate limit off (the thesis's decision path has none).
    fn credit_preset(version: CreditVersion) -> CreditSpec {
        let preset = CreditSpec::preset(&serde_json::to_value(version).expect("a version serializes"));
        CreditSpec { ratelimit_us: 0, ..preset.expect("every version has a preset") }
    }

    /// The keys `EnhancedOwn` declares.
    fn own_keys() -> Vec<String> {
        match serde_json::to_value(EnhancedOwn::default()) {
            Ok(Value::Object(m)) => m.into_iter().map(|(k, _)| k).collect(),
            _ => Vec::new(),
        }
    }
}

impl Serialize for EnhancedParams {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let part = |v: serde_json::Result<Value>| match v {
            Ok(Value::Object(m)) => Ok(m),
            Ok(_) => Err(serde::ser::Error::custom("parameters serialize to an object")),
            Err(e) => Err(serde::ser::Error::custom(e)),
        };
        let mut m = part(serde_json::to_value(&self.credit))?;
        m.extend(part(serde_json::to_value(&self.own))?);
        m.serialize(s)
    }
}

impl<'de> Deserialize<'de> for EnhancedParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut credit = Map::deserialize(d)?;
        let own: Map<String, Value> =
            EnhancedParams::own_keys().into_iter().filter_map(|k| credit.remove(&k).map(|v| (k, v))).collect();
        Ok(EnhancedParams {
            credit: CreditSpec::deserialize(Value::Object(credit)).map_err(D::Error::custom)?,
            own: EnhancedOwn::deserialize(Value::Object(own)).map_err(D::Error::custom)?,
        })
    }
}

impl JsonSchema for EnhancedParams {
    fn schema_name() -> Cow<'static, str> {
        "EnhancedParams".into()
    }

    /// `EnhancedOwn`'s schema with Credit's properties beside its own, each default as `Default` gives it.
    fn json_schema(_: &mut SchemaGenerator) -> Schema {
        let mut schema = params::generate::<EnhancedOwn>();
        let credit = params::generate::<CreditSpec>();
        let defaults = serde_json::to_value(EnhancedParams::default()).unwrap_or_default();
        let mut props = credit.get("properties").and_then(Value::as_object).cloned().unwrap_or_default();
        for (k, p) in props.iter_mut() {
            if let (Some(d), Value::Object(p)) = (defaults.get(k), p) {
                p.insert("default".into(), d.clone());
            }
        }
        if let Some(own) = schema.get("properties").and_then(Value::as_object) {
            props.extend(own.clone());
        }
        schema["properties"] = Value::Object(props);
        Schema::try_from(schema).expect("an object schema")
    }
}

impl Params for EnhancedParams {
    const SCHEDULER: &'static str = "enhanced";
    const DEF: &'static str = "enhanced_params";
    const PRESET: Option<&'static str> = Some("version");
    const FIXED: &'static [&'static str] = &["migrate_to_empty"];

    fn preset(value: &Value) -> Result<EnhancedParams, String> {
        let version: CreditVersion = serde_json::from_value(value.clone()).map_err(|e| format!("version: {e}"))?;
        Ok(EnhancedParams { credit: Self::credit_preset(version), own: EnhancedOwn::default() })
    }

    fn check(&self) -> Result<(), String> {
        self.credit.check()
    }
}

/// Enhanced-scheme state: the credit bar per pCPU and whether migration to empty run queues is on.
#[derive(Debug, Clone)]
pub struct Rule {
    /// `max_credit` of each pCPU's selection (credits).
    max_credit: Vec<i64>,
    /// Send a passed-over candidate to an empty run queue (the thesis's migration step).
    migrate_to_empty: bool,
}

/// Builds Credit from the enhanced declaration (Xen 4.x defaults, no rate limit) with the enhanced selection.
pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Credit, String> {
    let p = params::from_value::<EnhancedParams>(params)?;
    let c = Credit::from_spec(p.credit, pcpus, domains)?;
    let migrate_to_empty = p.own.migrate_to_empty;
    Ok(c.with_selection(Box::new(Rule { max_credit: vec![0; pcpus], migrate_to_empty })))
}

/// Checks a run-time change: Credit's parameters (the enhanced rule's own are fixed at boot).
pub fn check_param(param: &str, value: &Value) -> Result<(), String> {
    params::change(&mut EnhancedParams::default(), param, value)
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

/// The enhanced scheduler's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "enhanced",
    caps: Caps::INFERS,
    build: |s| crate::policy::gran::wrap(s, registry::boxed(new(s.params, s.pcpus, s.domains))),
    check_param,
    check_scenario: registry::no_scenario_check,
    params: params::declared::<EnhancedParams>(),
};

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sim::test_support::*;
    use crate::sim::Simulation;
    use serde_json::json;

    /// The declaration reads a file as Credit's map of it did: Xen 4.x's Credit with no rate limit unless given,
    /// a version's preset under the file's other keys, the enhanced rule's own key apart; an unknown key is refused
    /// by name, and the own key is fixed at boot.
    #[test]
    fn params_compose_credit_and_own() {
        let read = |v: Value| params::from_value::<EnhancedParams>(&v);
        let credit = |v: Value| params::from_value::<CreditSpec>(&v).unwrap();
        let p = read(json!({"tslice_ms": 10, "migrate_to_empty": false, "version": "3.2"})).unwrap();
        assert_eq!(p.credit, credit(json!({"version": "3.2", "ratelimit_us": 0, "tslice_ms": 10})));
        assert!(!p.own.migrate_to_empty);
        let d = read(Value::Null).unwrap();
        assert_eq!(d.credit, credit(json!({"version": "4.x", "ratelimit_us": 0})));
        assert!(d.own.migrate_to_empty);
        let e = read(json!({"quantum": 1})).unwrap_err();
        assert!(e.starts_with("unknown enhanced parameter 'quantum'"), "{e}");
        assert!(check_param("migrate_to_empty", &json!(false)).unwrap_err().contains("fixed at boot"));
        assert!(check_param("tslice_ms", &json!(10)).is_ok());
        assert!(check_param("tslice_ms", &json!(0)).unwrap_err().contains("1..=1000"));
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
}
