//! Stamps the simulator's source hash into the crate (`schedsim_core::VERSION`): a sweep's shards record it, so
//! `--merge` never joins rows two different builds computed, and the Python sweep cache keys results by it, so a
//! change to the engine, its policies, the scenario schema or a front end's sweep code never serves results of
//! the old code. One hash for every front end, so the CLI and the Python package of one tree agree.

use sha2::{Digest, Sha256};
use std::path::{Path, PathBuf};

fn files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            files(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn main() {
    // The core, the schema it validates with, and the front ends' run and sweep code (the CLI, the Python
    // module), relative to this crate.
    let inputs = ["src", "../../scenarios/schema.json", "../cli/src", "../../python/src"];
    let mut paths = Vec::new();
    for i in inputs {
        println!("cargo:rerun-if-changed={i}");
        let p = Path::new(i);
        if p.is_dir() {
            files(p, &mut paths);
        } else {
            paths.push(p.to_path_buf());
        }
    }
    paths.sort();
    let mut h = Sha256::new();
    for p in &paths {
        h.update(p.to_string_lossy().as_bytes());
        h.update([0]);
        h.update(std::fs::read(p).unwrap_or_default());
        h.update([0]);
    }
    let hex: String = h.finalize().iter().take(6).map(|b| format!("{b:02x}")).collect();
    println!("cargo:rustc-env=SCHEDSIM_SOURCE_HASH={hex}");
}
