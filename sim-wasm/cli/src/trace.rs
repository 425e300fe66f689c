//! `schedsim trace`: recorded runs (perf / ftrace text, xentrace; see `schedsim_core::recorded`). `report` prints
//! a recorded run's report (and with `--simulate` the fitted scenario's runs beside it), `scenario` writes the
//! fitted scenario, `mapping` prints the proposed thread-to-vCPU mapping to edit and pass back with `--mapping`.

use clap::Subcommand;
use schedsim_core::recorded::{fit, Mapping, ReadOptions, RecordedRun};
use schedsim_core::report;
use std::io::Read;
use std::path::{Path, PathBuf};

#[derive(Subcommand)]
pub enum TraceCmd {
    /// The report of a recorded run (JSON or CSV, as `run` prints).
    Report {
        file: PathBuf,
        #[command(flatten)]
        input: Input,
        /// Also run the fitted scenario under these schedulers and print their runs after the recording's (with no
        /// list: kvm, the recording host's twin, then credit and credit2).
        #[arg(long = "simulate", value_name = "SCHEDULER", num_args = 0.., default_missing_value = "kvm,credit,credit2", value_delimiter = ',')]
        simulate: Option<Vec<String>>,
        #[arg(long, value_enum, default_value = "json")]
        format: super::Format,
    },
    /// Write the scenario fitted to a recorded run (each thread's run and sleep times as a workload).
    Scenario {
        file: PathBuf,
        #[command(flatten)]
        input: Input,
        /// Schedulers to list as the scenario's policies.
        #[arg(long = "policy", value_delimiter = ',', default_value = "kvm,credit,credit2")]
        policies: Vec<String>,
        #[arg(long, value_name = "FILE")]
        out: PathBuf,
    },
    /// Print the proposed mapping of threads to domains and vCPUs (JSON), to edit and pass back with --mapping.
    Mapping {
        file: PathBuf,
        #[command(flatten)]
        input: Input,
    },
}

/// How to read a trace.
#[derive(clap::Args)]
pub struct Input {
    /// A mapping (JSON, as `trace mapping` prints) instead of the proposed one.
    #[arg(long, value_name = "FILE")]
    mapping: Option<PathBuf>,
    /// xentrace: the TSC frequency [Hz] (xentrace files carry none; default 2.4 GHz, as xenalyze's).
    #[arg(long = "tsc-hz", value_parser = clap::value_parser!(u64).range(1..))]
    tsc_hz: Option<u64>,
}

/// Largest mapping file [bytes].
const MAX_MAPPING_BYTES: u64 = 1 << 20;

impl Input {
    fn load(&self, file: &Path) -> Result<RecordedRun, String> {
        let mapping = match &self.mapping {
            Some(p) => {
                let f = std::fs::File::open(p).map_err(|e| format!("{}: {e}", p.display()))?;
                let mut text = String::new();
                f.take(MAX_MAPPING_BYTES + 1).read_to_string(&mut text).map_err(|e| format!("{}: {e}", p.display()))?;
                if text.len() as u64 > MAX_MAPPING_BYTES {
                    return Err(format!("{}: a mapping is at most {MAX_MAPPING_BYTES} bytes", p.display()));
                }
                Some(text)
            }
            None => None,
        };
        let opts = ReadOptions { tsc_hz: self.tsc_hz };
        let run = open_trace(file, mapping.as_deref(), &opts)?;
        if let Some(d) = &run.read.damage {
            eprintln!("schedsim: {}: read up to the damage: {}", file.display(), d.message);
        }
        Ok(run)
    }
}

/// Opens a trace file: streamed from disk, or (gzip-compressed) expanded into memory within the core's bounds.
pub fn open_trace(file: &Path, mapping: Option<&str>, opts: &ReadOptions) -> Result<RecordedRun, String> {
    schedsim_core::recorded::open_path(file, mapping, opts, &mut || Ok(()))
}

fn title(file: &Path) -> String {
    file.file_name().map_or_else(|| "trace".to_string(), |n| n.to_string_lossy().into_owned())
}

/// Runs a `trace` subcommand; returns what to print.
pub fn run(cmd: TraceCmd) -> Result<String, String> {
    match cmd {
        TraceCmd::Report { file, input, simulate, format } => {
            let run = input.load(&file)?;
            let t = title(&file);
            let rep = match simulate {
                Some(s) => {
                    let s: Vec<&str> = s.iter().map(String::as_str).collect();
                    fit::compare(&run, &t, &s)?
                }
                None => run.full_report(&t)?,
            };
            Ok(match format {
                super::Format::Json => format!("{}\n", report::to_json_string(&rep)),
                super::Format::Csv => report::to_csv(&rep),
            })
        }
        TraceCmd::Scenario { file, input, policies, out } => {
            let run = input.load(&file)?;
            let p: Vec<&str> = policies.iter().map(String::as_str).collect();
            let sc = fit::scenario(&run, &title(&file), &p);
            // Written only once the scenario loads as a scenario file.
            schedsim_core::scenario::Scenario::from_value(sc.clone()).map_err(|e| e.problems.join("; "))?;
            let text = serde_json::to_string_pretty(&sc).map_err(|e| e.to_string())?;
            std::fs::write(&out, format!("{text}\n")).map_err(|e| format!("{}: {e}", out.display()))?;
            Ok(String::new())
        }
        TraceCmd::Mapping { file, input } => {
            let run = input.load(&file)?;
            let m: &Mapping = &run.mapping;
            Ok(format!("{}\n", serde_json::to_string_pretty(m).map_err(|e| e.to_string())?))
        }
    }
}
