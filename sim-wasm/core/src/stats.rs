//! Statistics over repeated runs (seeds): mean, 95% confidence half-width by Student's t, min, max; and the
//! multi-seed report that `schedsim run --seeds N` prints.
//!
//! Why Student's t and a table: seeds are few (3-30), so the normal quantile (1.96) would understate the interval
//! by up to 6x at n = 2; a table of exact quantiles keeps the core free of special-function code and is bit-for-bit
//! the same natively and in wasm.

use crate::metrics::round6;
use crate::report::Report;
use serde::Serialize;
use serde_json::{json, Map, Value};

/// Two-sided 95% quantiles of Student's t, `t_{0.975, df}`, for df = 1..=30.
const T975_SMALL: [f64; 30] = [
    12.706204736,
    4.302652730,
    3.182446305,
    2.776445105,
    2.570581836,
    2.446911851,
    2.364624252,
    2.306004135,
    2.262157163,
    2.228138852,
    2.200985160,
    2.178812830,
    2.160368656,
    2.144786688,
    2.131449546,
    2.119905299,
    2.109815578,
    2.100922040,
    2.093024054,
    2.085963447,
    2.079613845,
    2.073873068,
    2.068657610,
    2.063898562,
    2.059538553,
    2.055529439,
    2.051830516,
    2.048407142,
    2.045229642,
    2.042272456,
];

/// `(df, t_{0.975, df})` beyond the dense table; between rows the quantile is interpolated linearly in 1/df, in
/// which it is nearly linear (error below 1e-4).
const T975_LARGE: [(f64, f64); 9] = [
    (30.0, 2.042272456),
    (40.0, 2.021075390),
    (50.0, 2.008559112),
    (60.0, 2.000297822),
    (80.0, 1.990063421),
    (100.0, 1.983971519),
    (120.0, 1.979930405),
    (200.0, 1.971896224),
    (1000.0, 1.962339081),
];

/// The normal quantile `z_{0.975}`, the limit of t as df grows.
const Z975: f64 = 1.959963985;

/// `t_{0.975, df}`: the multiplier of the standard error for a two-sided 95% interval. `df` must be at least 1.
pub fn t975(df: usize) -> f64 {
    assert!(df >= 1, "Student t needs at least one degree of freedom");
    if df <= 30 {
        return T975_SMALL[df - 1];
    }
    let x = 1.0 / df as f64;
    let mut rows = T975_LARGE.iter().map(|&(d, t)| (1.0 / d, t)).chain(std::iter::once((0.0, Z975)));
    let mut prev = rows.next().expect("table is not empty");
    for row in rows {
        if x >= row.0 {
            let f = (prev.0 - x) / (prev.0 - row.0);
            return prev.1 + f * (row.1 - prev.1);
        }
        prev = row;
    }
    Z975
}

/// Summary of one metric over seeds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Stats {
    /// Sample mean, in the metric's own unit.
    pub mean: f64,
    /// Half-width of the 95% confidence interval of the mean (Student t, n-1 df), in the metric's unit; omitted
    /// for a single sample, where no interval exists.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ci95: Option<f64>,
    pub min: f64,
    pub max: f64,
    /// Samples (seeds in which the metric was present).
    pub n: usize,
    /// Seeds of the set in which it was missing (omitted when none). For a job's `makespan_ms` those are seeds in
    /// which the job never finished: the mean is over the others only, and is not the job's makespan.
    #[serde(skip_serializing_if = "is_zero")]
    pub missing: usize,
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

impl Stats {
    /// Stats of the samples; `None` when there are none.
    pub fn of(xs: &[f64]) -> Option<Stats> {
        let n = xs.len();
        if n == 0 {
            return None;
        }
        let mean = xs.iter().sum::<f64>() / n as f64;
        let ci95 = (n >= 2).then(|| {
            let var = xs.iter().map(|x| (x - mean) * (x - mean)).sum::<f64>() / (n - 1) as f64;
            t975(n - 1) * (var / n as f64).sqrt()
        });
        Some(Stats {
            mean,
            ci95,
            min: xs.iter().copied().fold(f64::INFINITY, f64::min),
            max: xs.iter().copied().fold(f64::NEG_INFINITY, f64::max),
            n,
            missing: 0,
        })
    }

    /// The same, rounded to 6 decimals like every report number.
    pub fn rounded(&self) -> Stats {
        Stats {
            mean: round6(self.mean),
            ci95: self.ci95.map(round6),
            min: round6(self.min),
            max: round6(self.max),
            n: self.n,
            missing: self.missing,
        }
    }
}

/// Every numeric leaf of a run object as `(dotted path, value)`, in document order. `claims` is skipped (its
/// numbers are inputs of judgements, not metrics), as are arrays, strings and booleans.
pub fn numeric_leaves(run: &Value) -> Vec<(String, f64)> {
    fn walk(v: &Value, prefix: &str, out: &mut Vec<(String, f64)>) {
        match v {
            Value::Number(n) => {
                if let Some(x) = n.as_f64() {
                    out.push((prefix.to_string(), x));
                }
            }
            Value::Object(obj) => {
                for (k, child) in obj {
                    if prefix.is_empty() && k == "claims" {
                        continue;
                    }
                    let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                    walk(child, &path, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(run, "", &mut out);
    out
}

/// Per-metric stats over several run objects of one policy (one per seed): `{dotted path: Stats}`, paths in the
/// order they first appear. A metric missing from some seeds (no responses in that seed) is summarised over the
/// seeds that have it: its `n` says how many, its `missing` how many lacked it.
pub fn aggregate(runs: &[&Value]) -> Map<String, Value> {
    let mut order: Vec<String> = Vec::new();
    let mut samples: std::collections::HashMap<String, Vec<f64>> = std::collections::HashMap::new();
    for run in runs {
        for (path, x) in numeric_leaves(run) {
            let entry = samples.entry(path.clone()).or_default();
            if entry.is_empty() {
                order.push(path);
            }
            entry.push(x);
        }
    }
    let mut out = Map::new();
    for path in order {
        if let Some(mut s) = Stats::of(&samples[&path]) {
            s.missing = runs.len() - s.n;
            out.insert(path, serde_json::to_value(s.rounded()).expect("stats serialise"));
        }
    }
    out
}

/// Combines the reports of one scenario run with consecutive seeds into the multi-seed report:
/// `{"scenario", "seeds": N, "first_seed", "runs": [...], "seed_runs"?}`. Each run object is the first seed's,
/// intact, plus `stats` over all seeds; each of its claims `holds` only if it held in every seed and carries
/// `held_seeds`, `seeds` and, when some failed, `failed_seeds`. With `keep_seed_runs`, `seed_runs` lists every
/// seed's runs as `{"seed", "runs"}`.
///
/// `per_seed` must be non-empty, in seed order, each with the same policies in the same order.
pub fn seeds_report(per_seed: &[(u64, Report)], keep_seed_runs: bool) -> Value {
    let (first_seed, first) = per_seed.first().expect("at least one seed");
    let mut runs = Vec::with_capacity(first.runs.len());
    for (i, base) in first.runs.iter().enumerate() {
        let same: Vec<&Value> = per_seed.iter().filter_map(|(_, r)| r.runs.get(i)).collect();
        let mut run = base.clone();
        let claims = merge_claims(per_seed, i);
        if let Some(obj) = run.as_object_mut() {
            if let Some(c) = claims {
                obj.insert("claims".into(), c);
            }
            obj.insert("stats".into(), Value::Object(aggregate(&same)));
        }
        runs.push(run);
    }
    let mut out = Map::new();
    out.insert("scenario".into(), json!(first.scenario));
    out.insert("seeds".into(), json!(per_seed.len()));
    out.insert("first_seed".into(), json!(first_seed));
    out.insert("runs".into(), Value::Array(runs));
    if keep_seed_runs {
        let all: Vec<Value> = per_seed.iter().map(|(s, r)| json!({ "seed": s, "runs": r.runs })).collect();
        out.insert("seed_runs".into(), Value::Array(all));
    }
    Value::Object(out)
}

/// The claims of run `i` judged over every seed; `None` when the first seed's run has no claims array.
fn merge_claims(per_seed: &[(u64, Report)], i: usize) -> Option<Value> {
    let base = per_seed[0].1.runs.get(i)?.get("claims")?.as_array()?;
    let merged = base
        .iter()
        .enumerate()
        .map(|(k, claim)| {
            let failed: Vec<u64> = per_seed
                .iter()
                .filter(|(_, r)| {
                    r.runs.get(i).and_then(|run| run["claims"].get(k)).and_then(|c| c["holds"].as_bool()) != Some(true)
                })
                .map(|(s, _)| *s)
                .collect();
            let mut c = claim.clone();
            if let Some(obj) = c.as_object_mut() {
                obj.insert("holds".into(), json!(failed.is_empty()));
                obj.insert("held_seeds".into(), json!(per_seed.len() - failed.len()));
                obj.insert("seeds".into(), json!(per_seed.len()));
                if !failed.is_empty() {
                    obj.insert("failed_seeds".into(), json!(failed));
                }
            }
            c
        })
        .collect();
    Some(Value::Array(merged))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Γ((ν+1)/2) / (√(νπ) Γ(ν/2)) for integer ν, by the recurrence Γ(x+1) = xΓ(x) from Γ(1/2) = √π and
    /// Γ(1) = 1.
    fn t_density_constant(nu: usize) -> f64 {
        fn ln_gamma_half(k: usize) -> f64 {
            // ln Γ(k/2) for k >= 1, summed in logs so that large ν does not overflow.
            let (mut g, mut x) = if k & 1 == 0 { (0.0, 1.0) } else { (std::f64::consts::PI.sqrt().ln(), 0.5) };
            while x < k as f64 / 2.0 - 1e-9 {
                g += f64::ln(x);
                x += 1.0;
            }
            g
        }
        (ln_gamma_half(nu + 1) - ln_gamma_half(nu)).exp() / (nu as f64 * std::f64::consts::PI).sqrt()
    }

    /// P(0 <= T <= t) for Student t with ν df, by Simpson's rule: an independent check of the table.
    fn t_cdf_from_zero(nu: usize, t: f64) -> f64 {
        let c = t_density_constant(nu);
        let f = |x: f64| c * (1.0 + x * x / nu as f64).powf(-(nu as f64 + 1.0) / 2.0);
        let steps = 20_000;
        let h = t / steps as f64;
        let mut s = f(0.0) + f(t);
        for k in 1..steps {
            s += f(k as f64 * h) * if k % 2 == 1 { 4.0 } else { 2.0 };
        }
        s * h / 3.0
    }

    #[test]
    fn table_matches_known_quantiles() {
        // Values as printed in standard tables (e.g. NIST/SEMATECH e-Handbook 1.3.6.7.2).
        for (df, t) in [(1, 12.706), (2, 4.303), (3, 3.182), (4, 2.776), (9, 2.262), (10, 2.228), (29, 2.045)] {
            assert!((t975(df) - t).abs() < 5e-4, "df {df}: {} vs {t}", t975(df));
        }
        assert!((t975(100) - 1.984).abs() < 5e-4);
        assert!((t975(1_000_000) - 1.960).abs() < 5e-4);
    }

    #[test]
    fn every_dense_table_entry_has_cdf_0975() {
        for df in 1..=30 {
            let p = 0.5 + t_cdf_from_zero(df, t975(df));
            assert!((p - 0.975).abs() < 1e-6, "df {df}: P(T <= t) = {p}");
        }
        for &(df, t) in &T975_LARGE {
            let p = 0.5 + t_cdf_from_zero(df as usize, t);
            assert!((p - 0.975).abs() < 1e-6, "df {df}: P(T <= t) = {p}");
        }
    }

    #[test]
    fn interpolation_is_close_between_rows() {
        // Exact t_{0.975} at df 45 and 150.
        assert!((t975(45) - 2.014103).abs() < 1e-4, "{}", t975(45));
        assert!((t975(150) - 1.975905).abs() < 1e-4, "{}", t975(150));
        // Monotone decreasing towards z.
        for df in 1..2000 {
            assert!(t975(df) > t975(df + 1) - 1e-12, "df {df}");
            assert!(t975(df) > Z975);
        }
    }

    #[test]
    fn stats_of_known_samples() {
        assert_eq!(Stats::of(&[]), None);
        let one = Stats::of(&[3.5]).unwrap();
        assert_eq!((one.mean, one.ci95, one.min, one.max, one.n), (3.5, None, 3.5, 3.5, 1));
        // mean 5, sample sd 2.138090, se 0.755929, t(7) 2.364624 -> 1.787488.
        let s = Stats::of(&[2.0, 4.0, 4.0, 4.0, 5.0, 5.0, 7.0, 9.0]).unwrap();
        assert_eq!(s.mean, 5.0);
        assert!((s.ci95.unwrap() - 1.787488).abs() < 1e-6, "{:?}", s.ci95);
        assert_eq!((s.min, s.max, s.n), (2.0, 9.0, 8));
        // Identical samples: zero width.
        assert_eq!(Stats::of(&[1.0, 1.0, 1.0]).unwrap().ci95, Some(0.0));
    }

    #[test]
    fn leaves_skip_claims_and_non_numbers() {
        let run = json!({"policy":"a","events":10,"domains":{"x":{"cpu_share":0.5,"busy":true,
                         "response_ms":{"mean":1.5}}},"drivers":["d"],"claims":[{"values":{"a":1}}]});
        let leaves = numeric_leaves(&run);
        assert_eq!(
            leaves,
            vec![
                ("events".into(), 10.0),
                ("domains.x.cpu_share".into(), 0.5),
                ("domains.x.response_ms.mean".into(), 1.5)
            ]
        );
    }

    #[test]
    fn aggregate_counts_seeds_that_have_a_metric() {
        let a = json!({"m": 1.0, "r": {"mean": 4.0}});
        let b = json!({"m": 3.0});
        let agg = aggregate(&[&a, &b]);
        assert_eq!(agg["m"]["mean"], 2.0);
        assert_eq!(agg["m"]["n"], 2);
        assert_eq!(agg["r.mean"]["n"], 1);
        assert_eq!(agg["r.mean"]["missing"], 1);
        assert!(agg["m"].get("missing").is_none());
        assert!(agg["r.mean"].get("ci95").is_none());
        let keys: Vec<&String> = agg.keys().collect();
        assert_eq!(keys, ["m", "r.mean"]);
    }

    #[test]
    fn seeds_report_merges_claims_over_seeds() {
        let rep = |holds: bool, share: f64| Report {
            scenario: "s".into(),
            runs: vec![json!({"policy":"p","domains":{"x":{"cpu_share":share}},
                              "claims":[{"text":"t","holds":holds,"values":{}}]})],
        };
        let v = seeds_report(&[(7, rep(true, 0.4)), (8, rep(false, 0.6)), (9, rep(true, 0.5))], false);
        assert_eq!(v["seeds"], 3);
        assert_eq!(v["first_seed"], 7);
        assert!(v.get("seed_runs").is_none());
        let run = &v["runs"][0];
        assert_eq!(run["domains"]["x"]["cpu_share"], 0.4, "the run object is the first seed's, intact");
        assert_eq!(run["stats"]["domains.x.cpu_share"]["mean"], 0.5);
        assert_eq!(run["stats"]["domains.x.cpu_share"]["n"], 3);
        let c = &run["claims"][0];
        assert_eq!(c["holds"], false);
        assert_eq!(c["held_seeds"], 2);
        assert_eq!(c["failed_seeds"], json!([8]));
        let kept = seeds_report(&[(7, rep(true, 0.4))], true);
        assert_eq!(kept["seed_runs"][0]["seed"], 7);
        assert_eq!(kept["runs"][0]["claims"][0]["holds"], true);
    }
}
