//! A whole check of a scenario file: every claim, in the scenario as written and in each variant, for every
//! seed, judged on the scenario and, for an effect claim, on its ablation (the scenario with the credited
//! mechanism switched off). [`plan`] lists the runs; the caller makes them (the CLI on threads, Python in turn)
//! and hands the reports to [`Plan::collect`], which gives each claim its [`Verdict`].

use super::{evaluate, verdict, Trials, Verdict};
use crate::grid::seed_list;
use crate::patch::PatchBudget;
use crate::report::{self, RunOptions};
use crate::scenario::Scenario;
use serde_json::{json, Value};

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

/// The runs one setting of a file needs, in the order they are best started (each seed's ablations, then its
/// scenario), and the empty trials they fill. A file is checked one setting at a time (see [`run`]): each setting
/// and its ablations are built from the one parsed document when planned and dropped once judged, so a check holds
/// one setting's scenarios at a time.
#[derive(Debug, Clone)]
pub struct Plan {
    pub runs: Vec<Planned>,
    setting: Setting,
}

/// The number of settings of `base`: the scenario as written, then each variant.
pub fn settings_of(base: &Scenario) -> usize {
    base.variants.len() + 1
}

/// Setting `si` of `base`, built now: the scenario as written (0, label "") or variant `si - 1`, its patch paid for
/// from `budget`.
fn setting(base: &Scenario, si: usize, budget: &mut PatchBudget) -> Result<(String, Scenario), String> {
    if si == 0 {
        return Ok((String::new(), base.clone()));
    }
    let sc = base.variant(si - 1, budget).map_err(|e| e.to_string())?;
    Ok((base.variants[si - 1].label.clone(), sc))
}

/// Plans setting `si` of `base` (named `name` in labels and errors) with `seeds` consecutive seeds from the
/// setting's own, building it and its ablations from `budget`.
pub fn plan(name: &str, base: &Scenario, si: usize, seeds: u64, budget: &mut PatchBudget) -> Result<Plan, String> {
    let (label, sc) = setting(base, si, budget).map_err(|e| format!("{name}: {e}"))?;
    let list = seed_list(sc.seed, seeds).map_err(|e| format!("{name}: {e}"))?;
    let ids: Vec<String> = sc.policies.iter().map(|p| p.id.clone()).collect();
    let at = if label.is_empty() { String::new() } else { format!(" {{{label}}}") };
    let groups = ablation_groups(&sc, budget).map_err(|e| format!("{name}{at}: {e}"))?;
    let mut runs = Vec::new();
    for &s in &list {
        let seeded = |sc: &Scenario| report::with_overrides(sc, &RunOptions { seed: Some(s), ..RunOptions::default() });
        let here = format!("{name}{at}, seed {s}");
        for (claims, ablated) in &groups {
            let policies = group_policies(ablated, &sc, claims);
            let what = sc.claims[claims[0]].without.as_ref().map_or("", |a| a.label.as_str());
            runs.push(Planned {
                setting: si,
                label: format!("{here}, without '{what}'"),
                role: Role::Ablation(claims.clone()),
                scenario: seeded(ablated)?,
                policies,
            });
        }
        runs.push(Planned {
            setting: si,
            role: Role::Scenario,
            scenario: seeded(&sc)?,
            policies: ids.clone(),
            label: here,
        });
    }
    let claims = vec![Trials { seeds: list, ..Trials::default() }; sc.claims.len()];
    Ok(Plan { runs, setting: Setting { label, scenario: outline(&sc), claims } })
}

/// What the verdicts and tables read of a setting (its id, title, policies and claims), without its domains or
/// document: kept for every setting while the others run.
fn outline(sc: &Scenario) -> Scenario {
    let mut o = sc.clone();
    o.domains = Vec::new();
    o.doc = Default::default();
    o
}

/// Builds every setting of `base` and its ablations in turn, each checked against `max_events` (when given) and
/// dropped before the next, so that an error or a run over the limit is reported before anything runs.
pub fn preflight(
    name: &str,
    base: &Scenario,
    seeds: u64,
    max_events: Option<u64>,
    max_patch_work: u64,
) -> Result<(), String> {
    let mut budget = PatchBudget::new(max_patch_work);
    budget.check_total(base.check_work(), "its variants and ablations").map_err(|e| format!("{name}: {e}"))?;
    for si in 0..settings_of(base) {
        let p = plan(name, base, si, seeds, &mut budget)?;
        if let Some(max) = max_events {
            // Seeds do not change the estimate: the first seed's runs stand for all.
            for r in p.runs.iter().take_while(|r| r.scenario.seed == p.runs[0].scenario.seed) {
                crate::cost::within(&r.scenario, &r.policies, max).map_err(|e| format!("{}: {e}", r.label))?;
            }
        }
    }
    Ok(())
}

impl Plan {
    /// Judges the setting's claims on the planned runs' run objects (one entry per planned run, in order). A
    /// scenario's run that failed fails the check; an ablation's is that ablation broken, with its error.
    pub fn collect(self, reports: Vec<Result<Vec<Value>, String>>) -> Result<Setting, String> {
        let Plan { runs, mut setting } = self;
        if reports.len() != runs.len() {
            return Err(format!("{} reports for {} planned runs", reports.len(), runs.len()));
        }
        // Planned seed by seed in order, so pushing keeps each claim's trials in seed order.
        let trials = &mut setting.claims;
        for (p, rep) in runs.into_iter().zip(reports) {
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
        Ok(setting)
    }
}

/// A file's check from its settings' trials, in setting order.
pub fn file_check(base: &Scenario, settings: Vec<Setting>) -> FileCheck {
    FileCheck { scenario: outline(base), settings }
}

/// Checks `base` setting by setting, making each planned run in turn (each planned run's policies through
/// [`report::run_scenario`]): what Python's `check` does. With `opts.max_events`, refuses before running anything
/// if a run is estimated above it, as the CLI does; patches are paid for from `max_patch_work`.
pub fn run(
    name: &str,
    base: &Scenario,
    seeds: u64,
    opts: &RunOptions,
    max_patch_work: u64,
) -> Result<FileCheck, String> {
    preflight(name, base, seeds, opts.max_events, max_patch_work)?;
    let mut budget = PatchBudget::new(max_patch_work);
    let mut settings = Vec::new();
    for si in 0..settings_of(base) {
        let p = plan(name, base, si, seeds, &mut budget)?;
        let reports = p
            .runs
            .iter()
            .map(|r| report::run_scenario(&r.scenario, &r.policies, opts).map(|x| x.runs).map_err(|e| e.to_string()))
            .collect();
        settings.push(p.collect(reports)?);
    }
    Ok(file_check(base, settings))
}

/// Claims that share an ablation (the same label and patch) share its runs: (claim indices, ablated scenario),
/// each ablation built once and paid for from `budget`.
fn ablation_groups(sc: &Scenario, budget: &mut PatchBudget) -> Result<Vec<(Vec<usize>, Scenario)>, String> {
    let mut groups = Vec::new();
    for first in sc.distinct_ablations() {
        let same = &sc.claims[first].without;
        let ks: Vec<usize> = (first..sc.claims.len()).filter(|&k| sc.claims[k].without == *same).collect();
        let ablated =
            sc.ablated_within(first, budget).expect("the claim has an ablation").map_err(|e| e.to_string())?;
        groups.push((ks, ablated));
    }
    Ok(groups)
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
        let p = plan("ten-slots", &sc, 0, 2, &mut PatchBudget::default()).unwrap();
        let ablations = p.runs.iter().filter(|r| matches!(r.role, Role::Ablation(_))).count();
        assert!(ablations >= 2, "each seed's ablations are planned: {ablations}");
        let file = run("ten-slots", &sc, 2, &RunOptions::default(), crate::patch::MAX_PATCH_WORK).unwrap();
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
        let p = plan("f", &sc, 0, 1, &mut PatchBudget::default()).unwrap();
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
        let file = file_check(&sc, vec![p.collect(ok).unwrap()]);
        assert_eq!(file.verdict(0, k).state, State::AblationBroken { ablation_error: "ran out of events".into() });
    }
}
