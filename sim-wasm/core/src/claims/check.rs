//! A whole check of a scenario file: every claim, in the scenario as written and in each variant, for every
//! seed, judged on the scenario and, for an effect claim, on its ablation (the scenario with the credited
//! mechanism switched off). [`plan`] lists the runs; the caller makes them (the CLI on threads, Python in turn)
//! and hands the reports to [`Plan::collect`], which gives each claim its [`Verdict`].

use super::{evaluate, verdict, Trials, Verdict};
use crate::grid::seed_list;
use crate::report::{self, RunOptions};
use crate::scenario::Scenario;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// One setting of a scenario file: the scenario as written (label "") or a variant, whose claims may differ.
#[derive(Debug, Clone)]
pub struct Setting {
    pub label: String,
    pub scenario: Scenario,
    /// One per claim of `scenario`.
    pub claims: Vec<Trials>,
}

impl Setting {
    /// The trials of the claim with this text, if the setting has it.
    pub fn claim(&self, text: &str) -> Option<&Trials> {
        self.scenario.claims.iter().position(|c| c.text == text).map(|k| &self.claims[k])
    }
}

/// A scenario file's trials: the scenario as written first, then its variants.
#[derive(Debug, Clone)]
pub struct FileCheck {
    pub scenario: Scenario,
    pub settings: Vec<Setting>,
}

impl FileCheck {
    /// Whether the claim with this text passes in every setting that has it.
    pub fn passes_everywhere(&self, text: &str) -> bool {
        self.settings.iter().all(|set| set.claim(text).is_none_or(Trials::passes))
    }

    /// The verdicts on the claim with this text in each setting that has it, with the setting's label.
    pub fn verdicts_of(&self, text: &str) -> Vec<(&str, Verdict)> {
        self.settings
            .iter()
            .enumerate()
            .filter_map(|(s, set)| {
                let k = set.scenario.claims.iter().position(|c| c.text == text)?;
                Some((set.label.as_str(), self.verdict(s, k)))
            })
            .collect()
    }

    /// Every claim's verdict, setting by setting, as `schedsim check --json` prints them and Python's `check`
    /// returns them: `{"scenario", "variant" (null as written), "policy", "text", "holds" (on every seed of the
    /// scenario), "held" (seeds), "failed_seeds", "values" (the report's, of the first failing seed, else the
    /// first), "verdict"}`.
    pub fn results(&self) -> Vec<Value> {
        let mut out = Vec::new();
        for (s, set) in self.settings.iter().enumerate() {
            for (k, (c, trials)) in set.scenario.claims.iter().zip(&set.claims).enumerate() {
                let v = self.verdict(s, k);
                let shown = trials.on_scenario.iter().position(|r| !r.holds).unwrap_or(0);
                out.push(json!({
                    "scenario": self.scenario.id,
                    "variant": (!set.label.is_empty()).then_some(&set.label),
                    "policy": c.subject(),
                    "text": c.text,
                    "holds": v.failed_seeds.is_empty(),
                    "held": v.seeds.len() - v.failed_seeds.len(),
                    "failed_seeds": v.failed_seeds,
                    "values": trials.on_scenario.get(shown).map_or(Value::Null, |r| r.values.clone()),
                    "verdict": v,
                }));
            }
        }
        out
    }

    /// The verdict on claim `k` of setting `s`.
    pub fn verdict(&self, s: usize, k: usize) -> Verdict {
        let set = &self.settings[s];
        let c = &set.scenario.claims[k];
        verdict(c, &set.claims[k], Some(self.passes_everywhere(&c.text)))
    }
}

/// What a planned batch of runs is for.
#[derive(Debug, Clone)]
pub enum Role {
    Scenario,
    /// The ablation these claims (indices) share.
    Ablation(Vec<usize>),
}

/// One batch of runs a check needs: a setting's scenario (or its ablation) at one seed, and the policies to run.
#[derive(Debug, Clone)]
pub struct Planned {
    pub setting: usize,
    pub role: Role,
    /// With the seed set.
    pub scenario: Scenario,
    pub policies: Vec<String>,
    /// For progress and errors: the file, the variant, the seed, the ablation.
    pub label: String,
}

/// The runs a check of one file needs, in the order they are best started (each seed's ablations, then its
/// scenario), and the empty trials they fill.
#[derive(Debug, Clone)]
pub struct Plan {
    pub runs: Vec<Planned>,
    check: FileCheck,
}

/// Plans the check of `base` (named `name` in labels and errors) with `seeds` consecutive seeds from each
/// setting's own.
pub fn plan(name: &str, base: &Scenario, seeds: u64) -> Result<Plan, String> {
    let mut settings = vec![(String::new(), base.clone())];
    for v in &base.variants {
        let sc = v.scenario.as_deref().ok_or_else(|| format!("{name}: variant '{}' was not built", v.label))?;
        settings.push((v.label.clone(), sc.clone()));
    }
    let mut runs = Vec::new();
    let mut out = Vec::new();
    for (si, (label, sc)) in settings.into_iter().enumerate() {
        let list = seed_list(sc.seed, seeds).map_err(|e| format!("{name}: {e}"))?;
        let ids: Vec<String> = sc.policies.iter().map(|p| p.id.clone()).collect();
        let at = if label.is_empty() { String::new() } else { format!(" {{{label}}}") };
        for &s in &list {
            let scenario = report::with_overrides(&sc, &RunOptions { seed: Some(s), ..RunOptions::default() })?;
            let here = format!("{name}{at}, seed {s}");
            for (claims, ablated) in ablation_groups(&scenario).map_err(|e| format!("{here}: {e}"))? {
                let policies = group_policies(&ablated, &scenario, &claims);
                let what = scenario.claims[claims[0]].without.as_ref().map_or("", |a| a.label.as_str());
                runs.push(Planned {
                    setting: si,
                    label: format!("{here}, without '{what}'"),
                    role: Role::Ablation(claims),
                    scenario: ablated,
                    policies,
                });
            }
            runs.push(Planned { setting: si, role: Role::Scenario, scenario, policies: ids.clone(), label: here });
        }
        let claims = vec![Trials { seeds: list, ..Trials::default() }; sc.claims.len()];
        out.push(Setting { label, scenario: sc, claims });
    }
    Ok(Plan { runs, check: FileCheck { scenario: base.clone(), settings: out } })
}

impl Plan {
    /// Judges every claim on the planned runs' run objects (one entry per planned run, in order). A scenario's
    /// run that failed fails the check; an ablation's is that ablation broken, with its error.
    pub fn collect(self, reports: Vec<Result<Vec<Value>, String>>) -> Result<FileCheck, String> {
        let Plan { runs, mut check } = self;
        if reports.len() != runs.len() {
            return Err(format!("{} reports for {} planned runs", reports.len(), runs.len()));
        }
        // Planned seed by seed in order, so pushing keeps each claim's trials in seed order.
        for (p, rep) in runs.into_iter().zip(reports) {
            let trials = &mut check.settings[p.setting].claims;
            match (p.role, rep) {
                (Role::Scenario, Ok(runs)) => {
                    for (k, r) in evaluate(&p.scenario, &runs).into_iter().enumerate() {
                        trials[k].on_scenario.push(r);
                    }
                }
                (Role::Scenario, Err(e)) => return Err(format!("{}: {e}", p.label)),
                (Role::Ablation(ks), Ok(runs)) => {
                    let results = evaluate(&p.scenario, &runs);
                    for k in ks {
                        trials[k].on_ablation.push(Ok(results[k].clone()));
                    }
                }
                (Role::Ablation(ks), Err(e)) => {
                    for k in ks {
                        trials[k].on_ablation.push(Err(e.clone()));
                    }
                }
            }
        }
        Ok(check)
    }
}

/// Plans and makes every run of a check in turn (each planned run's policies through [`report::run_scenario`]),
/// then collects them: what Python's `check` does. With `opts.max_events`, refuses before running anything if a
/// run is estimated above it, as the CLI does.
pub fn run(name: &str, base: &Scenario, seeds: u64, opts: &RunOptions) -> Result<FileCheck, String> {
    let plan = plan(name, base, seeds)?;
    if let Some(max) = opts.max_events {
        for p in &plan.runs {
            crate::cost::within(&p.scenario, &p.policies, max).map_err(|e| format!("{}: {e}", p.label))?;
        }
    }
    let reports = plan
        .runs
        .iter()
        .map(|p| report::run_scenario(&p.scenario, &p.policies, opts).map(|r| r.runs).map_err(|e| e.to_string()))
        .collect();
    plan.collect(reports)
}

/// Claims that share an ablation (the same label and patch) share its runs: (claim indices, ablated scenario).
fn ablation_groups(sc: &Scenario) -> Result<Vec<(Vec<usize>, Scenario)>, String> {
    let mut groups: BTreeMap<String, (Vec<usize>, Scenario)> = BTreeMap::new();
    for (k, c) in sc.claims.iter().enumerate() {
        let Some(ab) = &c.without else { continue };
        let key = serde_json::to_string(ab).expect("an ablation serialises");
        if let Some((ks, _)) = groups.get_mut(&key) {
            ks.push(k);
            continue;
        }
        let ablated = sc.ablated(k).expect("the claim has an ablation").map_err(|e| e.to_string())?;
        groups.insert(key, (vec![k], ablated));
    }
    let mut v: Vec<_> = groups.into_values().collect();
    v.sort_by_key(|(ks, _)| ks[0]);
    Ok(v)
}

/// The policies the group's claims read, in the ablated scenario's order.
fn group_policies(ablated: &Scenario, sc: &Scenario, claims: &[usize]) -> Vec<String> {
    let wanted: Vec<&str> = claims.iter().flat_map(|&k| sc.claims[k].policies()).collect();
    ablated.policies.iter().filter(|p| wanted.contains(&p.id.as_str())).map(|p| p.id.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::claims::State;

    fn library(file: &str) -> Scenario {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios").join(file);
        Scenario::from_json(&std::fs::read_to_string(path).unwrap()).unwrap()
    }

    /// A library scenario checked end to end passes, each claim's ablation judged on every seed.
    #[test]
    fn a_library_file_passes() {
        let sc = library("p001-sec2-ten-slots.json");
        let p = plan("ten-slots", &sc, 2).unwrap();
        let ablations = p.runs.iter().filter(|r| matches!(r.role, Role::Ablation(_))).count();
        assert!(ablations >= 2, "each seed's ablations are planned: {ablations}");
        let file = run("ten-slots", &sc, 2, &RunOptions::default()).unwrap();
        for k in 0..sc.claims.len() {
            let v = file.verdict(0, k);
            assert_eq!(v.seeds.len(), 2);
            assert!(!v.fails_check(), "{v:?}");
            assert_eq!(v.without.as_ref().map(|w| w.judged), sc.claims[k].without.as_ref().map(|_| 2));
        }
    }

    /// An ablation whose runs fail is that claim's ablation broken; the scenario's own run failing fails the check.
    #[test]
    fn a_failed_ablation_run_breaks_the_ablation() {
        let sc = library("p001-sec2-ten-slots.json");
        let p = plan("f", &sc, 1).unwrap();
        let k = sc.claims.iter().position(|c| c.without.is_some() && !c.not_reproduced()).unwrap();
        let reports: Vec<_> = p
            .runs
            .iter()
            .map(|r| match r.role {
                Role::Scenario => Err("scenario failed".to_string()),
                Role::Ablation(_) => Err("ran out of events".to_string()),
            })
            .collect();
        assert!(p.clone().collect(reports).unwrap_err().contains("scenario failed"));
        let ok: Vec<_> = p
            .runs
            .iter()
            .map(|r| match r.role {
                Role::Scenario => report::run_scenario(&r.scenario, &r.policies, &RunOptions::default())
                    .map(|x| x.runs)
                    .map_err(|e| e.to_string()),
                Role::Ablation(_) => Err("ran out of events".to_string()),
            })
            .collect();
        let file = p.collect(ok).unwrap();
        assert_eq!(file.verdict(0, k).state, State::AblationBroken { ablation_error: "ran out of events".into() });
    }
}
