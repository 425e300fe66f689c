//! Batches of whole-scenario runs (one scenario with one seed, several policies) spread over threads one
//! simulation at a time, then regrouped into reports with their claims: what `run --seeds` and `check` share.

use crate::par;
use schedsim_core::cost;
use schedsim_core::report::{self, Report, RunOptions, RunReport};
use schedsim_core::scenario::Scenario;
use schedsim_core::sim::{SimOptions, Simulation};

/// One report to produce: a scenario (overrides and seed already applied) under these policies.
pub struct Batch {
    pub scenario: Scenario,
    /// Policy ids, in report order.
    pub policies: Vec<String>,
    /// How to name this batch in an error, e.g. `scenarios/x.json, seed 3`.
    pub label: String,
}

/// `base`, `base + 1`, ..., `base + n - 1`; an error naming `--seeds` if that passes the largest seed.
pub fn seed_list(base: u64, n: u64) -> Result<Vec<u64>, String> {
    if n == 0 {
        return Err("--seeds: must be at least 1".into());
    }
    use schedsim_core::scenario::MAX_SEED;
    match base.checked_add(n - 1) {
        Some(last) if last <= MAX_SEED => Ok((base..=last).collect()),
        _ => Err(format!("--seeds: {n} seeds from {base} pass the largest seed, {MAX_SEED}")),
    }
}

/// Runs one policy of a scenario to the end and returns its run object (claims not attached).
pub fn run_one(sc: &Scenario, policy: &str, opts: &RunOptions) -> Result<RunReport, String> {
    let sim_opts = SimOptions { trace: true, max_events: opts.max_events, ..SimOptions::default() };
    let mut sim = Simulation::with_options(sc, policy, sim_opts).map_err(|e| e.to_string())?;
    sim.run().map_err(|e| e.to_string())?;
    Ok(sim.run_report(opts))
}

/// Runs every batch, one simulation per job on up to `jobs` threads, and returns one report per batch in order.
/// With `opts.max_events`, nothing runs if any batch is estimated above it (the error names the batch).
pub fn run(batches: &[Batch], opts: &RunOptions, jobs: usize, what: &str) -> Result<Vec<Report>, String> {
    if let Some(max) = opts.max_events {
        for b in batches {
            cost::within(&b.scenario, &b.policies, max).map_err(|e| format!("{}: {e}", b.label))?;
        }
    }
    let work: Vec<(usize, &str)> =
        batches.iter().enumerate().flat_map(|(b, batch)| batch.policies.iter().map(move |p| (b, p.as_str()))).collect();
    let bar = par::progress(work.len(), what);
    let runs = par::try_map(&work, jobs, &bar, |&(b, policy)| {
        run_one(&batches[b].scenario, policy, opts).map_err(|e| format!("{}, policy {policy}: {e}", batches[b].label))
    })?;
    let mut runs = runs.into_iter();
    Ok(batches
        .iter()
        .map(|batch| {
            let mine: Vec<RunReport> = runs.by_ref().take(batch.policies.len()).collect();
            Report { scenario: batch.scenario.id.clone(), runs: report::attach_claims(&batch.scenario, mine) }
        })
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn seeds_are_consecutive_and_bounded() {
        assert_eq!(seed_list(5, 3).unwrap(), vec![5, 6, 7]);
        assert!(seed_list(5, 0).unwrap_err().contains("--seeds"));
        assert!(seed_list((1 << 53) - 2, 3).unwrap_err().contains("largest seed"));
        assert!(seed_list(u64::MAX, 2).is_err());
    }
}
