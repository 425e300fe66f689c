//! The verdict on a claim: its judgements on the scenario's runs and on its ablation's, over the seeds of one
//! setting, read against its status. This is the one place a claim is judged as a whole; `schedsim check`, the
//! fidelity table, the page and Python's `check` render the [`Verdict`] and decide nothing themselves.

use super::{ClaimResult, Values};
use crate::scenario::Claim;
use schemars::JsonSchema;
use serde::Serialize;

/// One claim's judgements in one setting (the scenario as written, or a variant), one per seed.
#[derive(Debug, Clone, Default)]
pub struct Trials {
    pub seeds: Vec<u64>,
    /// On the scenario's runs, one per seed.
    pub on_scenario: Vec<ClaimResult>,
    /// On the ablation's runs, one per seed once the ablation ran: empty when the claim has none, or it has not
    /// run yet (the page runs it on demand). `Err` is why the ablated runs could not be made.
    pub on_ablation: Vec<Result<ClaimResult, String>>,
}

/// Why an ablation's judgement is broken: the ablated runs failed, or the claim could not be judged on them for
/// another reason than the claimed quantity being absent (a metric that does not exist without the mechanism is
/// the effect gone; a missing run is a broken ablation).
fn broken(r: &Result<ClaimResult, String>) -> Option<&str> {
    match r {
        Err(e) => Some(e),
        Ok(r) if !r.absent => r.error.as_deref(),
        Ok(_) => None,
    }
}

impl Trials {
    /// Seeds on which the claim held on the scenario.
    pub fn held(&self) -> usize {
        self.on_scenario.iter().filter(|r| r.holds).count()
    }

    /// Seeds on which the claim still held without its mechanism.
    fn still_holds(&self) -> usize {
        self.on_ablation.iter().filter(|r| r.as_ref().is_ok_and(|r| r.holds)).count()
    }

    fn broken(&self) -> usize {
        self.on_ablation.iter().filter(|r| broken(r).is_some()).count()
    }

    /// Holds on every seed, and its ablation (as far as it ran) fails on every seed.
    pub fn passes(&self) -> bool {
        self.held() == self.seeds.len() && self.still_holds() == 0 && self.broken() == 0
    }
}

/// What the runs show about a claim, read against its status.
#[derive(Debug, Clone, Serialize, PartialEq, JsonSchema)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum State {
    /// Holds on every seed and, for an effect claim, fails without its mechanism on every seed.
    Holds,
    /// Does not hold on some seed (or could not be judged there: see the verdict's `error`).
    Fails,
    /// Holds, but also without the mechanism it credits on some seed: the mechanism is not what gives it.
    NotCredited,
    /// Holds, but its ablation could not be judged: the patched scenario's runs failed, or lack what the claim
    /// reads. A defect of the scenario file, not a finding.
    AblationBroken { ablation_error: String },
    /// Kept as a finding the model does not reproduce, with the model's reason; `holds` says whether it
    /// nevertheless passed in this setting. Reported, never failed.
    NotReproduced { reason: String, holds: bool },
    /// The claim's status is out of date: a `not_reproduced` claim that passes in every setting, or whose reason
    /// does not say why. `why` says which and what to do.
    Stale { why: String },
    /// A homework's goal for the student's policy; `met` when it passes. Reported, never failed.
    Goal { met: bool },
}

/// A claim's ablation as judged.
#[derive(Debug, Clone, Serialize, PartialEq, JsonSchema)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct Ablated {
    /// What it switches off.
    pub label: String,
    /// Seeds on which it was judged: none until it ran (the page runs it on demand).
    pub judged: usize,
    /// Seeds on which the claim still held with the mechanism switched off.
    pub still_holds: usize,
    /// Seeds on which it could not be judged for another reason than the claimed quantity being gone.
    pub broken: usize,
    /// Its numbers on the verdict's seed (none when not judged there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Values>,
    /// Why it was not judged on the verdict's seed: the claimed quantity is gone (the effect gone with the
    /// mechanism), or what broke.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The verdict on one claim in one setting: its [`State`] and the numbers it rests on.
#[derive(Debug, Clone, Serialize, PartialEq, JsonSchema)]
#[cfg_attr(test, derive(ts_rs::TS), ts(optional_fields))]
pub struct Verdict {
    #[serde(flatten)]
    pub state: State,
    /// The seeds judged, in order.
    pub seeds: Vec<u64>,
    /// The seeds on which the claim did not hold on the scenario.
    pub failed_seeds: Vec<u64>,
    /// The seed whose numbers are shown: the first failing one, else the first.
    pub seed: u64,
    /// The numbers on that seed (none when the claim could not be judged there).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub values: Option<Values>,
    /// Why the claim could not be judged on that seed (a metric missing from a run, a job that did not finish).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// The claim's ablation, when it names one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub without: Option<Ablated>,
}

impl Verdict {
    /// Whether `schedsim check` fails on it: a claim that does not hold, a mechanism not credited, a broken
    /// ablation, a stale status. Not-reproduced findings and homework goals are reported, never failed.
    pub fn fails_check(&self) -> bool {
        matches!(self.state, State::Fails | State::NotCredited | State::AblationBroken { .. } | State::Stale { .. })
    }
}

/// The verdict on claim `c` from its trials in one setting. `everywhere` is whether the claim passes in every
/// setting of its file that has it, when the caller judged them all (`None` when it knows only this one, as
/// the page does): a `not_reproduced` claim is stale only when it is reproduced everywhere, since holding in one
/// variant does not make the paper's result reproduced.
pub fn verdict(c: &Claim, t: &Trials, everywhere: Option<bool>) -> Verdict {
    let failed_seeds: Vec<u64> =
        t.seeds.iter().zip(&t.on_scenario).filter(|(_, r)| !r.holds).map(|(s, _)| *s).collect();
    let pick = t.on_scenario.iter().position(|r| !r.holds).unwrap_or(0);
    let shown = t.on_scenario.get(pick);
    let without = c.without.as_ref().map(|ab| {
        let on = t.on_ablation.get(pick);
        Ablated {
            label: ab.label.clone(),
            judged: t.on_ablation.len(),
            still_holds: t.still_holds(),
            broken: t.broken(),
            values: on.and_then(|r| r.as_ref().ok()).and_then(|r| r.judged.clone()),
            error: on.and_then(|r| match r {
                Ok(r) => r.error.clone(),
                Err(e) => Some(e.clone()),
            }),
        }
    });
    let held_all = t.held() == t.seeds.len();
    let state = if c.goal() {
        State::Goal { met: t.passes() }
    } else if c.not_reproduced() {
        if let Some(why) = c.reason_defect() {
            State::Stale { why: format!("not reproduced, but {why}: state the mechanism and the model's cause") }
        } else if everywhere == Some(true) {
            State::Stale { why: "marked not_reproduced but reproduced: update its status".into() }
        } else {
            State::NotReproduced { reason: c.reason.clone().unwrap_or_default(), holds: t.passes() }
        }
    } else if !held_all {
        State::Fails
    } else if let Some(e) = t.on_ablation.iter().find_map(broken) {
        State::AblationBroken { ablation_error: e.to_string() }
    } else if t.still_holds() > 0 {
        State::NotCredited
    } else {
        State::Holds
    };
    Verdict {
        state,
        seeds: t.seeds.clone(),
        failed_seeds,
        seed: t.seeds.get(pick).copied().unwrap_or_default(),
        values: shown.and_then(|r| r.judged.clone()),
        error: shown.and_then(|r| r.error.clone()),
        without,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::evaluate_claim;
    use serde_json::{json, Value};

    fn claim(v: Value) -> Claim {
        serde_json::from_value(v).unwrap()
    }

    /// Two runs: `fast` answers in 5 ms, `slow` in 70 ms.
    fn runs(fast: f64) -> Vec<Value> {
        vec![
            json!({"policy":"fast","domains":{"x":{"response_ms":{"mean":fast}}}}),
            json!({"policy":"slow","domains":{"x":{"response_ms":{"mean":70.0}}}}),
        ]
    }

    fn effect(extra: Value) -> Claim {
        let mut c = json!({"text":"fast answers sooner","metric":"domains.x.response_ms.mean","lower":"fast",
                           "than":"slow","without":{"label":"boost off","patch":[]}});
        c.as_object_mut().unwrap().extend(extra.as_object().unwrap().clone());
        claim(c)
    }

    /// The claim judged on the scenario's runs (seed 1) and, when given, on the ablation's.
    fn one(c: &Claim, on: &[Value], off: Option<Result<Vec<Value>, String>>) -> Verdict {
        let t = Trials {
            seeds: vec![1],
            on_scenario: vec![evaluate_claim(c, on)],
            on_ablation: off.into_iter().map(|r| r.map(|runs| evaluate_claim(c, &runs))).collect(),
        };
        verdict(c, &t, None)
    }

    #[test]
    fn holds_when_it_fails_without_its_mechanism() {
        let v = one(&effect(json!({})), &runs(5.0), Some(Ok(runs(90.0))));
        assert_eq!(v.state, State::Holds);
        assert!(!v.fails_check());
        let without = v.without.unwrap();
        assert_eq!((without.judged, without.still_holds, without.broken), (1, 0, 0));
        assert_eq!(without.values.unwrap().runs["fast"]["domains.x.response_ms.mean"], 90.0);
    }

    #[test]
    fn fails_when_it_does_not_hold() {
        let v = one(&effect(json!({})), &runs(80.0), Some(Ok(runs(90.0))));
        assert_eq!(v.state, State::Fails);
        assert_eq!(v.failed_seeds, vec![1]);
        assert!(v.fails_check());
    }

    #[test]
    fn holding_without_the_mechanism_is_not_credited() {
        let v = one(&effect(json!({})), &runs(5.0), Some(Ok(runs(6.0))));
        assert_eq!(v.state, State::NotCredited);
        assert_eq!(v.without.as_ref().unwrap().still_holds, 1);
        assert!(v.fails_check());
    }

    /// A broken ablation (its runs failed, or lack a policy the claim reads) is its own verdict, not "fails
    /// without", which would read as a pass.
    #[test]
    fn a_broken_ablation_says_what_broke() {
        let c = effect(json!({}));
        let v = one(&c, &runs(5.0), Some(Err("the patch does not apply".into())));
        assert_eq!(v.state, State::AblationBroken { ablation_error: "the patch does not apply".into() });
        assert!(v.fails_check());
        let missing = vec![json!({"policy":"fast","domains":{"x":{"response_ms":{"mean":90.0}}}})];
        let v = one(&c, &runs(5.0), Some(Ok(missing)));
        match &v.state {
            State::AblationBroken { ablation_error: error } => {
                assert!(error.contains("no run of policy 'slow'"), "{error}")
            }
            other => panic!("{other:?}"),
        }
        // The claimed quantity gone from the ablated run is the effect gone: that holds.
        let gone = vec![json!({"policy":"fast","domains":{"x":{}}}), runs(5.0)[1].clone()];
        assert_eq!(one(&c, &runs(5.0), Some(Ok(gone))).state, State::Holds);
    }

    #[test]
    fn an_ablation_not_run_yet_leaves_the_claim_judged_on_the_scenario() {
        let v = one(&effect(json!({})), &runs(5.0), None);
        assert_eq!(v.state, State::Holds);
        assert_eq!(v.without.unwrap().judged, 0);
    }

    /// A policy whose id is `target` keeps its numbers apart from a `near` claim's targets.
    #[test]
    fn a_policy_named_target_does_not_collide() {
        let c = claim(json!({"text":"t","metric":"domains.x.cpu_share","policy":"target","near":"fair_share",
                             "within":0.1}));
        let run = vec![json!({"policy":"target","domains":{"x":{"cpu_share":0.3,"fair_share":0.25}}})];
        let v = one(&c, &run, None);
        assert_eq!(v.state, State::Holds);
        let values = v.values.unwrap();
        assert_eq!(values.runs["target"]["domains.x.cpu_share"], 0.3);
        assert_eq!(values.target.as_ref().unwrap()["domains.x.cpu_share"], 0.25);
        let json = serde_json::to_value(&values).unwrap();
        assert_eq!(json, json!({"runs":{"target":{"domains.x.cpu_share":0.3}},"target":{"domains.x.cpu_share":0.25}}));
    }

    #[test]
    fn a_not_reproduced_claim_is_stale_once_reproduced_everywhere() {
        let c = effect(json!({"status":"not_reproduced","paper":"2x","reason":"the model has no cache"}));
        let t = Trials {
            seeds: vec![1],
            on_scenario: vec![evaluate_claim(&c, &runs(5.0))],
            on_ablation: vec![Ok(evaluate_claim(&c, &runs(90.0)))],
        };
        match verdict(&c, &t, Some(true)).state {
            State::Stale { why } => assert!(why.contains("update its status"), "{why}"),
            other => panic!("{other:?}"),
        }
        // Passing in this setting alone (a variant fails it), or where the others are unknown, is no reproduction.
        for everywhere in [Some(false), None] {
            let v = verdict(&c, &t, everywhere);
            assert_eq!(v.state, State::NotReproduced { reason: "the model has no cache".into(), holds: true });
            assert!(!v.fails_check());
        }
        let bad = effect(json!({"status":"not_reproduced","reason":"not investigated"}));
        match one(&bad, &runs(80.0), None).state {
            State::Stale { why } => assert!(why.contains("state the mechanism"), "{why}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_goal_is_met_or_not_and_never_fails_the_check() {
        let goal = effect(json!({"status":"goal"}));
        assert_eq!(one(&goal, &runs(5.0), None).state, State::Goal { met: true });
        let v = one(&goal, &runs(80.0), None);
        assert_eq!(v.state, State::Goal { met: false });
        assert!(!v.fails_check());
    }

    /// An unfinished job explains the missing number where it shows.
    #[test]
    fn a_missing_value_says_why() {
        let c = claim(json!({"text":"t","metric":"jobs.*.makespan_ms","policy":"a","at_most":1000}));
        let run = vec![json!({"policy":"a","jobs":{"d/y":{"phases_done":3}}})];
        let v = one(&c, &run, None);
        assert_eq!(v.state, State::Fails);
        assert!(v.values.is_none());
        assert!(v.error.unwrap().starts_with("no makespan: jobs.d/y did not finish within the run"));
    }

    /// The schema generated from the declaration describes what is serialised.
    #[test]
    fn the_verdict_matches_its_schema() {
        let schema = crate::policy::params::generate::<Verdict>();
        let validator = jsonschema::validator_for(&schema).unwrap();
        let c = effect(json!({}));
        for v in [
            one(&c, &runs(5.0), Some(Ok(runs(90.0)))),
            one(&c, &runs(5.0), Some(Err("boom".into()))),
            one(&c, &[], None),
            one(&effect(json!({"status":"goal"})), &runs(5.0), None),
        ] {
            let j = serde_json::to_value(&v).unwrap();
            assert!(validator.is_valid(&j), "{j}");
        }
        assert!(!validator.is_valid(&json!({"kind":"holds"})), "seeds and seed are required");
    }

    #[test]
    fn the_verdict_serialises_tagged_by_kind() {
        let v = one(&effect(json!({})), &runs(5.0), Some(Err("boom".into())));
        let j = serde_json::to_value(&v).unwrap();
        assert_eq!(j["kind"], "ablation_broken");
        assert_eq!(j["error"], Value::Null, "the scenario's runs were judged");
        assert_eq!(j["without"]["error"], "boom");
        assert_eq!(j["values"]["runs"]["slow"]["domains.x.response_ms.mean"], 70.0);
    }
}
