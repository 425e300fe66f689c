//! Scenario claims: statements about the report that the runs must reproduce (direction and rough size of a
//! paper's effect). A metric is a dotted path into a run object; `*` matches every key at that level.
//!
//! A claim is judged on one set of runs ([`evaluate`]: a [`ClaimResult`] with the typed [`Values`] it read), and
//! given one [`Verdict`] over its seeds and its ablation ([`verdict`]); [`check`] plans and collects the runs a
//! whole check needs. Every front end (the CLI's `check` and fidelity table, the page, Python) renders that verdict.

pub mod check;
mod verdict;

pub use verdict::{verdict, Ablated, State, Trials, Verdict};

use crate::scenario::{Claim, ClaimStatus, FactorBound, Scenario};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::{Map, Value};

/// The numbers a claim was judged on, typed: a policy whose id is `target` no longer collides with the targets.
#[derive(Debug, Clone, Default, Serialize, PartialEq, JsonSchema)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct Values {
    /// Each run's numbers the claim read: `{policy: {metric path: value}}`, in the order the claim names them.
    pub runs: IndexMap<String, IndexMap<String, f64>>,
    /// A `near` claim's targets: the value each metric path was compared with.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<IndexMap<String, f64>>,
    /// A `factor_at_most` read from a run's metric: the most the factor between the two sides may be.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bound: Option<f64>,
}

impl Values {
    /// The report's `values` object: `{policy: {path: value}}` with the literal keys `factor_at_most` (first)
    /// and `target` (last) beside the policies, as reports always gave it.
    pub fn legacy(&self) -> Value {
        let mut m = Map::new();
        if let Some(b) = self.bound {
            m.insert("factor_at_most".into(), Value::from(b));
        }
        let object =
            |xs: &IndexMap<String, f64>| Value::Object(xs.iter().map(|(k, x)| (k.clone(), Value::from(*x))).collect());
        for (id, xs) in &self.runs {
            m.insert(id.clone(), object(xs));
        }
        if let Some(t) = &self.target {
            m.insert("target".into(), object(t));
        }
        Value::Object(m)
    }
}

#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct ClaimResult {
    pub text: String,
    pub holds: bool,
    /// The policy the claim is about (its run carries the result).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    /// The numbers it was judged on: `{policy: {metric path: value}}`, plus `target` for `near` claims and
    /// `factor_at_most` for a bound read from a metric, beside the policies (the verdict's typed `values` keep
    /// them apart: here a policy whose id is `target` collides).
    #[cfg_attr(test, ts(type = "unknown"))]
    pub values: Value,
    /// Why it could not be judged (a missing metric or run), when so.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The error says the claimed quantity is not in the run (a metric that does not apply there), rather than
    /// that the claim is broken: on an ablated run, that is the effect gone.
    #[serde(skip)]
    pub absent: bool,
    /// `not_reproduced` when the scenario keeps this claim as a finding the model does not reproduce.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<ClaimStatus>,
    /// The typed numbers `values` renders (none when it could not be judged).
    #[serde(skip)]
    pub judged: Option<Values>,
    /// The claim's verdict on these runs and, when given, its ablation's ([`evaluate_with`]; the page reads it).
    /// Reports leave it out: a report's runs are one seed of the scenario, without the ablation.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verdict: Option<Verdict>,
}

/// All `(path, number)` pairs a metric pattern matches in a run (see [`crate::metric_path`]).
pub fn resolve(run: &Value, metric: &str) -> Vec<(String, f64)> {
    crate::metric_path::resolve(run, metric).into_iter().filter_map(|(path, v)| Some((path, v.as_f64()?))).collect()
}

fn run_of<'a>(runs: &'a [Value], id: &str) -> Option<&'a Value> {
    runs.iter().find(|r| r["policy"].as_str() == Some(id))
}

/// Why a claim could not be judged.
#[derive(Debug)]
enum Unjudged {
    /// The metric matches nothing in a run: the quantity does not apply there.
    Absent(String),
    /// The claim does not fit the report (a missing run, mismatched metrics).
    Broken(String),
}

impl std::fmt::Display for Unjudged {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Unjudged::Absent(e) | Unjudged::Broken(e) => f.write_str(e),
        }
    }
}

impl From<String> for Unjudged {
    fn from(e: String) -> Self {
        Unjudged::Broken(e)
    }
}

impl From<&str> for Unjudged {
    fn from(e: &str) -> Self {
        Unjudged::Broken(e.to_string())
    }
}

/// A job that never finished has no `makespan_ms`; a claim on makespans must see that rather than judge only the
/// jobs that finished (a `*` pattern would silently skip it). Names the first unfinished job the pattern covers.
fn unfinished(run: &Value, metric: &str) -> Option<String> {
    let jobs = metric.strip_suffix(".makespan_ms")?;
    let done = resolve(run, &format!("{jobs}.phases_done"));
    let finished = resolve(run, metric);
    done.into_iter()
        .map(|(path, _)| path.trim_end_matches(".phases_done").to_string())
        .find(|job| !finished.iter().any(|(p, _)| p.trim_end_matches(".makespan_ms") == job))
}

fn judge(c: &Claim, runs: &[Value]) -> Result<(bool, Values), Unjudged> {
    // Every run the claim reads: a job it covers that did not finish fails it, whatever the other numbers say.
    for id in [c.lower.as_ref(), c.higher.as_ref(), c.than.as_ref(), c.policy.as_ref()].into_iter().flatten() {
        if let Some(run) = run_of(runs, id) {
            let metric =
                if Some(id) == c.than.as_ref() { c.than_metric.as_deref().unwrap_or(&c.metric) } else { &c.metric };
            if let Some(job) = unfinished(run, metric) {
                return Err(Unjudged::Absent(format!("no makespan: {job} did not finish within the run of '{id}'")));
            }
        }
    }
    judge_finished(c, runs)
}

fn judge_finished(c: &Claim, runs: &[Value]) -> Result<(bool, Values), Unjudged> {
    let missing = |id: &str| format!("no run of policy '{id}' in the report");
    let nothing = |id: &str| Unjudged::Absent(format!("metric '{}' matches nothing in the run of '{id}'", c.metric));
    let mut values = Values::default();

    if let (Some(a), Some(b)) = (c.lower.as_ref().or(c.higher.as_ref()), c.than.as_ref()) {
        let ra = resolve(run_of(runs, a).ok_or_else(|| missing(a))?, &c.metric);
        let b_metric = c.than_metric.as_deref().unwrap_or(&c.metric);
        let rb = resolve(run_of(runs, b).ok_or_else(|| missing(b))?, b_metric);
        if ra.is_empty() {
            return Err(nothing(a));
        }
        if c.than_metric.is_some() && ra.len() != rb.len() {
            return Err(format!("'{}' and '{b_metric}' match different numbers of values", c.metric).into());
        }
        let lower = c.lower.is_some();
        let bound = match &c.factor_at_most {
            None => None,
            Some(FactorBound::Number(n)) => Some(*n),
            Some(FactorBound::Metric { policy, metric, scale, min }) => {
                let found = resolve(run_of(runs, policy).ok_or_else(|| missing(policy))?, metric);
                let [(_, x)] = found.as_slice() else {
                    return Err(
                        format!("factor_at_most: '{metric}' must match one value in the run of '{policy}'").into()
                    );
                };
                let m = x.max(min.unwrap_or(f64::NEG_INFINITY)) * scale;
                values.bound = Some(m);
                Some(m)
            }
        };
        let mut holds = true;
        let (mut va, mut vb) = (IndexMap::new(), IndexMap::new());
        for (i, (path, x)) in ra.iter().enumerate() {
            let other = if c.than_metric.is_some() { rb.get(i) } else { rb.iter().find(|(p, _)| p == path) };
            let Some((bpath, y)) = other else {
                return Err(nothing(b));
            };
            // Orient so that `small` is the side the claim says is lower.
            let (small, big) = if lower { (*x, *y) } else { (*y, *x) };
            let ok = match (c.by_factor, c.by_at_least) {
                // Below 1 the factor is a tolerance ("A is at least 99% of B"), so equal values hold.
                (Some(f), _) if f < 1.0 => small * f <= big,
                (Some(f), _) => small * f <= big && small < big,
                (None, Some(d)) => big - small >= d,
                (None, None) => small < big,
            };
            holds &= ok && bound.is_none_or(|m| big <= small * m);
            va.insert(path.clone(), *x);
            vb.insert(bpath.clone(), *y);
        }
        if a == b {
            va.extend(vb);
            values.runs.insert(a.clone(), va);
        } else {
            values.runs.insert(a.clone(), va);
            values.runs.insert(b.clone(), vb);
        }
        return Ok((holds, values));
    }

    let id = c.policy.as_deref().ok_or("claim names no policy")?;
    let run = run_of(runs, id).ok_or_else(|| missing(id))?;
    let found = resolve(run, &c.metric);
    if found.is_empty() {
        return Err(nothing(id));
    }
    let mut holds = true;
    let mut mine = IndexMap::new();
    let mut targets = IndexMap::new();
    for (path, x) in &found {
        mine.insert(path.clone(), *x);
        if let (Some(near), true) = (&c.near, c.within.is_some() || c.within_pct.is_some()) {
            let target = match near {
                Value::Number(n) => n.as_f64(),
                Value::String(sibling) => {
                    let parent = path.rsplit_once('.').map_or("", |(p, _)| p);
                    let sib = if parent.is_empty() { sibling.clone() } else { format!("{parent}.{sibling}") };
                    // A dotted name that is no sibling is a metric path of the same run.
                    let found = resolve(run, &sib).first().map(|(_, v)| *v);
                    let absolute = || resolve(run, sibling).first().map(|(_, v)| *v);
                    found.or_else(|| if sibling.contains('.') { absolute() } else { None })
                }
                _ => None,
            };
            let Some(t) = target else {
                return Err(format!("no value for near '{near}' beside {path}").into());
            };
            targets.insert(path.clone(), t);
            let within =
                c.within.unwrap_or(f64::INFINITY).min(c.within_pct.map_or(f64::INFINITY, |p| t.abs() * p / 100.0));
            holds &= (x - t).abs() <= within;
        }
        if let Some(m) = c.at_most {
            holds &= *x <= m;
        }
        if let Some(m) = c.at_least {
            holds &= *x >= m;
        }
    }
    values.runs.insert(id.to_string(), mine);
    values.target = (!targets.is_empty()).then_some(targets);
    Ok((holds, values))
}

/// Judges one claim against the given run objects.
pub fn evaluate_claim(c: &Claim, runs: &[Value]) -> ClaimResult {
    let policy = c.subject().map(str::to_string);
    let (holds, judged, error, absent) = match judge(c, runs) {
        Ok((holds, values)) => (holds, Some(values), None, false),
        Err(Unjudged::Absent(e)) => (false, None, Some(e), true),
        Err(Unjudged::Broken(e)) => (false, None, Some(e), false),
    };
    ClaimResult {
        text: c.text.clone(),
        holds,
        policy,
        values: judged.as_ref().map_or(Value::Null, Values::legacy),
        error,
        absent,
        status: c.status,
        judged,
        verdict: None,
    }
}

/// Judges every claim of the scenario against the given run objects.
pub fn evaluate(sc: &Scenario, runs: &[Value]) -> Vec<ClaimResult> {
    sc.claims.iter().map(|c| evaluate_claim(c, runs)).collect()
}

/// What became of a claim's ablation on one seed, as a front end that runs it on demand knows it.
#[derive(Debug, Clone, serde::Deserialize)]
#[serde(rename_all = "snake_case", deny_unknown_fields)]
pub enum AblationRuns {
    /// The run objects of the ablated scenario (at least the policies the claim reads).
    Runs(Vec<Value>),
    /// Why the ablated runs could not be made (the patch, a run's error).
    Error(String),
}

/// [`evaluate`], each result with its [`Verdict`] on this one seed: with the ablation of claim `k` judged on
/// `ablations[k]` when given, else as not run yet. Other settings (variants, seeds) are not known here, so a
/// `not_reproduced` claim is never called stale for holding (see [`verdict`]).
pub fn evaluate_with(
    sc: &Scenario,
    runs: &[Value],
    ablations: &std::collections::BTreeMap<usize, AblationRuns>,
) -> Vec<ClaimResult> {
    sc.claims
        .iter()
        .enumerate()
        .map(|(k, c)| {
            let mut r = evaluate_claim(c, runs);
            let on_ablation = match ablations.get(&k) {
                None => Vec::new(),
                Some(AblationRuns::Runs(ab)) => vec![Ok(evaluate_claim(c, ab))],
                Some(AblationRuns::Error(e)) => vec![Err(e.clone())],
            };
            let trials = Trials { seeds: vec![sc.seed], on_scenario: vec![r.clone()], on_ablation };
            r.verdict = Some(verdict(c, &trials, None));
            r
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn claim(v: Value) -> Claim {
        serde_json::from_value(v).unwrap()
    }

    fn runs() -> Vec<Value> {
        vec![
            json!({"policy":"a","domains":{"x":{"cpu_share":0.25,"fair_share":0.25,"response_ms":{"mean":70.0}},
                                            "y":{"cpu_share":0.74,"fair_share":0.75}}}),
            json!({"policy":"b","domains":{"x":{"cpu_share":0.30,"fair_share":0.25,"response_ms":{"mean":5.0}},
                                            "y":{"cpu_share":0.70,"fair_share":0.75}}}),
        ]
    }

    /// A job without a makespan (it never finished) fails a claim on makespans, named or matched by `*`.
    #[test]
    fn an_unfinished_job_fails_a_makespan_claim() {
        let runs = vec![
            json!({"policy":"a","jobs":{"d/x":{"makespan_ms":500.0,"phases_done":10},"d/y":{"phases_done":3}}}),
            json!({"policy":"b","jobs":{"d/x":{"makespan_ms":900.0,"phases_done":10},"d/y":{"makespan_ms":900.0,"phases_done":10}}}),
        ];
        let star = claim(json!({"text":"t","metric":"jobs.*.makespan_ms","lower":"a","than":"b"}));
        match judge(&star, &runs) {
            Err(Unjudged::Absent(e)) => assert!(e.contains("no makespan: jobs.d/y did not finish"), "{e}"),
            other => panic!("{other:?}"),
        }
        let bound = claim(json!({"text":"t","metric":"jobs.*.makespan_ms","policy":"a","at_most":1000}));
        assert!(judge(&bound, &runs).is_err());
        let finished = claim(json!({"text":"t","metric":"jobs.*.makespan_ms","policy":"b","at_most":1000}));
        assert!(judge(&finished, &runs).unwrap().0);
    }

    #[test]
    fn factor_bounded_by_a_metric() {
        // b's response is 14x lower than a's; the bound is scale x a's y share (0.74 x 20 = 14.8).
        let bounded = |scale: f64| {
            claim(json!({"text":"t","metric":"domains.x.response_ms.mean","lower":"b","than":"a",
                "factor_at_most":{"policy":"a","metric":"domains.y.cpu_share","scale":scale}}))
        };
        let (holds, values) = judge(&bounded(20.0), &runs()).unwrap();
        assert!(holds);
        assert!((values.bound.unwrap() - 14.8).abs() < 1e-9);
        assert!((values.legacy()["factor_at_most"].as_f64().unwrap() - 14.8).abs() < 1e-9);
        assert!(!judge(&bounded(10.0), &runs()).unwrap().0);
        // A floor under the metric: 0.74 is taken as 1.0, so 10 x 1.0 bounds the 14x factor too low, 15 x 1.0 not.
        let floored = |scale: f64| {
            claim(json!({"text":"t","metric":"domains.x.response_ms.mean","lower":"b","than":"a",
                "factor_at_most":{"policy":"a","metric":"domains.y.cpu_share","scale":scale,"min":1.0}}))
        };
        assert!(!judge(&floored(10.0), &runs()).unwrap().0);
        assert!(judge(&floored(15.0), &runs()).unwrap().0);
        let c =
            claim(json!({"text":"t","metric":"domains.x.response_ms.mean","lower":"b","than":"a","factor_at_most":13}));
        assert!(!judge(&c, &runs()).unwrap().0);
        let c = claim(json!({"text":"t","metric":"domains.x.cpu_share","lower":"b","than":"a",
            "factor_at_most":{"policy":"a","metric":"domains.*.cpu_share"}}));
        assert!(judge(&c, &runs()).unwrap_err().to_string().contains("must match one value"));
    }

    #[test]
    fn wildcard_paths_expand() {
        let r = resolve(&runs()[0], "domains.*.cpu_share");
        assert_eq!(r, vec![("domains.x.cpu_share".into(), 0.25), ("domains.y.cpu_share".into(), 0.74)]);
    }

    #[test]
    fn lower_by_factor() {
        let c = claim(json!({"text":"t","metric":"domains.x.response_ms.mean","lower":"b","than":"a","by_factor":5}));
        assert!(judge(&c, &runs()).unwrap().0);
        let c = claim(json!({"text":"t","metric":"domains.x.response_ms.mean","lower":"b","than":"a","by_factor":20}));
        assert!(!judge(&c, &runs()).unwrap().0);
        let c =
            claim(json!({"text":"t","metric":"domains.x.response_ms.mean","higher":"a","than":"b","by_at_least":60}));
        assert!(judge(&c, &runs()).unwrap().0);
    }

    /// A factor below 1 is a tolerance: y's share in b (0.70) is at least 90% of a's (0.74), not 99% of it.
    #[test]
    fn factor_below_one_is_a_tolerance() {
        let at = |dir: &str, f: f64| {
            let c = claim(json!({"text":"t","metric":"domains.y.cpu_share",(dir):"b","than":"a","by_factor":f}));
            judge(&c, &runs()).unwrap().0
        };
        assert!(at("higher", 0.9) && !at("higher", 0.99));
        assert!(at("lower", 0.99), "b is lower, so it is within any tolerance above a");
        let same = claim(json!({"text":"t","metric":"domains.y.cpu_share","higher":"a","than":"a","by_factor":0.99}));
        assert!(judge(&same, &runs()).unwrap().0, "equal values are within the tolerance");
    }

    #[test]
    fn than_metric_compares_two_metrics_of_one_run() {
        let c = claim(json!({"text":"t","metric":"domains.y.cpu_share","higher":"a","than":"a",
                             "than_metric":"domains.x.cpu_share","by_factor":2}));
        assert!(judge(&c, &runs()).unwrap().0);
        let c = claim(json!({"text":"t","metric":"domains.y.cpu_share","higher":"a","than":"a",
                             "than_metric":"domains.x.cpu_share","by_factor":3}));
        assert!(!judge(&c, &runs()).unwrap().0);
    }

    #[test]
    fn near_a_sibling() {
        let c =
            claim(json!({"text":"t","metric":"domains.*.cpu_share","policy":"a","near":"fair_share","within":0.02}));
        assert!(judge(&c, &runs()).unwrap().0);
        let c =
            claim(json!({"text":"t","metric":"domains.*.cpu_share","policy":"b","near":"fair_share","within":0.02}));
        assert!(!judge(&c, &runs()).unwrap().0);
    }

    #[test]
    fn near_another_metric_of_the_run() {
        // x's share (0.25) against y's share of the same run (0.74 in a, 0.70 in b).
        let c = claim(json!({"text":"t","metric":"domains.x.cpu_share","policy":"b","near":"domains.y.cpu_share",
                             "within":0.41}));
        assert!(judge(&c, &runs()).unwrap().0);
        let c = claim(json!({"text":"t","metric":"domains.x.cpu_share","policy":"a","near":"domains.y.cpu_share",
                             "within":0.41}));
        assert!(!judge(&c, &runs()).unwrap().0);
    }

    #[test]
    fn near_another_metric_within_a_percentage() {
        let c =
            claim(json!({"text":"t","metric":"domains.y.cpu_share","policy":"b","near":"domains.x.response_ms.mean",
                             "within_pct":20}));
        assert!(!judge(&c, &runs()).unwrap().0, "0.70 is not within 20% of 5.0");
        let c = claim(json!({"text":"t","metric":"domains.x.cpu_share","policy":"a","near":"domains.y.cpu_share",
                             "within_pct":5}));
        assert!(!judge(&c, &runs()).unwrap().0, "0.25 is not within 5% of 0.74");
        let c = claim(json!({"text":"t","metric":"domains.y.cpu_share","policy":"b","near":"domains.y.fair_share",
                             "within_pct":10}));
        assert!(judge(&c, &runs()).unwrap().0, "0.70 is within 10% of 0.75");
    }

    #[test]
    fn missing_metric_fails_with_a_reason() {
        let c = claim(json!({"text":"t","metric":"domains.y.response_ms.mean","policy":"a","at_most":1}));
        let e = judge(&c, &runs()).unwrap_err();
        assert!(matches!(e, Unjudged::Absent(_)) && e.to_string().contains("matches nothing"), "{e}");
    }
}
