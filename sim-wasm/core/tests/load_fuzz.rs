//! A seeded fuzz test of loading, the sibling of `grid_fuzz.rs`: a few hundred hostile scenario files, each loaded
//! and built as `schedsim check` builds it (the scenario, then every variant and every distinct ablation, one at a
//! time, within one patch budget), under a memory cap and a work bound counted by this binary's allocator: the
//! bytes live at once and the bytes allocated in all, on this thread. The shapes are the amplifications loading
//! once had (many variants, many `without`s, documents near the 4 MB limit, patches that walk or copy the whole
//! document), deep nesting, huge arrays, grids of many combinations and seeds, and structural mutants of every
//! library scenario. Each file must be refused with a message naming something, or loaded and built within the
//! caps. The worst cases found are kept in `tests/bounded/` and loaded first. The seed is fixed, so a failure
//! names a mutant that can be replayed.

use rand_chacha::rand_core::{RngCore, SeedableRng};
use rand_chacha::ChaCha8Rng;
use schedsim_core::cost;
use schedsim_core::grid::{Axis, Grid, GridSpec, Limits, CLI_LIMITS};
use schedsim_core::patch::{PatchBudget, MAX_PATCH_WORK};
use schedsim_core::scenario::{Scenario, MAX_SCENARIO_BYTES};
use serde_json::{json, Value};
use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::path::PathBuf;

/// Mutants to try after the kept worst cases.
const MUTANTS: usize = 200;

/// The most memory one file may hold live while it is loaded and built [bytes]: 128 times the file size limit.
/// A parsed document takes up to 36 bytes per byte of text (a file of 2 million `0,` is 2 million 72-byte
/// values); loading holds it, and building a variant adds its copy of the document, the patch's value copied into
/// it once.
const MEMORY_CAP: usize = 128 * MAX_SCENARIO_BYTES;

/// The most bytes one file's load and build may allocate in all (a deterministic measure of work): what loading
/// the document takes, and a multiple of the patch work allowed (each byte of document walked allocates at most
/// a few dozen).
const WORK_CAP: u64 = 128 * MAX_SCENARIO_BYTES as u64 + 64 * BUDGET;

/// The most bytes a grid over one file may allocate in all, besides building its combinations' engines (which
/// each of their runs does too): loading the file twice over (the grid reads it and validates it as written) and
/// a multiple of the grid work allowed (validating a scenario allocates a few hundred bytes per byte of it).
const GRID_WORK_CAP: u64 = 256 * MAX_SCENARIO_BYTES as u64 + 1024 * GRID_WORK;

/// Bytes allocated building the engine of each of the scenario's policies, with `host.pcpus` at the most the fuzz's
/// grids set (8) or as written if more: what the grid check builds for each combination.
fn engine_bytes(text: &str) -> u64 {
    let mut v: Value = serde_json::from_str(text).unwrap();
    let written = v["host"]["pcpus"].as_u64().unwrap_or(1);
    v["host"]["pcpus"] = json!(written.max(8));
    let Ok(sc) = Scenario::from_value(v) else { return 0 };
    let (_, _, total) = measured(|| {
        for p in &sc.policies {
            let _ = schedsim_core::sim::Simulation::new(&sc, &p.id);
        }
    });
    total
}

thread_local! {
    // Const-initialised and without destructors, so the allocator can use them without allocating.
    static LIVE: Cell<usize> = const { Cell::new(0) };
    static PEAK: Cell<usize> = const { Cell::new(0) };
    static TOTAL: Cell<u64> = const { Cell::new(0) };
}

/// Counts this thread's allocations (the build under test runs on one thread).
struct Counting;

fn grew(n: usize) {
    let _ = LIVE.try_with(|l| {
        l.set(l.get() + n);
        let _ = PEAK.try_with(|p| p.set(p.get().max(l.get())));
    });
    let _ = TOTAL.try_with(|t| t.set(t.get() + n as u64));
}

fn shrank(n: usize) {
    let _ = LIVE.try_with(|l| l.set(l.get().saturating_sub(n)));
}

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        grew(layout.size());
        System.alloc(layout)
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        shrank(layout.size());
        System.dealloc(ptr, layout)
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        shrank(layout.size());
        grew(new_size);
        System.realloc(ptr, layout, new_size)
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Peak live bytes above the start and bytes allocated while `f` runs, on this thread.
fn measured<T>(f: impl FnOnce() -> T) -> (T, usize, u64) {
    let (live, total) = (LIVE.with(Cell::get), TOTAL.with(Cell::get));
    PEAK.with(|p| p.set(live));
    let out = f();
    (out, PEAK.with(Cell::get) - live, TOTAL.with(Cell::get) - total)
}

fn scenarios_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../../scenarios")
}

/// Every library scenario (JSON values).
fn library() -> Vec<(String, Value)> {
    let mut out: Vec<(String, Value)> = std::fs::read_dir(scenarios_dir())
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "json"))
        .filter(|p| !["schema.json", "index.json"].contains(&p.file_name().unwrap().to_str().unwrap()))
        .map(|p| {
            let v = serde_json::from_str(&std::fs::read_to_string(&p).unwrap()).unwrap();
            (p.file_name().unwrap().to_string_lossy().into_owned(), v)
        })
        .collect();
    out.sort_by(|a, b| a.0.cmp(&b.0));
    out
}

fn below(rng: &mut ChaCha8Rng, n: usize) -> usize {
    rng.next_u32() as usize % n.max(1)
}

/// Pads a scenario with idle CPU tasks spread over extra domains until its text is about `bytes` long: the shape
/// whose parsed form is largest for its size (many small objects).
fn pad(v: &mut Value, bytes: usize) {
    let doms = v["domains"].as_array_mut().unwrap();
    let mut i = 0usize;
    let task = |i: usize| json!({"name": format!("task-number-{i:08}"), "workload": {"type": "cpu"}});
    // 55 bytes a task, 4,000 tasks a domain.
    let tasks = bytes / 55;
    while i < tasks {
        let n = (tasks - i).min(4000);
        let list: Vec<Value> = (i..i + n).map(task).collect();
        doms.push(json!({"name": format!("pad{}", doms.len()), "tasks": list}));
        i += n;
    }
}

/// A patch of `n` operations of one of the costly kinds on a scenario with domains.
fn patch(rng: &mut ChaCha8Rng, n: usize, doc: &Value) -> Value {
    let whole = serde_json::to_value(&doc["domains"]).unwrap();
    let ops: Vec<Value> = (0..n)
        .map(|k| match below(rng, 6) {
            0 => json!({"op": "replace", "path": "/duration_ms", "value": 1000 + k}),
            // Walks the whole domain list to compare it.
            1 => json!({"op": "test", "path": "/domains", "value": whole.clone()}),
            // Copies the biggest subtree and takes it away again.
            2 => json!({"op": "copy", "from": "/domains", "path": "/summary_copy"}),
            3 => json!({"op": "remove", "path": "/summary_copy"}),
            4 => json!({"op": "copy", "from": "/domains/0", "path": "/domains/-"}),
            _ => json!({"op": "add", "path": "/host/pcpus", "value": 1 + k % 4}),
        })
        .collect();
    Value::Array(ops)
}

/// A value nested `depth` arrays deep.
fn nested(depth: usize) -> String {
    format!("{}1{}", "[".repeat(depth), "]".repeat(depth))
}

/// One random structural change somewhere in `v`.
fn mutate(rng: &mut ChaCha8Rng, v: &mut Value, depth: usize) {
    let kind = below(rng, 10);
    match v {
        Value::Object(m) if !m.is_empty() && depth < 6 && kind < 6 => {
            let k = m.keys().nth(below(rng, m.len())).unwrap().clone();
            mutate(rng, m.get_mut(&k).unwrap(), depth + 1);
        }
        Value::Array(a) if !a.is_empty() && depth < 6 && kind < 6 => {
            let i = below(rng, a.len());
            mutate(rng, &mut a[i], depth + 1);
        }
        Value::Object(m) if !m.is_empty() && kind == 6 => {
            let k = m.keys().nth(below(rng, m.len())).unwrap().clone();
            m.remove(&k);
        }
        Value::Array(a) if !a.is_empty() && kind == 7 => {
            // Many copies of one element (a huge array).
            let e = a[below(rng, a.len())].clone();
            let n = [2, 100, 5000][below(rng, 3)];
            a.extend(std::iter::repeat_n(e, n));
        }
        _ => {
            *v = match below(rng, 8) {
                0 => json!(0),
                1 => json!(-1),
                2 => json!(u64::MAX),
                3 => json!(9_007_199_254_740_992u64),
                4 => json!(1.5),
                5 => json!(""),
                6 => json!(null),
                _ => json!(vec![0; 1 + below(rng, 200_000)]),
            }
        }
    }
}

/// A hostile file: its name (for a failure) and its text.
fn mutant(rng: &mut ChaCha8Rng, n: usize, library: &[(String, Value)]) -> (String, String) {
    let (name, base) = &library[below(rng, library.len())];
    let mut v = base.clone();
    let shape = below(rng, 8);
    let what = match shape {
        // Amplification: a big document, many variants and ablations whose patches walk it.
        0..=2 => {
            // Few near the size limit: each takes seconds to parse and validate in a debug build.
            let bytes = if below(rng, 20) == 0 {
                [3_300_000, 4_100_000][below(rng, 2)]
            } else {
                [20_000, 100_000, 300_000][below(rng, 3)]
            };
            pad(&mut v, bytes);
            let (variants, withouts, ops) =
                ([0, 3, 20, 40][below(rng, 4)], [0, 20, 200][below(rng, 3)], 1 + below(rng, 100));
            let one = patch(rng, ops, base);
            v["variants"] =
                Value::Array((0..variants).map(|i| json!({"label": format!("v{i}"), "patch": one.clone()})).collect());
            let claim =
                json!({"text": "t", "metric": "fairness.jain", "policy": v["policies"][0]["id"], "at_least": 0});
            let claims: Vec<Value> = (0..withouts)
                .map(|i| {
                    let mut c = claim.clone();
                    c["text"] = json!(format!("c{i}"));
                    c["without"] = json!({"label": format!("w{i}"), "patch": one.clone()});
                    c
                })
                .collect();
            v["claims"] = Value::Array(claims);
            format!("{bytes} bytes, {variants} variants, {withouts} withouts, {ops} ops")
        }
        // Structural mutants of the library scenario.
        3..=5 => {
            let k = below(rng, 4);
            for _ in 0..k {
                mutate(rng, &mut v, 0);
            }
            format!("{k} mutations")
        }
        // A value nested deeper than any parser should follow.
        6 => {
            let depth = [100, 1_000, 100_000][below(rng, 3)];
            let text = serde_json::to_string(&v).unwrap().replacen(
                "\"seed\":",
                &format!("\"deep\":{},\"seed\":", nested(depth)),
                1,
            );
            return (format!("mutant {n}: {name}, nested {depth} deep"), text);
        }
        // A huge patch value.
        _ => {
            let len = [1_000, 1_000, 500_000, 500_000, 2_000_000][below(rng, 5)];
            v["variants"] =
                json!([{"label": "huge", "patch": [{"op": "add", "path": "/focus", "value": vec![0; len]}]}]);
            format!("a {len}-element patch value")
        }
    };
    let mut text = serde_json::to_string(&v).unwrap();
    if below(rng, 10) == 0 {
        text.truncate(below(rng, text.len()));
    }
    (format!("mutant {n}: {name}, {what}"), text)
}

/// Patch work each file may take here [bytes]: an eighth of the default, so that the test stays quick in a debug
/// build; what is bounded is the same.
const BUDGET: u64 = MAX_PATCH_WORK / 8;

/// Loads `text` and builds it as `check` does; `Err` is the first refusal's message.
fn load_and_build(text: &str) -> Result<(), String> {
    let sc = Scenario::from_json(text).map_err(|e| e.to_string())?;
    let mut budget = PatchBudget::new(BUDGET);
    budget.check_total(sc.check_work(), "its variants and ablations")?;
    for si in 0..=sc.variants.len() {
        let setting = if si == 0 { sc.clone() } else { sc.variant(si - 1, &mut budget).map_err(|e| e.to_string())? };
        cost::estimate(&setting, &[]);
        for k in setting.distinct_ablations() {
            let ablated = setting.ablated_within(k, &mut budget).expect("an ablation").map_err(|e| e.to_string())?;
            cost::estimate(&ablated, &[]);
        }
    }
    assert!(budget.spent <= budget.limit);
    Ok(())
}

/// Grid work each grid may take here (combinations x document size) [bytes]: an eighth of the patch budget here,
/// so that a grid over a large document is refused, as the default refuses a larger one, in a debug build's time.
const GRID_WORK: u64 = BUDGET / 8;

/// A grid of many combinations and seeds over a file that loaded: refused or bounded, never built whole. Returns
/// the combinations of an accepted grid.
fn grid(rng: &mut ChaCha8Rng, text: &str) -> Result<usize, String> {
    let v: Value = serde_json::from_str(text).map_err(|e| e.to_string())?;
    let values = |n: usize| (0..n).map(|i| json!(1 + i % 8)).collect::<Vec<Value>>();
    let axes = vec![
        Axis { path: "host.pcpus".into(), values: values([1, 50, 2000][below(rng, 3)]) },
        Axis { path: "seed".into(), values: values([1, 100, 5000][below(rng, 3)]) },
    ];
    let seeds = [1u64, 1000, 100_000][below(rng, 3)];
    let spec = GridSpec { axes, seeds, seed: None, duration_ms: None, policies: Vec::new() };
    let limits = Limits { max_grid_work: GRID_WORK, ..Limits::default() };
    let grid = Grid::new(&v, &spec, limits, CLI_LIMITS).map_err(|e| e.to_string())?;
    grid.scenario(grid.combinations() - 1).map(|_| grid.combinations()).map_err(|e| e.to_string())
}

#[test]
fn hostile_files_load_within_the_memory_cap_and_the_work_bound_or_are_refused_clearly() {
    let library = library();
    let mut rng = ChaCha8Rng::seed_from_u64(0x10ad_f022);
    let kept = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/bounded");
    let mut files: Vec<(String, String)> = std::fs::read_dir(&kept)
        .unwrap()
        .flatten()
        .map(|e| (format!("kept {}", e.file_name().to_string_lossy()), std::fs::read_to_string(e.path()).unwrap()))
        .collect();
    files.sort();
    let (mut loaded, mut refused, mut worst) = (0, 0, (0usize, 0u64, String::new()));
    for n in 0..files.len() + MUTANTS {
        let (what, text) = if n < files.len() { files[n].clone() } else { mutant(&mut rng, n, &library) };
        let (result, peak, total) = measured(|| load_and_build(&text));
        match &result {
            Ok(()) => loaded += 1,
            Err(e) => {
                refused += 1;
                assert!(!e.trim().is_empty(), "{what}: an empty message");
            }
        }
        assert!(peak <= MEMORY_CAP, "{what}: {peak} bytes live at once, more than {MEMORY_CAP}");
        assert!(total <= WORK_CAP, "{what}: {total} bytes allocated in all, more than {WORK_CAP}");
        if peak > worst.0 {
            worst = (peak, total, what.clone());
        }
        // Documents past 1 MB only in the test below: validating one takes seconds in a debug build.
        if result.is_ok() && text.len() < 1_000_000 && below(&mut rng, 4) == 0 {
            let (accepted, peak, total) = measured(|| grid(&mut rng, &text));
            assert!(peak <= MEMORY_CAP, "{what}, a grid over it: {peak} bytes live at once");
            // An accepted grid's check builds each combination's engines once (twice the figure: host sizes vary).
            let engines = accepted.map_or(0, |c| 2 * c as u64 * engine_bytes(&text));
            assert!(total <= GRID_WORK_CAP + engines, "{what}, a grid over it: {total} bytes allocated in all");
        }
    }
    assert!(loaded >= 10 && refused >= 20, "{loaded} loaded, {refused} refused");
    eprintln!(
        "{} files: {loaded} loaded and built, {refused} refused; the most memory: {} MB live ({} MB allocated), {}",
        files.len() + MUTANTS,
        worst.0 >> 20,
        worst.1 >> 20,
        worst.2
    );
}

/// A variant inserting a huge value holds one more copy of it while it is built (the one in the built document),
/// not three (reading the operation and applying it once copied it twice more).
#[test]
fn a_variant_inserting_a_huge_value_copies_it_once() {
    let (_, library_file) = library().into_iter().find(|(n, _)| n == "credit-weights.json").unwrap();
    let huge = json!(vec![0; 500_000]);
    let (held, value_bytes, _) = measured(|| huge.clone());
    drop(held);
    for (op, path) in [("add", "/focus"), ("add", "/domains/-"), ("replace", "/title"), ("test", "/title")] {
        let mut v = library_file.clone();
        v["variants"] = json!([{"label": "huge", "patch": [{"op": op, "path": path, "value": huge}]}]);
        let sc = Scenario::from_json(&v.to_string()).unwrap();
        let (built, peak, _) = measured(|| sc.variant(0, &mut PatchBudget::new(MAX_PATCH_WORK)).map(|_| ()));
        // The schema refuses each (the value is no focus, domain or title) once the value is in place.
        assert!(built.is_err(), "{op} {path}");
        assert!(
            peak < value_bytes + value_bytes / 4,
            "{op} {path}: {peak} bytes live building the variant, against {value_bytes} for one copy of the value"
        );
    }
}

/// A grid of many combinations over a document near the size limit, and one of many combinations and seeds, are
/// refused up front with their figures: the first by its work (combinations x document size), the second by its
/// run count, each allocating little more than the document read twice.
#[test]
fn grids_over_a_large_document_are_refused_with_their_figures() {
    let (_, mut v) = library().into_iter().find(|(n, _)| n == "credit-weights.json").unwrap();
    v.as_object_mut().unwrap().remove("claims");
    pad(&mut v, 3_300_000);
    let text = v.to_string();
    let values = |n: usize| (1..=n).map(|i| json!(i)).collect::<Vec<Value>>();
    let one = |axis: Axis, seeds: u64| GridSpec {
        axes: vec![axis],
        seeds,
        seed: None,
        duration_ms: None,
        policies: vec!["credit".into()],
    };
    for (spec, says) in [
        (one(Axis { path: "host.pcpus".into(), values: values(100_000) }, 1), "bytes of work (combinations x"),
        (one(Axis { path: "domains.heavy.weight".into(), values: values(1000) }, 100_000), "runs (1000 combinations"),
    ] {
        let (refused, peak, total) = measured(|| {
            let base: Value = serde_json::from_str(&text).unwrap();
            Grid::new(&base, &spec, Limits::default(), CLI_LIMITS).err().map(|e| e.to_string())
        });
        let e = refused.expect("refused");
        assert!(e.contains(says) && (e.contains("--max-grid-work") || e.contains("--max-runs")), "{e}");
        assert!(peak <= MEMORY_CAP && total <= GRID_WORK_CAP, "{e}: {peak} bytes live, {total} allocated");
    }
}
