//! `schedsim check` and `schedsim fidelity`: every claim of every scenario, in every variant and for every seed,
//! judged on the scenario and, for an effect claim, on its ablation (the scenario with the credited mechanism
//! switched off), where it must fail. The same outcomes make the fidelity table (`docs/fidelity.md`).

use schedsim_cli::batch::{self, Batch};
use schedsim_core::claims::{self, ClaimResult};
use schedsim_core::cost;
use schedsim_core::patch::PatchBudget;
use schedsim_core::report::{self, Report, RunOptions};
use schedsim_core::scenario::Scenario;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// One claim's results in one setting (the scenario or a variant), one entry per seed.
pub struct ClaimOutcome {
    pub seeds: Vec<u64>,
    pub on_scenario: Vec<ClaimResult>,
    /// Empty when the claim has no ablation.
    pub on_ablation: Vec<ClaimResult>,
}

impl ClaimOutcome {
    fn held(&self) -> usize {
        self.on_scenario.iter().filter(|r| r.holds).count()
    }
    /// Seeds where the ablated run still satisfies the claim, or could not be judged for another reason than the
    /// claimed quantity being absent (a metric that does not exist without the mechanism is the effect gone; a
    /// missing run is a broken ablation).
    fn ablation_held(&self) -> usize {
        self.on_ablation.iter().filter(|r| r.holds || (r.error.is_some() && !r.absent)).count()
    }
    /// Holds on every seed, and its ablation (if any) fails on every seed.
    pub fn passes(&self) -> bool {
        self.held() == self.seeds.len() && self.ablation_held() == 0
    }
}

/// One setting of a scenario file: the scenario as written (label "") or a variant, whose claims may differ.
pub struct Setting {
    pub label: String,
    pub scenario: Scenario,
    /// One per claim of `scenario`.
    pub claims: Vec<ClaimOutcome>,
}

impl Setting {
    /// The outcome of the claim with this text, if the setting has it.
    fn claim(&self, text: &str) -> Option<&ClaimOutcome> {
        self.scenario.claims.iter().position(|c| c.text == text).map(|k| &self.claims[k])
    }
}

/// A scenario file's outcomes: the scenario as written first, then its variants.
pub struct FileOutcome {
    pub path: PathBuf,
    pub scenario: Scenario,
    pub settings: Vec<Setting>,
}

/// What a batch of runs is for.
enum Role {
    Scenario,
    /// The ablation shared by these claims.
    Ablation(Vec<usize>),
}

/// Setting `si` of a scenario file: the scenario as written (0) or variant `si - 1`, built now (a variant's patch
/// paid for from `budget`).
fn setting(base: &Scenario, si: usize, budget: &mut PatchBudget) -> Result<(String, Scenario), String> {
    if si == 0 {
        return Ok((String::new(), base.clone()));
    }
    let sc = base.variant(si - 1, budget).map_err(|e| e.to_string())?;
    Ok((base.variants[si - 1].label.clone(), sc))
}

/// What the verdicts read of a setting (its id and claims), without its domains or document: kept for every
/// setting while the others run, so a file's memory is one setting at a time plus these.
fn outline(sc: &Scenario) -> Scenario {
    let mut o = sc.clone();
    o.domains = Vec::new();
    o.doc = Default::default();
    o
}

/// Runs every file's scenario, variants and ablations with `seeds` consecutive seeds; refuses before running
/// anything if a run is estimated above `max_events` or a file's patches (variants and ablations) above
/// `max_patch_work` bytes of patch work (see `schedsim_core::patch`). Each setting and each ablation is built,
/// run and dropped before the next, so memory holds one setting's runs at a time.
pub fn run_all(
    files: &[(PathBuf, Scenario)],
    seeds: u64,
    jobs: usize,
    max_events: u64,
    max_patch_work: u64,
) -> Result<Vec<FileOutcome>, String> {
    // First every setting and ablation is built (validated) and estimated, one at a time, so that an error or a
    // run over the limit is reported before anything runs.
    for (path, base) in files {
        let at = |e: String| format!("{}: {e}", path.display());
        let mut budget = PatchBudget::new(max_patch_work);
        budget.check_total(base.check_work(), "its variants and ablations").map_err(at)?;
        for si in 0..=base.variants.len() {
            let (label, sc) = setting(base, si, &mut budget).map_err(at)?;
            let at = |e: String| if label.is_empty() { at(e) } else { at(format!("{{{label}}}: {e}")) };
            batch::seed_list(sc.seed, seeds).map_err(at)?;
            let ids: Vec<String> = sc.policies.iter().map(|p| p.id.clone()).collect();
            cost::within(&sc, &ids, max_events).map_err(at)?;
            for (claims, ablated) in ablation_groups(&sc, &mut budget).map_err(at)? {
                let policies = group_policies(&ablated, &sc, &claims);
                cost::within(&ablated, &policies, max_events)
                    .map_err(|e| at(format!("without '{}': {e}", ablation_label(&sc, claims[0]))))?;
            }
        }
    }
    let opts = RunOptions { max_events: Some(max_events), ..RunOptions::default() };
    let mut out = Vec::new();
    for (path, base) in files {
        let mut budget = PatchBudget::new(max_patch_work);
        let mut settings = Vec::new();
        for si in 0..=base.variants.len() {
            let (label, sc) = setting(base, si, &mut budget)?;
            let list = batch::seed_list(sc.seed, seeds).map_err(|e| format!("{}: {e}", path.display()))?;
            let at = if label.is_empty() { String::new() } else { format!(" {{{label}}}") };
            let name = |s: u64| format!("{}{at}, seed {s}", path.display());
            let mut claims: Vec<ClaimOutcome> = sc
                .claims
                .iter()
                .map(|_| ClaimOutcome { seeds: list.clone(), on_scenario: Vec::new(), on_ablation: Vec::new() })
                .collect();
            // The scenario, then each ablation: one batch per seed, run and judged before the next is built.
            let ids: Vec<String> = sc.policies.iter().map(|p| p.id.clone()).collect();
            let mut roles = vec![(Role::Scenario, sc.clone(), ids)];
            for (ks, ablated) in ablation_groups(&sc, &mut budget)? {
                let policies = group_policies(&ablated, &sc, &ks);
                roles.push((Role::Ablation(ks), ablated, policies));
            }
            for (role, scenario, policies) in roles {
                let mut batches = Vec::new();
                for &s in &list {
                    let seeded =
                        report::with_overrides(&scenario, &RunOptions { seed: Some(s), ..RunOptions::default() })?;
                    let label = match &role {
                        Role::Scenario => name(s),
                        Role::Ablation(ks) => format!("{}, without '{}'", name(s), ablation_label(&sc, ks[0])),
                    };
                    batches.push(Batch { scenario: seeded, policies: policies.clone(), label });
                }
                let reports = batch::run(&batches, &opts, jobs, "runs")?;
                // Batches are in seed order, so pushing keeps each outcome's results in seed order.
                for (b, rep) in batches.iter().zip(reports) {
                    let results = judge(&b.scenario, &rep);
                    match &role {
                        Role::Scenario => {
                            for (k, r) in results.into_iter().enumerate() {
                                claims[k].on_scenario.push(r);
                            }
                        }
                        Role::Ablation(ks) => {
                            for &k in ks {
                                claims[k].on_ablation.push(results[k].clone());
                            }
                        }
                    }
                }
            }
            settings.push(Setting { label, scenario: outline(&sc), claims });
        }
        out.push(FileOutcome { path: path.clone(), scenario: outline(base), settings });
    }
    Ok(out)
}

fn judge(sc: &Scenario, rep: &Report) -> Vec<ClaimResult> {
    claims::evaluate(sc, &rep.runs)
}

fn ablation_label(sc: &Scenario, k: usize) -> &str {
    sc.claims[k].without.as_ref().map_or("", |a| a.label.as_str())
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

/// Totals of a check.
#[derive(Default)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub not_reproduced: usize,
    /// Homework goals (reported, never failed).
    pub goals: usize,
}

/// The lines `schedsim check` prints, and the tally. `show_seeds` adds per-seed counts (with `--seeds`).
pub fn render(outcomes: &[FileOutcome], show_seeds: bool) -> (String, Tally) {
    let mut text = String::new();
    let mut t = Tally::default();
    for f in outcomes {
        // A not_reproduced claim is stale only if it now holds, with its ablation failing, in every setting that
        // has it: holding in one variant does not make the paper's result reproduced.
        let reproduced = |text: &str| f.settings.iter().all(|set| set.claim(text).is_none_or(ClaimOutcome::passes));
        for set in &f.settings {
            let variant = if set.label.is_empty() { String::new() } else { format!(" {{{}}}", set.label) };
            for (k, o) in set.claims.iter().enumerate() {
                let c = &set.scenario.claims[k];
                let n = o.seeds.len();
                let nr = c.not_reproduced();
                let pass = o.passes();
                let stale = nr && reproduced(&c.text);
                let bad_reason = c.reason_defect();
                let mark = match (nr, pass) {
                    _ if c.goal() => "goal",
                    (false, true) => "ok  ",
                    (false, false) => "FAIL",
                    (true, _) if stale || bad_reason.is_some() => "FAIL",
                    (true, _) => "n/r ",
                };
                match mark {
                    "ok  " => t.passed += 1,
                    "n/r " => t.not_reproduced += 1,
                    "goal" => t.goals += 1,
                    _ => t.failed += 1,
                }
                let policy = c.subject().unwrap_or("");
                let _ = write!(text, "{mark} {}{variant} [{policy}] {}", f.scenario.id, c.text);
                let mut notes = Vec::new();
                if show_seeds {
                    let failed: Vec<String> = o
                        .seeds
                        .iter()
                        .zip(&o.on_scenario)
                        .filter(|(_, r)| !r.holds)
                        .map(|(s, _)| s.to_string())
                        .collect();
                    notes.push(match failed.len() {
                        0 => format!("{}/{n} seeds", o.held()),
                        1 => format!("{}/{n} seeds; failed: seed {}", o.held(), failed[0]),
                        _ => format!("{}/{n} seeds; failed: seeds {}", o.held(), failed.join(", ")),
                    });
                }
                if let Some(ab) = &c.without {
                    let still = o.ablation_held();
                    notes.push(if still == 0 {
                        format!("without '{}': fails {n}/{n}", ab.label)
                    } else {
                        format!("without '{}': still holds {still}/{n}", ab.label)
                    });
                }
                if let Some(why) = bad_reason {
                    notes.push(format!("not reproduced, but {why}: state the mechanism and the model's cause"));
                }
                if nr {
                    notes.push(match (stale, pass) {
                        (true, _) => "marked not_reproduced but reproduced: update its status".into(),
                        (false, true) => "not reproduced; holds in this setting".into(),
                        (false, false) => "not reproduced".into(),
                    });
                }
                if !notes.is_empty() {
                    let _ = write!(text, " ({})", notes.join("; "));
                }
                text.push('\n');
                // Values: of the first failing seed, or the first seed; and the ablated run's beside them.
                let pick = o.on_scenario.iter().position(|r| !r.holds).unwrap_or(0);
                let show = !pass || c.without.is_some() || nr;
                if let (true, Some(r)) = (show, o.on_scenario.get(pick)) {
                    let which = if show_seeds { format!(" (seed {})", o.seeds[pick]) } else { String::new() };
                    let _ = writeln!(text, "       values{which}: {}", r.values);
                    if let Some(e) = &r.error {
                        let _ = writeln!(text, "       error: {e}");
                    }
                    if let Some(a) = o.on_ablation.get(pick) {
                        let _ = writeln!(text, "       without: {}", a.values);
                        if let Some(e) = &a.error {
                            let _ = writeln!(text, "       without, error: {e}");
                        }
                    }
                }
            }
        }
    }
    (text, t)
}

/// Mean and range of one number over seeds.
fn spread(xs: &[f64]) -> String {
    let n = xs.len() as f64;
    let mean = xs.iter().sum::<f64>() / n;
    let (lo, hi) = xs.iter().fold((f64::INFINITY, f64::NEG_INFINITY), |(a, b), &x| (a.min(x), b.max(x)));
    if xs.len() < 2 || (hi - lo).abs() <= 1e-12 * mean.abs().max(1.0) {
        fmt_num(mean)
    } else {
        format!("{} [{}, {}]", fmt_num(mean), fmt_num(lo), fmt_num(hi))
    }
}

/// Three significant figures, plain notation.
fn fmt_num(x: f64) -> String {
    if x == 0.0 || !x.is_finite() {
        return format!("{x}");
    }
    let digits = (2 - x.abs().log10().floor() as i32).clamp(0, 6) as usize;
    let s = format!("{x:.digits$}");
    if s.contains('.') {
        s.trim_end_matches('0').trim_end_matches('.').to_string()
    } else {
        s
    }
}

/// `policy: path value; ...` with each number as mean [min, max] over the seeds, at most `most` numbers.
fn values_cell(results: &[ClaimResult], most: usize) -> String {
    let mut series: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut order = Vec::new();
    for r in results {
        let Some(obj) = r.values.as_object() else { continue };
        for (who, vals) in obj {
            match vals {
                Value::Object(m) => {
                    for (path, x) in m {
                        if let Some(x) = x.as_f64() {
                            let key = (who.clone(), path.clone());
                            if !series.contains_key(&key) {
                                order.push(key.clone());
                            }
                            series.entry(key).or_default().push(x);
                        }
                    }
                }
                v => {
                    if let Some(x) = v.as_f64() {
                        let key = (who.clone(), String::new());
                        if !series.contains_key(&key) {
                            order.push(key.clone());
                        }
                        series.entry(key).or_default().push(x);
                    }
                }
            }
        }
    }
    // Seeds on which the claim could not be judged (a metric missing: a job that never finished, a run without
    // the quantity): their numbers are not there, so no mean is shown over the seeds that had them.
    let unjudged: Vec<&ClaimResult> = results.iter().filter(|r| r.error.is_some()).collect();
    let note = unjudged.first().map(|r| {
        format!("not judged on {} of {} seeds: {}", unjudged.len(), results.len(), r.error.as_deref().unwrap_or(""))
    });
    if order.is_empty() {
        return note.unwrap_or_else(|| "—".into());
    }
    let mut parts: Vec<String> = order
        .iter()
        .take(most)
        .map(|key| {
            let (who, path) = key;
            let name = if path.is_empty() { who.clone() } else { format!("{who} `{path}`") };
            let xs = &series[key];
            if xs.len() < results.len() {
                format!("{name} missing on {} of {} seeds", results.len() - xs.len(), results.len())
            } else {
                format!("{name} {}", spread(xs))
            }
        })
        .collect();
    if order.len() > most {
        parts.push(format!("(+{} more)", order.len() - most));
    }
    parts.extend(note);
    parts.join("; ")
}

/// Escapes a table cell.
fn cell(s: &str) -> String {
    s.replace('|', "\\|").replace('\n', " ")
}

/// The fidelity table: for every figure and table of the papers' evaluation sections (from `figures`, a JSON list
/// of `{paper, id, section, title, headline, scenarios, not_modelled}`), and for every claim of every paper
/// scenario, the paper's value, ours over the seeds, and whether it holds, fails without its mechanism, or is
/// not reproduced.
pub fn fidelity_markdown(outcomes: &[FileOutcome], figures: &Value, seeds: u64) -> String {
    let mut md = String::new();
    let _ = writeln!(
        md,
        "# Fidelity: the papers' results against the model\n\n\
         Generated by `schedsim fidelity scenarios/ --seeds {seeds} --figures docs/fidelity-figures.json --out \
         docs/fidelity.md`; `npm test` regenerates it and fails if this file differs. Do not edit by hand.\n\n\
         *Ours* is the mean over {seeds} seeds of the scenario as written, with [min, max] where the seeds differ. \
         *Holds* means on every seed of the scenario and of each of its variants; an effect claim also names its \
         ablation (*without*: the scenario with the credited mechanism switched off), and holds only if it fails \
         there on every seed. *Not reproduced* claims state the paper's value and why the model does not give it.\n"
    );
    let by_id: BTreeMap<&str, &FileOutcome> = outcomes.iter().map(|f| (f.scenario.id.as_str(), f)).collect();
    let summary = |f: &FileOutcome| {
        let (mut ok, mut nr, mut bad) = (0, 0, 0);
        for c in &f.scenario.claims {
            let pass = f.settings.iter().all(|set| set.claim(&c.text).is_none_or(ClaimOutcome::passes));
            match (c.not_reproduced(), pass) {
                (false, true) => ok += 1,
                (true, false) => nr += 1,
                _ => bad += 1,
            }
        }
        let mut s = format!("{ok} hold");
        if nr > 0 {
            let _ = write!(s, ", {nr} not reproduced");
        }
        if bad > 0 {
            let _ = write!(s, ", **{bad} fail**");
        }
        s
    };
    if let Some(list) = figures.as_array() {
        let _ = writeln!(md, "## Figures and tables of the papers' evaluations\n");
        let _ = writeln!(md, "| Paper | Figure | The paper's result | Scenarios | Claims |");
        let _ = writeln!(md, "|---|---|---|---|---|");
        for fig in list {
            let s = |k: &str| fig[k].as_str().unwrap_or("");
            let scen: Vec<&str> = fig["scenarios"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
            let mut result = scen
                .iter()
                .map(|id| by_id.get(id).map_or(format!("`{id}`: missing"), |f| format!("{id}: {}", summary(f))))
                .collect::<Vec<_>>()
                .join("; ");
            if let Some(why) = fig["not_modelled"].as_str() {
                let sep = if result.is_empty() { "" } else { ". " };
                let _ = write!(result, "{sep}Not modelled: {why}");
            }
            let links: Vec<String> = scen.iter().map(|id| format!("[{id}](#{id})")).collect();
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} |",
                cell(s("paper")),
                cell(s("id")),
                cell(s("headline")),
                links.join(", "),
                cell(&result)
            );
        }
        md.push('\n');
    }
    let _ = writeln!(md, "## Claims, scenario by scenario\n");
    for f in outcomes.iter().filter(|f| f.scenario.id.starts_with('p')) {
        let sc = &f.scenario;
        let _ = writeln!(md, "### {}\n", sc.id);
        let file = f.path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let _ = writeln!(
            md,
            "{} ({}; [{file}](../scenarios/{file})). Variants: {}.\n",
            sc.title,
            sc.source,
            f.settings.len() - 1
        );
        let _ = writeln!(md, "| Claim | Paper | Ours | Result |");
        let _ = writeln!(md, "|---|---|---|---|");
        for (k, c) in sc.claims.iter().enumerate() {
            let base = &f.settings[0].claims[k];
            // A variant that restates its claims is judged on those of the same text.
            let failing: Vec<&str> = f
                .settings
                .iter()
                .filter(|set| set.claim(&c.text).is_some_and(|o| !o.passes()))
                .map(|set| set.label.as_str())
                .collect();
            let pass_all = failing.is_empty();
            let mut result = match (c.not_reproduced(), pass_all) {
                (true, _) => format!("not reproduced: {}", c.reason.as_deref().unwrap_or("")),
                (false, true) => "holds".to_string(),
                (false, false) => {
                    let names: Vec<&str> =
                        failing.iter().map(|l| if l.is_empty() { "as written" } else { l }).collect();
                    format!("**fails** in: {}", names.join("; "))
                }
            };
            if let Some(ab) = &c.without {
                let _ = write!(result, "; without {}: {}", ab.label, values_cell(&base.on_ablation, 3));
            }
            if c.not_reproduced() {
                // Whether switching the credited mechanism off moves the claim's numbers at all: a mechanism whose
                // ablation changes nothing does not act in this setting.
                let moved = base.on_scenario.iter().zip(&base.on_ablation).any(|(a, b)| a.values != b.values);
                result.push_str(match (&c.without, moved) {
                    (None, _) => "; no ablation",
                    (Some(_), true) => "; its ablation changes the figures",
                    (Some(_), false) => "; **its ablation changes nothing**",
                });
            }
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} |",
                cell(&c.text),
                cell(c.paper.as_deref().unwrap_or("—")),
                cell(&values_cell(&base.on_scenario, 3)),
                cell(&result)
            );
        }
        md.push('\n');
    }
    md
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_keep_three_significant_figures() {
        assert_eq!(fmt_num(38.2149), "38.2");
        assert_eq!(fmt_num(0.012345), "0.0123");
        assert_eq!(fmt_num(1234.4), "1234");
        assert_eq!(spread(&[1.0, 2.0, 3.0]), "2 [1, 3]");
        assert_eq!(spread(&[5.0, 5.0]), "5");
    }

    fn outcome(holds: &[bool], ablated: &[bool]) -> ClaimOutcome {
        let r = |h: bool| ClaimResult {
            text: String::new(),
            holds: h,
            policy: None,
            values: Value::Null,
            error: None,
            absent: false,
            status: None,
        };
        ClaimOutcome {
            seeds: (0..holds.len() as u64).collect(),
            on_scenario: holds.iter().map(|&h| r(h)).collect(),
            on_ablation: ablated.iter().map(|&h| r(h)).collect(),
        }
    }

    #[test]
    fn a_claim_passes_only_if_its_ablation_fails_on_every_seed() {
        assert!(outcome(&[true, true], &[]).passes());
        assert!(outcome(&[true, true], &[false, false]).passes());
        assert!(!outcome(&[true, true], &[false, true]).passes(), "the effect survives the ablation on a seed");
        assert!(!outcome(&[true, false], &[false, false]).passes());
    }
}
