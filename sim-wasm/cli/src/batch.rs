//! Batches of whole-scenario runs (one scenario with one seed, several policies) spread over threads one
//! simulation at a time, then regrouped into reports with their claims: what `run --seeds` and `check` share.

use crate::par;
use schedsim_core::cost;
use schedsim_core::report::{self, Report, RunOptions, RunReport};
use schedsim_core::scenario::Scenario;

/// One report to produce: a scenario (overrides and seed already applied) under these policies.
pub struct Batch {
    pub scenario: Scenario,
    /// Policy ids, in report order.
    pub policies: Vec<String>,
    /// How to name this batch in an error, e.g. `scenarios/x.json, seed 3`.
    pub label: String,
}

pub use schedsim_core::grid::{run_one, seed_list};

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
