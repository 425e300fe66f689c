//! The `schedsim` command: run a scenario under its policies and print the report, check claims, benchmark.

use clap::{Parser, Subcommand, ValueEnum};
use schedsim_core::report::{self, RunOptions};
use schedsim_core::scenario::Scenario;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

#[derive(Parser)]
#[command(name = "schedsim", version, about = "Hypervisor CPU scheduling simulator")]
struct Cli {
    #[command(subcommand)]
    cmd: Cmd,
}

#[derive(Clone, Copy, ValueEnum)]
enum Format {
    Json,
    Csv,
}

#[derive(Subcommand)]
enum Cmd {
    /// Run a scenario under the named policies (all when none are named) and print the report.
    Run {
        file: PathBuf,
        /// Policy id to run (repeatable).
        #[arg(long = "policy")]
        policies: Vec<String>,
        /// Override the scenario's seed.
        #[arg(long)]
        seed: Option<u64>,
        /// Override the scenario's duration [ms].
        #[arg(long = "duration-ms")]
        duration_ms: Option<u64>,
        /// Omit wall-clock fields, so the output is byte-identical across runs and with the wasm build.
        #[arg(long)]
        deterministic: bool,
        #[arg(long, value_enum, default_value = "json")]
        format: Format,
    },
    /// Run every claim of the given scenario files (or directories of them); exit non-zero when one fails.
    Check {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
    },
    /// Measure simulation speed: simulated seconds per wall second and events per second.
    Bench {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
    },
}

fn load(path: &Path) -> Result<Scenario, String> {
    let text = std::fs::read_to_string(path).map_err(|e| format!("{}: cannot read: {e}", path.display()))?;
    Scenario::from_json(&text).map_err(|e| format!("{}: {e}", path.display()))
}

/// Scenario files under the given paths: files as given, directories' `*.json` except schema/index files.
fn scenario_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if p.is_dir() {
            let mut found: Vec<PathBuf> = std::fs::read_dir(p)
                .map_err(|e| format!("{}: {e}", p.display()))?
                .filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|f| {
                    f.extension().is_some_and(|x| x == "json")
                        && !matches!(f.file_name().and_then(|n| n.to_str()), Some("schema.json" | "index.json"))
                })
                .collect();
            found.sort();
            out.extend(found);
        } else {
            out.push(p.clone());
        }
    }
    Ok(out)
}

fn main() -> ExitCode {
    match real_main() {
        Ok(code) => code,
        Err(e) => {
            eprintln!("schedsim: {e}");
            ExitCode::from(2)
        }
    }
}

fn real_main() -> Result<ExitCode, String> {
    match Cli::parse().cmd {
        Cmd::Run { file, policies, seed, duration_ms, deterministic, format } => {
            let sc = load(&file)?;
            for p in &policies {
                if sc.policy(p).is_none() {
                    let known: Vec<&str> = sc.policies.iter().map(|p| p.id.as_str()).collect();
                    return Err(format!("--policy {p}: no such policy in {} (has: {})", sc.id, known.join(", ")));
                }
            }
            let opts = RunOptions { deterministic, seed, duration_ms };
            let rep = report::run_scenario(&sc, &policies, &opts).map_err(|e| e.to_string())?;
            match format {
                Format::Json => println!("{}", report::to_json_string(&rep)),
                Format::Csv => print!("{}", report::to_csv(&rep)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Check { paths } => {
            let mut failed = 0;
            let mut passed = 0;
            for f in scenario_files(&paths)? {
                let sc = load(&f)?;
                let rep = report::run_scenario(&sc, &[], &RunOptions::default())
                    .map_err(|e| format!("{}: {e}", f.display()))?;
                for run in &rep.runs {
                    for c in run["claims"].as_array().into_iter().flatten() {
                        let holds = c["holds"].as_bool() == Some(true);
                        let mark = if holds { "ok  " } else { "FAIL" };
                        println!(
                            "{mark} {} [{}] {}",
                            sc.id,
                            run["policy"].as_str().unwrap_or(""),
                            c["text"].as_str().unwrap_or("")
                        );
                        if !holds {
                            println!("       values: {}", c["values"]);
                            if let Some(e) = c["error"].as_str() {
                                println!("       error: {e}");
                            }
                            failed += 1;
                        } else {
                            passed += 1;
                        }
                    }
                }
            }
            println!("claims: {passed} passed, {failed} failed");
            Ok(if failed == 0 { ExitCode::SUCCESS } else { ExitCode::FAILURE })
        }
        Cmd::Bench { files, json } => {
            let mut rows = Vec::new();
            for f in scenario_files(&files)? {
                let sc = load(&f)?;
                rows.push(bench::run(&sc).map_err(|e| format!("{}: {e}", f.display()))?);
            }
            if json {
                println!("{}", serde_json::to_string_pretty(&rows).expect("bench rows serialise"));
            } else {
                for r in &rows {
                    println!(
                        "{:<24} {:>10.1} sim s/wall s {:>12.0} events/s {:>8.1} MB peak RSS",
                        r.scenario, r.sim_seconds_per_wall_second, r.events_per_second, r.peak_rss_mb
                    );
                }
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

mod bench;
