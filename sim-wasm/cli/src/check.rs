//! `schedsim check` and `schedsim fidelity`: every claim of every scenario, in every variant and for every seed,
//! judged on the scenario and, for an effect claim, on its ablation (the scenario with the credited mechanism
//! switched off), where it must fail. The same outcomes make the fidelity table (`docs/fidelity.md`).

use schedsim_cli::batch::{self, Batch};
use schedsim_core::claims::check::{self as plan, FileCheck, Setting};
use schedsim_core::claims::{State, Trials, Values, Verdict};
use schedsim_core::patch::PatchBudget;
use schedsim_core::report::RunOptions;
use schedsim_core::scenario::Scenario;
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::path::PathBuf;

/// A scenario file's trials (the core's [`FileCheck`]), with its path.
pub struct FileOutcome {
    pub path: PathBuf,
    pub check: FileCheck,
}

impl FileOutcome {
    fn scenario(&self) -> &Scenario {
        &self.check.scenario
    }
    fn settings(&self) -> &[Setting] {
        &self.check.settings
    }
}

/// Runs every claim of `files` with `seeds` consecutive seeds (their scenarios, variants and ablations, spread
/// over `jobs` threads); refuses before running anything if a run is estimated above `max_events` or a file's
/// patches (variants and ablations) above `max_patch_work` bytes of patch work (see `schedsim_core::patch`). Each
/// setting is built, run and judged before the next, so memory holds one setting's runs at a time.
pub fn run_all(
    files: &[(PathBuf, Scenario)],
    seeds: u64,
    jobs: usize,
    max_events: u64,
    max_patch_work: u64,
) -> Result<Vec<FileOutcome>, String> {
    for (path, sc) in files {
        plan::preflight(&path.display().to_string(), sc, seeds, Some(max_events), max_patch_work)?;
    }
    let opts = RunOptions { max_events: Some(max_events), ..RunOptions::default() };
    let mut out = Vec::new();
    for (path, sc) in files {
        let name = path.display().to_string();
        let mut budget = PatchBudget::new(max_patch_work);
        let mut settings = Vec::new();
        for si in 0..plan::settings_of(sc) {
            let p = plan::plan(&name, sc, si, seeds, &mut budget)?;
            let batches: Vec<Batch> = p
                .runs
                .iter()
                .map(|r| Batch { scenario: r.scenario.clone(), policies: r.policies.clone(), label: r.label.clone() })
                .collect();
            let reports = batch::run(&batches, &opts, jobs, "runs")?.into_iter().map(|r| Ok(r.runs)).collect();
            drop(batches);
            settings.push(p.collect(reports)?);
        }
        out.push(FileOutcome { path: path.clone(), check: plan::file_check(sc, settings) });
    }
    Ok(out)
}

/// Totals of a check.
#[derive(Default)]
pub struct Tally {
    pub passed: usize,
    pub failed: usize,
    pub not_reproduced: usize,
    /// Homework goals (reported, never failed).
    pub goals: usize,
    /// Of those, the ones met.
    pub goals_met: usize,
    /// Claims that could hardly fail (see [`toothless`]): reported, never failed.
    pub toothless: usize,
}

/// Why a claim that holds could hardly fail, if so: its numbers do not move under its ablation on any seed, or
/// its bound is more than 10x from every value it was judged on (a bound that far says nothing of the result).
pub fn toothless(c: &schedsim_core::scenario::Claim, o: &Trials) -> Option<String> {
    let judged: Vec<&Values> = o.on_scenario.iter().filter_map(|r| r.judged.as_ref()).collect();
    if judged.is_empty() || o.held() < o.seeds.len() {
        return None;
    }
    let same = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0);
    let numbers = |v: &Values| -> Vec<f64> { v.runs.values().flat_map(|m| m.values().copied()).collect() };
    let ablated: Vec<&Values> =
        o.on_ablation.iter().filter_map(|r| r.as_ref().ok().and_then(|r| r.judged.as_ref())).collect();
    if c.without.is_some() && ablated.len() == judged.len() {
        let still = judged.iter().zip(&ablated).all(|(a, b)| {
            let (a, b) = (numbers(a), numbers(b));
            a.len() == b.len() && a.iter().zip(&b).all(|(x, y)| same(*x, *y))
        });
        if still {
            return Some("its numbers do not move under its ablation".into());
        }
    }
    // The measured quantity each bound is read against: the factor between the two sides, or the values.
    // Values at or below zero (no under-runs, a belief of -100) say nothing of a bound's scale.
    let far = |bound: f64, xs: &[f64]| {
        let pos: Vec<f64> = xs.iter().copied().filter(|&x| x > 0.0).collect();
        bound > 0.0 && !pos.is_empty() && pos.iter().all(|&x| x / bound > 10.0 || bound / x > 10.0)
    };
    if let Some(f) = c.by_factor.filter(|&f| f > 1.0) {
        let factors: Vec<f64> = judged
            .iter()
            .filter_map(|v| match numbers(v)[..] {
                [a, b] if a > 0.0 && b > 0.0 => Some(if c.higher.is_some() { a / b } else { b / a }),
                _ => None,
            })
            .collect();
        return far(f, &factors).then(|| format!("its factor {f} is more than 10x from every measured factor"));
    }
    let measured: Vec<f64> = judged.iter().flat_map(|v| numbers(v)).collect();
    for (name, b) in [("at_least", c.at_least), ("at_most", c.at_most)] {
        if let Some(b) = b.filter(|&b| far(b, &measured)) {
            return Some(format!("its bound {name} {b} is more than 10x from every measured value"));
        }
    }
    None
}

/// Every claim's verdict of every file, file by file (the core's `FileCheck::results`).
pub fn results(outcomes: &[FileOutcome]) -> Vec<Value> {
    outcomes.iter().flat_map(|f| f.check.results()).collect()
}

/// How `check` counts a verdict, and the mark its line starts with.
fn mark(v: &Verdict) -> &'static str {
    match v.state {
        State::Goal { met: true } => "met ",
        State::Goal { met: false } => "not met",
        State::Holds => "ok  ",
        State::NotReproduced { .. } => "n/r ",
        State::Fails | State::NotCredited | State::AblationBroken { .. } | State::Stale { .. } => "FAIL",
    }
}

/// A verdict's numbers as reports give them (`null` when the claim could not be judged).
fn legacy(values: Option<&Values>) -> Value {
    values.map_or(Value::Null, Values::legacy)
}

/// The lines `schedsim check` prints, and the tally. `show_seeds` adds per-seed counts (with `--seeds`).
pub fn render(outcomes: &[FileOutcome], show_seeds: bool) -> (String, Tally) {
    let mut text = String::new();
    let mut t = Tally::default();
    for f in outcomes {
        for (s, set) in f.settings().iter().enumerate() {
            let variant = if set.label.is_empty() { String::new() } else { format!(" {{{}}}", set.label) };
            for (k, o) in set.claims.iter().enumerate() {
                let c = &set.scenario.claims[k];
                let v = f.check.verdict(s, k);
                let n = v.seeds.len();
                let mark = mark(&v);
                match mark {
                    "ok  " => t.passed += 1,
                    "n/r " => t.not_reproduced += 1,
                    "met " => {
                        t.goals += 1;
                        t.goals_met += 1;
                    }
                    "not met" => t.goals += 1,
                    _ => t.failed += 1,
                }
                let weak = if mark == "ok  " { toothless(c, o) } else { None };
                if weak.is_some() {
                    t.toothless += 1;
                }
                let policy = c.subject().unwrap_or("");
                let _ = write!(text, "{mark} {}{variant} [{policy}] {}", f.scenario().id, c.text);
                let mut notes = Vec::new();
                if show_seeds {
                    let held = n - v.failed_seeds.len();
                    let failed: Vec<String> = v.failed_seeds.iter().map(u64::to_string).collect();
                    notes.push(match failed.len() {
                        0 => format!("{held}/{n} seeds"),
                        1 => format!("{held}/{n} seeds; failed: seed {}", failed[0]),
                        _ => format!("{held}/{n} seeds; failed: seeds {}", failed.join(", ")),
                    });
                }
                if let Some(ab) = &v.without {
                    let mut how = Vec::new();
                    if ab.still_holds > 0 {
                        how.push(format!("still holds {}/{n}", ab.still_holds));
                    }
                    if ab.broken > 0 {
                        how.push(format!("broken {}/{n}", ab.broken));
                    }
                    if how.is_empty() {
                        how.push(format!("fails {n}/{n}"));
                    }
                    notes.push(format!("without '{}': {}", ab.label, how.join(", ")));
                }
                match &v.state {
                    State::AblationBroken { ablation_error } => {
                        notes.push(format!("ablation broken: {ablation_error}"))
                    }
                    State::Stale { why } => notes.push(why.clone()),
                    State::NotReproduced { holds: true, .. } => {
                        notes.push("not reproduced; holds in this setting".into())
                    }
                    State::NotReproduced { holds: false, .. } => notes.push("not reproduced".into()),
                    _ => {}
                }
                if let Some(w) = weak {
                    notes.push(format!("could hardly fail: {w}"));
                }
                if !notes.is_empty() {
                    let _ = write!(text, " ({})", notes.join("; "));
                }
                text.push('\n');
                // Values: of the first failing seed, or the first seed; and the ablated run's beside them.
                let show = !o.passes() || c.without.is_some() || c.not_reproduced();
                if show && !v.seeds.is_empty() {
                    let which = if show_seeds { format!(" (seed {})", v.seed) } else { String::new() };
                    let _ = writeln!(text, "       values{which}: {}", legacy(v.values.as_ref()));
                    if let Some(e) = &v.error {
                        let _ = writeln!(text, "       error: {e}");
                    }
                    if let Some(a) = v.without.as_ref().filter(|a| a.judged > 0) {
                        let _ = writeln!(text, "       without: {}", legacy(a.values.as_ref()));
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

/// A verdict that counts as passed: holds, or a homework goal met.
fn passed(v: &Verdict) -> bool {
    matches!(v.state, State::Holds | State::Goal { met: true })
}

/// The scenario's judgements of a claim, seed by seed: (the report's values, why it could not be judged).
fn judged(t: &Trials) -> Vec<(&Value, Option<&str>)> {
    t.on_scenario.iter().map(|r| (&r.values, r.error.as_deref())).collect()
}

/// `policy: path value; ...` with each number as mean [min, max] over the seeds, at most `most` numbers, from
/// each seed's (values, error).
fn values_cell(results: &[(&Value, Option<&str>)], most: usize) -> String {
    let mut series: BTreeMap<(String, String), Vec<f64>> = BTreeMap::new();
    let mut order = Vec::new();
    for (values, _) in results {
        let Some(obj) = values.as_object() else { continue };
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
    let unjudged: Vec<&str> = results.iter().filter_map(|(_, e)| *e).collect();
    let note = unjudged.first().map(|e| format!("not judged on {} of {} seeds: {e}", unjudged.len(), results.len()));
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
    let by_id: BTreeMap<&str, &FileOutcome> = outcomes.iter().map(|f| (f.scenario().id.as_str(), f)).collect();
    let summary = |f: &FileOutcome| {
        let (mut ok, mut nr, mut bad) = (0, 0, 0);
        for c in &f.scenario().claims {
            let verdicts = f.check.verdicts_of(&c.text);
            if verdicts.iter().all(|(_, v)| passed(v)) {
                ok += 1;
            } else if verdicts.iter().all(|(_, v)| matches!(v.state, State::NotReproduced { .. })) {
                nr += 1;
            } else {
                bad += 1;
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
    for f in outcomes.iter().filter(|f| f.scenario().id.starts_with('p')) {
        let sc = f.scenario();
        let _ = writeln!(md, "### {}\n", sc.id);
        let file = f.path.file_name().map_or(String::new(), |n| n.to_string_lossy().into_owned());
        let _ = writeln!(
            md,
            "{} ({}; [{file}](../scenarios/{file})). Variants: {}.\n",
            sc.title,
            sc.source,
            f.settings().len() - 1
        );
        let _ = writeln!(md, "| Claim | Paper | Ours | Result |");
        let _ = writeln!(md, "|---|---|---|---|");
        for (k, c) in sc.claims.iter().enumerate() {
            let base = &f.settings()[0].claims[k];
            // A variant that restates its claims is judged on those of the same text.
            let failing: Vec<(&str, Verdict)> =
                f.check.verdicts_of(&c.text).into_iter().filter(|(_, v)| !passed(v)).collect();
            let mut result = if c.not_reproduced() {
                format!("not reproduced: {}", c.reason.as_deref().unwrap_or(""))
            } else if failing.is_empty() {
                "holds".to_string()
            } else {
                let names: Vec<String> = failing
                    .iter()
                    .map(|(l, v)| {
                        let l = if l.is_empty() { "as written" } else { l };
                        match &v.state {
                            State::NotCredited => format!("{l} (holds without its mechanism too)"),
                            State::AblationBroken { ablation_error } => {
                                format!("{l} (ablation broken: {ablation_error})")
                            }
                            State::Stale { why } => format!("{l} ({why})"),
                            _ => l.to_string(),
                        }
                    })
                    .collect();
                format!("**fails** in: {}", names.join("; "))
            };
            let ablated: Vec<(&Value, Option<&str>)> = base
                .on_ablation
                .iter()
                .map(|r| match r {
                    Ok(r) => (&r.values, r.error.as_deref()),
                    Err(e) => (&Value::Null, Some(e.as_str())),
                })
                .collect();
            if let Some(ab) = &c.without {
                let _ = write!(result, "; without {}: {}", ab.label, values_cell(&ablated, 3));
            }
            if c.not_reproduced() {
                // Whether switching the credited mechanism off moves the claim's numbers at all: a mechanism whose
                // ablation changes nothing does not act in this setting.
                let moved = base.on_scenario.iter().zip(&ablated).any(|(a, (b, _))| a.values != **b);
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
                cell(&values_cell(&judged(base), 3)),
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
}
