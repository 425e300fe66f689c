//! The TypeScript types of the JSON the page reads from the simulator (report, run metadata, trace records),
//! generated from the Rust types so the two cannot drift. The generated files are committed under
//! `web/src/sim/generated/`; this test fails when they differ from what the Rust types produce, and rewrites them
//! with `SCHEDSIM_WRITE_BINDINGS=1 cargo test -p schedsim-core bindings`.
//!
//! Generator: ts-rs. It writes plain `.ts` declaration files from a test, reads the serde attributes the types
//! already carry (renames, `skip_serializing_if`), and lets u64 map to `number` (the page parses the JSON into
//! numbers). It is a dev-dependency only: the wasm build and its ABI do not change. tsify instead emits the types
//! through wasm-bindgen (into the wasm package's typings, with the core crate depending on wasm-bindgen), and
//! specta needs its own export registry and a runtime exporter crate for the same result.

use crate::overview::InferenceSeries;
use crate::report::{LagReport, Report};
use crate::sim::Meta;
use crate::trace::{BeliefRec, BoostRec, DecisionRec, IoRec, RqSnap, TaskRec};
use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use ts_rs::{Config, TS};

/// The committed bindings, relative to this crate.
const COMMITTED: &str = "../../web/src/sim/generated";

/// Exports one type and every type it refers to.
type Export = fn(&Config) -> Result<(), ts_rs::ExportError>;

/// Writes every root type and what it refers to into `dir`, one file per type.
fn export_into(dir: &Path) {
    let cfg = Config::new().with_large_int("number").with_out_dir(dir);
    let roots: [Export; 10] = [
        Report::export_all,
        LagReport::export_all,
        Meta::export_all,
        DecisionRec::<'static>::export_all,
        IoRec::export_all,
        BeliefRec::export_all,
        BoostRec::export_all,
        TaskRec::export_all,
        RqSnap::export_all,
        InferenceSeries::export_all,
    ];
    for export in roots {
        export(&cfg).expect("bindings export");
    }
}

/// File name -> contents of the `.ts` files in `dir` (none when it does not exist).
fn read_dir(dir: &Path) -> BTreeMap<String, String> {
    let Ok(entries) = fs::read_dir(dir) else { return BTreeMap::new() };
    entries
        .filter_map(Result::ok)
        .map(|e| e.path())
        .filter(|p| p.extension().is_some_and(|x| x == "ts"))
        .map(|p| {
            let name = p.file_name().expect("file name").to_string_lossy().into_owned();
            (name, fs::read_to_string(&p).expect("readable binding"))
        })
        .collect()
}

#[test]
fn typescript_bindings_match_the_rust_types() {
    let committed = Path::new(env!("CARGO_MANIFEST_DIR")).join(COMMITTED);
    if std::env::var_os("SCHEDSIM_WRITE_BINDINGS").is_some() {
        let _ = fs::remove_dir_all(&committed);
        export_into(&committed);
        return;
    }
    let fresh: PathBuf = std::env::temp_dir().join(format!("schedsim-bindings-{}", std::process::id()));
    let _ = fs::remove_dir_all(&fresh);
    export_into(&fresh);
    let (want, have) = (read_dir(&fresh), read_dir(&committed));
    let _ = fs::remove_dir_all(&fresh);
    assert!(want.len() >= 10, "the export wrote {} files", want.len());
    let stale: Vec<&String> = want
        .keys()
        .chain(have.keys())
        .filter(|k| want.get(*k) != have.get(*k))
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    assert!(
        stale.is_empty(),
        "web/src/sim/generated is out of date ({stale:?}); regenerate it with \
         SCHEDSIM_WRITE_BINDINGS=1 cargo test -p schedsim-core bindings"
    );
}
