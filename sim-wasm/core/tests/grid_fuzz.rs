//! A seeded fuzz test of sweep grids: hundreds of random grids over the library's scenarios, with paths reached
//! by index, by name and through aliases of each other, value lists from one to thousands long, seed counts up to
//! the CLI's 100,000, and duration overrides that may cut off `changes`. Each grid must be refused with a message
//! or accepted within its limits, quickly: a refusal never builds the grid, and an accepted grid yields any run
//! and its combination's scenario on demand. The seed is fixed, so a failure names a grid that can be replayed.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedsim_core::grid::{Axis, Grid, GridSpec, Limits, CLI_LIMITS};
use serde_json::Value;
use std::path::PathBuf;
use std::time::{Duration, Instant};

/// Grids to try.
const GRIDS: usize = 400;

fn library() -> Vec<(String, Value)> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios");
    let mut out = Vec::new();
    for name in ["credit-weights.json", "credit-cap.json", "p000-fig18-io-threshold.json", "model-workloads.json"] {
        let mut v: Value = serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap();
        // Claims and variants do not change a grid, and loading checks every one of them.
        if let Some(o) = v.as_object_mut() {
            o.remove("claims");
            o.remove("variants");
        }
        out.push((name.to_string(), v));
    }
    out
}

/// Every leaf's path in `v`, each array element once by index and once by its name/id where it has one.
fn leaf_paths(v: &Value, prefix: &str, out: &mut Vec<String>) {
    let join = |k: &str| if prefix.is_empty() { k.to_string() } else { format!("{prefix}.{k}") };
    match v {
        Value::Object(o) => o.iter().for_each(|(k, c)| leaf_paths(c, &join(k), out)),
        Value::Array(items) => {
            for (i, c) in items.iter().enumerate() {
                leaf_paths(c, &join(&i.to_string()), out);
                if let Some(name) = c.get("name").or_else(|| c.get("id")).and_then(Value::as_str) {
                    leaf_paths(c, &join(name), out);
                }
            }
        }
        _ => out.push(prefix.to_string()),
    }
}

fn pick<'a, T>(rng: &mut ChaCha8Rng, items: &'a [T]) -> &'a T {
    &items[rng.next_u32() as usize % items.len()]
}

#[test]
fn random_grids_are_refused_clearly_or_run_within_their_limits() {
    let library = library();
    let mut rng = ChaCha8Rng::seed_from_u64(0x5eed_9121);
    let (mut accepted, mut refused) = (0, 0);
    let started = Instant::now();
    for n in 0..GRIDS {
        let (name, base) = pick(&mut rng, &library);
        let mut paths = Vec::new();
        leaf_paths(base, "", &mut paths);
        let axes_n = 1 + rng.next_u32() as usize % 3;
        let mut axes = Vec::new();
        for _ in 0..axes_n {
            let path = pick(&mut rng, &paths).clone();
            let original = path.split('.').try_fold(base, |v, k| {
                v.get(k).or_else(|| k.parse::<usize>().ok().and_then(|i| v.get(i))).or_else(|| {
                    v.as_array()?
                        .iter()
                        .find(|e| e.get("name").or_else(|| e.get("id")).and_then(Value::as_str) == Some(k))
                })
            });
            // Lengths from one to thousands, so some products pass the run limit by far.
            let len = match rng.next_u32() % 6 {
                0 | 1 => 1,
                2 | 3 => 2 + rng.next_u32() as usize % 4,
                4 => 10 + rng.next_u32() as usize % 90,
                _ => 1000 + rng.next_u32() as usize % 4000,
            };
            let values: Vec<Value> = (0..len)
                .map(|k| match (rng.next_u32() % 10, original) {
                    (0, _) => Value::Null,
                    (1, _) => Value::from(-(k as i64)),
                    (2, _) => Value::from(k as u64),
                    (3..=5, Some(Value::Number(x))) if x.is_u64() => Value::from(x.as_u64().unwrap_or(1) + k as u64),
                    (3..=5, Some(Value::Number(x))) => Value::from(x.as_f64().unwrap_or(1.0) * (1.0 + k as f64 / 8.0)),
                    (_, Some(o)) => o.clone(),
                    _ => Value::from(k as u64),
                })
                .collect();
            axes.push(Axis { path, values });
        }
        let seeds = *pick(&mut rng, &[1u64, 1, 2, 5, 100_000]);
        let duration_ms = *pick(&mut rng, &[None, None, Some(1), Some(1200), Some(10_000), Some(4_000_000)]);
        let spec = GridSpec { axes, seeds, seed: None, duration_ms, policies: Vec::new() };
        // A small run limit keeps accepted grids quick to check; the refusals are what this test is after.
        let limits = Limits { max_runs: 400, max_total_events: 20_000_000_000, ..Limits::default() };
        let t = Instant::now();
        let what = || {
            let axes: Vec<String> =
                spec.axes.iter().map(|a| format!("{} ({} values)", a.path, a.values.len())).collect();
            format!("grid {n}: {name} {axes:?} seeds {seeds} duration {duration_ms:?}")
        };
        match Grid::new(base, &spec, limits, CLI_LIMITS) {
            Ok(grid) => {
                accepted += 1;
                assert!(grid.len() as u64 <= limits.max_runs, "{}", what());
                assert!(grid.estimated_events <= limits.max_total_events, "{}", what());
                let last = grid.len() - 1;
                let item = grid.item(last);
                assert_eq!(item.combination, grid.combinations() - 1, "{}", what());
                grid.scenario(item.combination).unwrap_or_else(|e| panic!("{}: {e}", what()));
            }
            Err(e) => {
                refused += 1;
                assert!(!e.to_string().trim().is_empty(), "{}: an empty message", what());
            }
        }
        assert!(t.elapsed() < Duration::from_secs(10), "{} took {:?}", what(), t.elapsed());
    }
    // Both outcomes are exercised, and the whole test stays quick.
    assert!(accepted >= 20 && refused >= 20, "{accepted} accepted, {refused} refused");
    eprintln!("{GRIDS} grids: {accepted} accepted, {refused} refused, in {:?}", started.elapsed());
}
