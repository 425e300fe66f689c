//! The model checked against the machine: recordings of workload shapes run under this host's own Linux
//! scheduler (`scripts/record-validation.sh`), each replayed under the `kvm` scheduler in its fitted scenario and
//! compared metric by metric.
//!
//! Each shape's expectations are data (`expect.json` beside the recordings): per metric a tolerance the model is
//! claimed to meet, or `not_reproduced` with the model's reason. A claim fails when the tolerance is missed; a
//! `not_reproduced` entry whose metric now falls within the tolerance is reported too, so the file stays true as
//! the model changes. Nothing here does I/O: the caller hands in each shape's bytes.

use super::{fit, RecordedRun};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;
use std::fmt::Write;

/// The metrics compared, per domain.
pub const METRICS: [&str; 4] = ["cpu_share", "switches_per_s", "wake_to_run_p50_ms", "wake_to_run_p99_ms"];

/// How close a simulated metric must be to the recorded one.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tolerance {
    /// Absolute difference allowed (in the metric's unit).
    #[serde(default)]
    pub abs: f64,
    /// Relative difference allowed (fraction of the recorded value).
    #[serde(default)]
    pub rel: f64,
}

impl Tolerance {
    /// Whether `sim` is within the tolerance of `rec`: within `abs`, or within `rel` of `rec`.
    pub fn holds(&self, rec: f64, sim: f64) -> bool {
        let d = (sim - rec).abs();
        d <= self.abs + 1e-12 || d <= self.rel * rec.abs() + 1e-12
    }

    pub fn describe(&self) -> String {
        match (self.abs > 0.0, self.rel > 0.0) {
            (true, true) => format!("within {} or {:.0}%", self.abs, self.rel * 100.0),
            (true, false) => format!("within {}", self.abs),
            (false, true) => format!("within {:.0}%", self.rel * 100.0),
            (false, false) => "exact".into(),
        }
    }
}

/// The tolerances the suite starts from: shares within 0.02, switches within 20%, wake-to-run p50 within 25%
/// (or 0.05 ms: below that the tracepoints' own cost on the recording is of the same size), p99 within 50%
/// (or 0.5 ms).
pub fn default_tolerance(metric: &str) -> Tolerance {
    match metric {
        "cpu_share" => Tolerance { abs: 0.02, rel: 0.0 },
        "switches_per_s" => Tolerance { abs: 0.0, rel: 0.20 },
        "wake_to_run_p50_ms" => Tolerance { abs: 0.05, rel: 0.25 },
        _ => Tolerance { abs: 0.5, rel: 0.50 },
    }
}

/// What a shape's file claims of one metric of one domain.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expect {
    pub domain: String,
    pub metric: String,
    /// The tolerance claimed; the suite's default for the metric when left out.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<Tolerance>,
    /// Not met by the model, and why (worded so that it stays true as the model changes).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub not_reproduced: Option<String>,
}

/// A shape's expectations file.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Expectations {
    /// Per metric and domain; metrics of a domain not listed are shown and not judged.
    #[serde(default)]
    pub expect: Vec<Expect>,
}

/// One compared metric.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    pub domain: String,
    pub metric: String,
    pub recorded: Option<f64>,
    /// Per scheduler, in the order asked.
    pub simulated: Vec<Option<f64>>,
    /// The claim on the first scheduler's value, if any, and whether it holds.
    pub verdict: Verdict,
}

#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Not judged (no claim, or no value on one side).
    Shown,
    Met(String),
    Failed(String),
    NotReproduced(String),
    /// Marked not reproduced and now within the tolerance: the file should say so.
    NowReproduced(String),
}

/// One shape's comparison.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct ShapeResult {
    pub name: String,
    pub what: String,
    pub schedulers: Vec<String>,
    pub rows: Vec<Row>,
}

fn metric_of(run: &Value, dom: &str, metric: &str, secs: f64) -> Option<f64> {
    let d = run.get("domains")?.get(dom)?;
    match metric {
        "cpu_share" => d.get("cpu_share").and_then(Value::as_f64),
        "switches_per_s" => d.get("context_switches").and_then(Value::as_f64).map(|n| n / secs.max(1e-9)),
        "wake_to_run_p50_ms" => d.get("wake_to_run_ms")?.get("p50").and_then(Value::as_f64),
        "wake_to_run_p99_ms" => d.get("wake_to_run_ms")?.get("p99").and_then(Value::as_f64),
        _ => None,
    }
}

fn round(x: f64) -> f64 {
    (x * 1e4).round() / 1e4
}

/// Compares a recorded run with its fitted scenario's runs under `schedulers` (the first is judged).
pub fn compare(
    name: &str,
    what: &str,
    run: &RecordedRun,
    schedulers: &[&str],
    expect: &Expectations,
) -> Result<ShapeResult, String> {
    let rep = fit::compare(run, name, schedulers)?;
    let value = serde_json::to_value(&rep).map_err(|e| e.to_string())?;
    let runs = value.get("runs").and_then(Value::as_array).cloned().unwrap_or_default();
    let secs = run.end_ns as f64 / 1e9;
    let recorded = runs.first().cloned().unwrap_or(Value::Null);
    let mut rows = Vec::new();
    for d in &run.model.domains {
        for metric in METRICS {
            let rec = metric_of(&recorded, &d.name, metric, secs).map(round);
            let sims: Vec<Option<f64>> =
                runs.iter().skip(1).map(|r| metric_of(r, &d.name, metric, secs).map(round)).collect();
            let claim = expect.expect.iter().find(|e| e.domain == d.name && e.metric == metric);
            let verdict = match (claim, rec, sims.first().copied().flatten()) {
                (Some(c), Some(r), Some(s)) => {
                    let tol = c.within.unwrap_or_else(|| default_tolerance(metric));
                    let holds = tol.holds(r, s);
                    match (&c.not_reproduced, holds) {
                        (None, true) => Verdict::Met(tol.describe()),
                        (None, false) => Verdict::Failed(tol.describe()),
                        (Some(why), false) => Verdict::NotReproduced(why.clone()),
                        (Some(_), true) => Verdict::NowReproduced(tol.describe()),
                    }
                }
                (Some(c), _, _) if c.not_reproduced.is_some() => {
                    Verdict::NotReproduced(c.not_reproduced.clone().unwrap_or_default())
                }
                (Some(_), _, _) => Verdict::Failed("no value to compare".into()),
                (None, _, _) => Verdict::Shown,
            };
            if rec.is_none() && sims.iter().all(Option::is_none) {
                continue;
            }
            rows.push(Row { domain: d.name.clone(), metric: metric.into(), recorded: rec, simulated: sims, verdict });
        }
    }
    for e in &expect.expect {
        if !run.model.domains.iter().any(|d| d.name == e.domain) || !METRICS.contains(&e.metric.as_str()) {
            return Err(format!(
                "{name}: expect names {}.{}, which the recording has no such metric of",
                e.domain, e.metric
            ));
        }
    }
    Ok(ShapeResult {
        name: name.into(),
        what: what.into(),
        schedulers: schedulers.iter().map(|s| s.to_string()).collect(),
        rows,
    })
}

/// Counts of verdicts: (met, failed, not reproduced, now reproduced).
pub fn tally(results: &[ShapeResult]) -> (usize, usize, usize, usize) {
    let mut t = (0, 0, 0, 0);
    for r in results.iter().flat_map(|s| &s.rows) {
        match r.verdict {
            Verdict::Met(_) => t.0 += 1,
            Verdict::Failed(_) => t.1 += 1,
            Verdict::NotReproduced(_) => t.2 += 1,
            Verdict::NowReproduced(_) => t.3 += 1,
            Verdict::Shown => {}
        }
    }
    t
}

fn cell(x: Option<f64>) -> String {
    x.map_or_else(|| "–".into(), |v| format!("{v}"))
}

/// The validation page: every shape, every metric, recorded against simulated, with the kernel facts.
pub fn markdown(results: &[ShapeResult], facts: &BTreeMap<String, String>) -> String {
    let mut s = String::new();
    let (met, failed, nr, now) = tally(results);
    let _ = writeln!(s, "# Validation: the `kvm` model against recordings of this machine\n");
    let _ = writeln!(
        s,
        "Generated by `schedsim validate sim-wasm/core/tests/fixtures/validation --out docs/validation.md`; \
         `npm test` checks it is current. Each shape was recorded with `scripts/record-validation.sh` (its \
         `record.txt` gives the exact commands), read with its mapping, fitted as `schedsim trace report FILE \
         --mapping M --simulate kvm,credit` fits it, and run under each scheduler. The first simulated column is \
         judged against the shape's `expect.json`.\n"
    );
    let _ = writeln!(
        s,
        "Claims: **{met} met, {failed} failed, {nr} not reproduced**{}.\n",
        if now > 0 { format!(", {now} marked not reproduced that now hold") } else { String::new() }
    );
    if !facts.is_empty() {
        let _ = writeln!(s, "## The recording host\n");
        for (k, v) in facts {
            let _ = writeln!(s, "- {k}: {v}");
        }
        s.push('\n');
    }
    for r in results {
        let _ = writeln!(s, "## {}\n\n{}\n", r.name, r.what);
        let _ = write!(s, "| domain | metric | recorded |");
        for sc in &r.schedulers {
            let _ = write!(s, " {sc} |");
        }
        let _ = writeln!(s, " verdict |");
        let _ = writeln!(s, "|---|---|---|{}---|", "---|".repeat(r.schedulers.len()));
        for row in &r.rows {
            let v = match &row.verdict {
                Verdict::Shown => "shown".to_string(),
                Verdict::Met(t) => format!("met ({t})"),
                Verdict::Failed(t) => format!("**FAILED** ({t})"),
                Verdict::NotReproduced(why) => format!("not reproduced: {why}"),
                Verdict::NowReproduced(t) => format!("**now reproduced** ({t}): update expect.json"),
            };
            let sims: String = row.simulated.iter().map(|x| format!(" {} |", cell(*x))).collect();
            let _ = writeln!(s, "| {} | {} | {} |{sims} {v} |", row.domain, row.metric, cell(row.recorded));
        }
        s.push('\n');
    }
    s
}
