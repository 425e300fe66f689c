//! Stamps the simulator's source hash into the module: the Python sweep cache keys results by it, so a change to
//! the engine, its policies, the scenario schema or the sweep grid never serves results of the old code.

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
    let inputs = [
        "../sim-wasm/core/src",
        "../sim-wasm/cli/src",
        "../scenarios/schema.json",
        "src",
    ];
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
    let hex: String = h
        .finalize()
        .iter()
        .take(6)
        .map(|b| format!("{b:02x}"))
        .collect();
    println!("cargo:rustc-env=SCHEDSIM_SOURCE_HASH={hex}");
}
