//! Stamps the simulator's source hash into the binary: a sweep's shards record it, so `--merge` never joins rows
//! that two different builds of the simulator computed.

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
    let mut paths = Vec::new();
    for i in ["../core/src", "src"] {
        println!("cargo:rerun-if-changed={i}");
        files(Path::new(i), &mut paths);
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
