//! The library side of the `schedsim` command: batches of runs over threads, and sweeps over a grid of scenario
//! parameters (whole, or one shard of it). The Python package (`python/`) builds on the same sweep grid, so a
//! grid means the same runs whichever front end runs it.

pub mod batch;
pub mod par;
pub mod sweep;

use schedsim_core::scenario::Scenario;

/// The scenario's variant with this label, or an error listing the labels there are.
pub fn pick_variant(sc: &Scenario, label: &str) -> Result<Scenario, String> {
    match sc.variants.iter().find(|v| v.label == label).and_then(|v| v.scenario.as_deref()) {
        Some(v) => Ok(v.clone()),
        None => {
            let labels: Vec<String> = sc.variants.iter().map(|v| format!("'{}'", v.label)).collect();
            let known = if labels.is_empty() { "it has none".to_string() } else { labels.join(", ") };
            Err(format!("--variant: scenario '{}' has no variant '{label}' ({known})", sc.id))
        }
    }
}
