//! A claim as the scenario file states it: the metric, the paper's value, the bound it is judged by, its
//! ablation, and whether it is expected to hold (`status`, with the model's reason when it is not reproduced).

use super::*;

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub text: String,
    pub metric: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub higher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub than: Option<String>,
    /// Compare against this metric of the `than` run instead of the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub than_metric: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_at_least: Option<f64>,
    /// An upper bound on the factor between the two sides: a number, or a metric of a run times a scale (001
    /// Corollary 1: CPS's speed-up over PS is at most 2|Lag|).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor_at_most: Option<FactorBound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<f64>,
    /// Tolerance of `near` relative to the target [%].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<f64>,
    /// The counterfactual of an effect claim: the scenario with the credited mechanism switched off. `check`
    /// passes the claim only if it holds on the scenario and fails on this ablation, for every seed and variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without: Option<Ablation>,
    /// `not_reproduced`: the paper's result does not come out of the model (see `reason`); reported, not failed.
    /// `goal`: a homework's goal for a policy the student writes (the file's starting script need not meet it);
    /// judged and reported like any claim, not failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ClaimStatus>,
    /// What the paper reports for this statement (value and figure), for the fidelity table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper: Option<String>,
    /// Why a `not_reproduced` claim does not hold in the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A claim's ablation: a label for people and a JSON Patch (RFC 6902) on the scenario that switches the
/// mechanism off (a policy parameter, a domain's type, a feature flag).
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ablation {
    pub label: String,
    pub patch: Value,
}

#[derive(Debug, Clone, Copy, Deserialize, serde::Serialize, PartialEq, Eq)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    /// The paper's result is not reproduced by the model; the claim stays as a finding, with `paper` and
    /// `reason`.
    NotReproduced,
    /// A homework's goal: what the student's policy should achieve. The scenario ships a starting script that
    /// need not meet it, so `check` reports it and does not fail it.
    Goal,
}

/// The most a `higher`/`lower` claim's factor may be.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(untagged)]
pub enum FactorBound {
    Number(f64),
    /// `scale` times the value of `metric` (which must match one number) in the run of `policy`, taken as at
    /// least `min` (001 Lemma 1: an ideal PS deviates by one slot, so 2|Lag| never bounds below 2).
    Metric {
        policy: String,
        metric: String,
        #[serde(default = "unit_scale")]
        scale: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
    },
}

pub(super) fn unit_scale() -> f64 {
    1.0
}

impl Claim {
    /// The policy whose run this claim is about (reported in that run's `claims`).
    pub fn subject(&self) -> Option<&str> {
        self.lower.as_deref().or(self.higher.as_deref()).or(self.policy.as_deref())
    }

    /// Whether the claim is kept as a finding the model does not reproduce.
    pub fn not_reproduced(&self) -> bool {
        self.status == Some(ClaimStatus::NotReproduced)
    }

    /// Whether the claim is a homework's goal (judged, reported, never failed by `check`).
    pub fn goal(&self) -> bool {
        self.status == Some(ClaimStatus::Goal)
    }

    /// What is wrong with a `not_reproduced` claim's reason, if anything: a reason states the mechanism and the
    /// model's cause, so that it stays true as work lands. It may not name a work item ("issue"), a branch ("on
    /// main"), or say the cause is unknown ("not investigated"); it must exist.
    pub fn reason_defect(&self) -> Option<&'static str> {
        if !self.not_reproduced() {
            return None;
        }
        let Some(reason) = self.reason.as_deref().filter(|r| !r.trim().is_empty()) else {
            return Some("it gives no reason");
        };
        let r = reason.to_lowercase();
        // Whole words only: "issues" (the verb) and "domain" are fine.
        let word = |w: &str| {
            r.match_indices(w).any(|(i, _)| {
                let before = r[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
                let after = r[i + w.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
                before && after
            })
        };
        if word("issue") {
            Some("its reason names a work item (\"issue\")")
        } else if word("on main") || word("main branch") || word("held on main") {
            Some("its reason names a branch (\"main\")")
        } else if r.contains("not investigated") || r.contains("uninvestigated") {
            Some("its reason says the cause was not investigated")
        } else {
            None
        }
    }

    /// Every policy whose run the claim reads.
    pub fn policies(&self) -> Vec<&str> {
        let bound = match &self.factor_at_most {
            Some(FactorBound::Metric { policy, .. }) => Some(policy.as_str()),
            _ => None,
        };
        let mut out: Vec<&str> = [self.lower.as_deref(), self.higher.as_deref(), self.than.as_deref()]
            .into_iter()
            .chain([self.policy.as_deref(), bound])
            .flatten()
            .collect();
        out.dedup();
        out
    }
}
