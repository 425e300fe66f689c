//! The `schedsim` command: run a scenario under its policies and print the report, check claims, sweep a grid of
//! scenario parameters, benchmark. Independent simulations (seeds, policies, grid points) run on all cores; output
//! order never depends on thread timing.

use clap::{Parser, Subcommand, ValueEnum};
use schedsim_core::cost;
use schedsim_core::report::{self, Report, RunOptions};
use schedsim_core::scenario::{Scenario, MAX_SCENARIO_BYTES, MAX_SEED};
use schedsim_core::stats;
use serde_json::Value;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;

mod bench;
mod check;
mod trace;
mod validate;

use schedsim_cli::{batch, par, sweep};
use schedsim_core::patch::PatchBudget;

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
        /// Override the scenario's seed (with --seeds: the first seed); 0..=2^53-1, as in the scenario file.
        #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_SEED))]
        seed: Option<u64>,
        /// Run every policy with N consecutive seeds and add per-metric statistics (`stats`) to each run object.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
        seeds: Option<u64>,
        /// With --seeds: also print every seed's runs under `seed_runs`.
        #[arg(long = "keep-seed-runs", requires = "seeds")]
        keep_seed_runs: bool,
        /// Override the scenario's duration [ms].
        #[arg(long = "duration-ms")]
        duration_ms: Option<u64>,
        /// Omit wall-clock fields, so the output is byte-identical across runs and with the wasm build.
        #[arg(long)]
        deterministic: bool,
        /// With --seeds, csv prints one row per (policy, metric) with its statistics.
        #[arg(long, value_enum, default_value = "json")]
        format: Format,
        /// Worker threads for --seeds [default: all cores].
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        jobs: Option<u64>,
        /// Run the scenario's variant with this label (see the scenario's `variants`) instead of the scenario.
        #[arg(long)]
        variant: Option<String>,
        #[command(flatten)]
        scripts: Scripts,
        #[command(flatten)]
        limit: Limit,
    },
    /// Run every claim of the given scenario files (or directories of them); exit non-zero when one fails.
    Check {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Run each scenario with N consecutive seeds from its own; a claim holds only if it holds for every seed.
        #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..=100_000))]
        seeds: Option<u64>,
        /// Start every scenario's seeds here instead of at its own seed (`--first-seed 6 --seeds 10`: seeds 6-15).
        #[arg(long, value_name = "SEED", value_parser = clap::value_parser!(u64).range(0..=MAX_SEED))]
        first_seed: Option<u64>,
        /// Worker threads [default: all cores].
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        jobs: Option<u64>,
        /// Also fail unless this fidelity table (see `fidelity`) equals what these runs give.
        #[arg(long, value_name = "FILE")]
        fidelity: Option<PathBuf>,
        /// The papers' figures and tables, for the fidelity table.
        #[arg(long, value_name = "FILE", default_value = "docs/fidelity-figures.json")]
        figures: PathBuf,
        /// Print every claim's verdict as a JSON array instead of the lines (what Python's `check` returns);
        /// the exit code is the same.
        #[arg(long)]
        json: bool,
        #[command(flatten)]
        scripts: Scripts,
        #[command(flatten)]
        limit: Limit,
    },
    /// Write the fidelity table: every figure and table of the papers, the paper's value, ours over the seeds,
    /// and whether each claim holds, fails without its mechanism, or is not reproduced (Markdown).
    Fidelity {
        #[arg(required = true)]
        paths: Vec<PathBuf>,
        /// Seeds per scenario and variant.
        #[arg(long, value_name = "N", default_value_t = 5, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        seeds: u64,
        /// Worker threads [default: all cores].
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        jobs: Option<u64>,
        /// The papers' figures and tables (JSON list).
        #[arg(long, value_name = "FILE", default_value = "docs/fidelity-figures.json")]
        figures: PathBuf,
        /// Write here instead of standard output.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
    },
    /// Run a grid over scenario parameters (every combination x every seed x every policy), one row per run. With
    /// --shard I/N --out DIR, run only the I-th of N slices and write it to DIR; --merge DIR joins the slices.
    Sweep {
        #[arg(required_unless_present = "merge")]
        file: Option<PathBuf>,
        /// PATH=V1,V2,...: a dotted path into the scenario file and its values, e.g. `domains.2.weight=256,512`,
        /// `policies.1.params.ratelimit_us=0,1000`, `host.pcpus=1,2`. Array elements by index or by name/id.
        #[arg(long = "set", value_name = "PATH=V1,V2,...")]
        sets: Vec<String>,
        /// Seeds per combination, consecutive from the scenario's seed (or --seed).
        #[arg(long, value_name = "N", default_value_t = 1, value_parser = clap::value_parser!(u64).range(1..=100_000))]
        seeds: u64,
        /// First seed of every combination, instead of the scenario's; 0..=2^53-1.
        #[arg(long, value_parser = clap::value_parser!(u64).range(0..=MAX_SEED))]
        seed: Option<u64>,
        /// Override the scenario's duration [ms].
        #[arg(long = "duration-ms")]
        duration_ms: Option<u64>,
        /// Policy id to run (repeatable; all when none are named).
        #[arg(long = "policy")]
        policies: Vec<String>,
        /// Worker threads [default: all cores].
        #[arg(long, value_parser = clap::value_parser!(u64).range(1..=1024))]
        jobs: Option<u64>,
        /// Output format (of the whole sweep or of --merge; shards are always CSV).
        #[arg(long, value_enum, default_value = "csv")]
        format: Format,
        /// Metric path to print, `*` for every key at a level (repeatable) [default: every domain's cpu_share,
        /// response_ms.mean and .p99 where present, fairness.jain].
        #[arg(long = "metric", value_name = "PATH")]
        metrics: Vec<String>,
        /// Run only the I-th (from 0) of N slices of the grid's runs (run r belongs to slice r mod N), e.g.
        /// `--shard $SLURM_ARRAY_TASK_ID/10` or `--shard $JOB_COMPLETION_INDEX/10`.
        #[arg(long, value_name = "I/N", requires = "out")]
        shard: Option<String>,
        /// With --shard: the directory to write `shard-I-of-N.csv` and its manifest `shard-I-of-N.json` into.
        #[arg(long, value_name = "DIR", requires = "shard")]
        out: Option<PathBuf>,
        /// Join the shards in DIR and print the whole sweep's table, as one run without --shard would.
        #[arg(long, value_name = "DIR", conflicts_with_all = ["file", "sets", "shard", "seed", "duration_ms", "policies", "metrics"])]
        merge: Option<PathBuf>,
        /// Refuse a grid of more than N runs (combinations x seeds x policies) before anything is built
        /// [default: 100000].
        #[arg(long = "max-runs", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        max_runs: Option<u64>,
        /// Refuse a grid whose runs are estimated above N events in all [default: 100000000000, about half an
        /// hour on two cores].
        #[arg(long = "max-total-events", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        max_total_events: Option<u64>,
        /// Refuse a grid whose combinations x scenario size passes N bytes before any combination is built (each
        /// is built and validated a few times) [default: 268435456, up to three minutes].
        #[arg(long = "max-grid-work", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
        max_grid_work: Option<u64>,
        #[command(flatten)]
        scripts: Scripts,
        #[command(flatten)]
        limit: Limit,
    },
    /// Recorded runs: a real host's schedule (perf script / ftrace text, xentrace) as a report, or as a fitted
    /// scenario.
    Trace {
        #[command(subcommand)]
        cmd: trace::TraceCmd,
    },
    /// Check the kvm model against recordings of this machine: every shape of DIR (a folder each, as
    /// scripts/record-validation.sh writes them) replayed in its fitted scenario, recorded against simulated.
    Validate {
        dir: PathBuf,
        /// Schedulers to run each fitted scenario under; the first is judged against the shape's expect.json.
        #[arg(long = "simulate", value_delimiter = ',', default_value = "kvm,credit")]
        simulate: Vec<String>,
        /// Write the Markdown page here instead of printing it.
        #[arg(long, value_name = "FILE")]
        out: Option<PathBuf>,
        /// Compare with the file given by --out instead of writing it; fail when it differs.
        #[arg(long, requires = "out")]
        check: bool,
    },
    /// Measure simulation speed: simulated seconds per wall second and events per second.
    Bench {
        #[arg(required = true)]
        files: Vec<PathBuf>,
        /// Print JSON.
        #[arg(long)]
        json: bool,
        /// Rounds per scenario: each runs every piece once, so that the pieces compared alternate; the ratios
        /// are their min / median / max.
        #[arg(long, default_value_t = 3, value_parser = clap::value_parser!(u64).range(1..=100))]
        rounds: u64,
        #[command(flatten)]
        scripts: Scripts,
        #[command(flatten)]
        limit: Limit,
    },
}

/// The cost limit every simulating command shares.
#[derive(clap::Args, Clone, Copy)]
struct Limit {
    /// Refuse a run whose estimated work (see `schedsim_core::cost`) passes N, and stop a run once its work passes
    /// N; work is events plus the guest run-queue entries and threads they walk [default: 1000000000, about a
    /// minute or two per run].
    #[arg(long = "max-events", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_events: Option<u64>,
    /// Refuse building a file's variants and claims' ablations past N bytes of patch work ((operations + 1) x
    /// document size, summed; see `schedsim_core::patch`) [default: 67108864, 16 walks of a 4 MB document].
    #[arg(long = "max-patch-work", value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    max_patch_work: Option<u64>,
}

impl Limit {
    fn events(self) -> u64 {
        self.max_events.unwrap_or(cost::DEFAULT_MAX_EVENTS)
    }
    fn patch_work(self) -> u64 {
        self.max_patch_work.unwrap_or(schedsim_core::patch::MAX_PATCH_WORK)
    }
}

/// Script policies read from files (`"scheduler": "script"`).
#[derive(clap::Args, Clone, Default)]
struct Scripts {
    /// ID=PATH: policy ID runs the Rhai script in PATH, replacing its source (or its scheduler), or added as a new
    /// policy ID when the scenario has none (repeatable).
    #[arg(long = "script", value_name = "ID=PATH")]
    scripts: Vec<String>,
}

impl Scripts {
    /// Each `(id, source)`, read from its file under the scenario size limit.
    fn read(&self) -> Result<Vec<(String, String)>, String> {
        self.scripts
            .iter()
            .map(|arg| {
                let (id, path) = arg
                    .split_once('=')
                    .filter(|(id, path)| !id.is_empty() && !path.is_empty())
                    .ok_or_else(|| format!("--script {arg}: expected ID=PATH (a policy id and a script file)"))?;
                Ok((id.to_string(), read(Path::new(path))?))
            })
            .collect()
    }
}

/// Reads a scenario file, refusing anything but a regular file and one larger than the scenario limit before
/// reading it: the length is checked on the file's metadata, and at most the limit plus one byte is read (the file
/// may grow in between).
fn read(path: &Path) -> Result<String, String> {
    read_limited(path, MAX_SCENARIO_BYTES)
}

fn read_limited(path: &Path, limit: usize) -> Result<String, String> {
    use std::io::Read;
    let cannot = |e: std::io::Error| format!("{}: cannot read: {e}", path.display());
    let too_big = || format!("{}: larger than the limit of {limit} bytes for a scenario file", path.display());
    // Looked at before opening: opening a FIFO blocks until someone writes to it, and a device may never end.
    let meta = std::fs::metadata(path).map_err(cannot)?;
    if meta.is_dir() {
        return Err(format!("{}: is a directory, not a scenario file", path.display()));
    }
    if !meta.is_file() {
        return Err(format!("{}: not a regular file (a FIFO, socket or device), not a scenario file", path.display()));
    }
    if meta.len() > limit as u64 {
        return Err(too_big());
    }
    let file = std::fs::File::open(path).map_err(cannot)?;
    let mut bytes = Vec::new();
    file.take(limit as u64 + 1).read_to_end(&mut bytes).map_err(cannot)?;
    if bytes.len() > limit {
        return Err(too_big());
    }
    String::from_utf8(bytes).map_err(|e| format!("{}: not UTF-8 text: {e}", path.display()))
}

fn load(path: &Path) -> Result<Scenario, String> {
    load_with(path, &[])
}

/// A scenario file with script policies attached (see [`Scripts`]).
fn load_with(path: &Path, scripts: &[(String, String)]) -> Result<Scenario, String> {
    Scenario::from_json_with_scripts(&read(path)?, scripts).map_err(|e| format!("{}: {e}", path.display()))
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
                // Opening a FIFO blocks until something writes to it, and a device may never end: in a directory,
                // only regular files (through symlinks) are scenarios. Looked at without opening.
                .filter(|f| {
                    let regular = std::fs::metadata(f).is_ok_and(|m| m.is_file());
                    if !regular {
                        eprintln!("schedsim: warning: skipping {}: not a regular file", f.display());
                    }
                    regular
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

/// Writes to stdout; a closed pipe (`schedsim run ... | head`) ends the program quietly instead of panicking.
fn emit(text: &str) {
    let mut out = std::io::stdout().lock();
    if let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        if e.kind() == std::io::ErrorKind::BrokenPipe {
            std::process::exit(0);
        }
        eprintln!("schedsim: cannot write output: {e}");
        std::process::exit(2);
    }
}

fn jobs_or_default(jobs: Option<u64>) -> usize {
    jobs.map_or_else(par::default_jobs, |j| j as usize)
}

fn check_policies(sc: &Scenario, policies: &[String]) -> Result<(), String> {
    for p in policies {
        if sc.policy(p).is_none() {
            let known: Vec<&str> = sc.policies.iter().map(|p| p.id.as_str()).collect();
            return Err(format!("--policy {p}: no such policy in {} (has: {})", sc.id, known.join(", ")));
        }
    }
    Ok(())
}

// Counts what each thread allocates, so that a script policy's copying of large values counts as its work.
#[global_allocator]
static ALLOCATOR: schedsim_core::allocated::Counting = schedsim_core::allocated::Counting;

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
        Cmd::Trace { cmd } => {
            emit(&trace::run(cmd)?);
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Validate { dir, simulate, out, check } => {
            let s: Vec<&str> = simulate.iter().map(String::as_str).collect();
            let (results, facts) = validate::run_dir(&dir, &s)?;
            let page = schedsim_core::recorded::validate::markdown(&results, &facts);
            let (met, failed, nr, now) = schedsim_core::recorded::validate::tally(&results);
            match (out, check) {
                (Some(path), true) => {
                    let old = std::fs::read_to_string(&path).map_err(|e| format!("{}: {e}", path.display()))?;
                    if old != page {
                        return Err(format!(
                            "{} is stale: regenerate it with schedsim validate {} --out {}",
                            path.display(),
                            dir.display(),
                            path.display()
                        ));
                    }
                }
                (Some(path), false) => std::fs::write(&path, &page).map_err(|e| format!("{}: {e}", path.display()))?,
                (None, _) => emit(&page),
            }
            eprintln!("schedsim validate: {met} met, {failed} failed, {nr} not reproduced, {now} now reproduced");
            Ok(if failed > 0 || now > 0 { ExitCode::from(1) } else { ExitCode::SUCCESS })
        }
        Cmd::Run {
            file,
            policies,
            seed,
            seeds,
            keep_seed_runs,
            duration_ms,
            deterministic,
            format,
            jobs,
            variant,
            scripts,
            limit,
        } => {
            let mut sc = load_with(&file, &scripts.read()?)?;
            if let Some(label) = variant {
                sc = sc
                    .pick_variant_within(&label, &mut PatchBudget::new(limit.patch_work()))
                    .map_err(|e| format!("{}: {e}", file.display()))?;
            }
            check_policies(&sc, &policies)?;
            let opts = RunOptions { deterministic, seed, duration_ms, max_events: Some(limit.events()) };
            let estimate = cost::within(&report::with_overrides(&sc, &opts)?, &policies, limit.events())
                .map_err(|e| format!("{}: {e}", file.display()))?;
            let Some(n) = seeds else {
                let rep = run_with_progress(&sc, &policies, &opts, &estimate).map_err(|e| e.to_string())?;
                match format {
                    Format::Json => emit(&format!("{}\n", report::to_json_string(&rep))),
                    Format::Csv => emit(&report::to_csv(&rep)),
                }
                return Ok(ExitCode::SUCCESS);
            };
            let ids: Vec<String> =
                if policies.is_empty() { sc.policies.iter().map(|p| p.id.clone()).collect() } else { policies };
            let seed_ids = batch::seed_list(seed.unwrap_or(sc.seed), n)?;
            let mut batches = Vec::with_capacity(seed_ids.len());
            for &s in &seed_ids {
                let scenario = report::with_overrides(&sc, &RunOptions { seed: Some(s), ..opts.clone() })?;
                batches.push(batch::Batch { scenario, policies: ids.clone(), label: format!("seed {s}") });
            }
            let reports = batch::run(&batches, &opts, jobs_or_default(jobs), "runs")?;
            let per_seed: Vec<(u64, Report)> = seed_ids.into_iter().zip(reports).collect();
            let out = stats::seeds_report(&per_seed, keep_seed_runs);
            match format {
                Format::Json => emit(&format!("{}\n", serde_json::to_string_pretty(&out).expect("report serialises"))),
                Format::Csv => emit(&stats_csv(&out)),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Check { paths, seeds, first_seed, jobs, fidelity, figures, json, scripts, limit } => {
            let ff = fidelity.map(|doc| FidelityFiles { figures, doc });
            let how = CheckOptions { seeds, first_seed, jobs: jobs_or_default(jobs), fidelity: ff.as_ref(), json };
            check_cmd(&paths, &scripts.read()?, &how, limit)
        }
        Cmd::Fidelity { paths, seeds, jobs, figures, out } => {
            let files: Vec<(PathBuf, Scenario)> =
                scenario_files(&paths)?.into_iter().map(|f| load(&f).map(|sc| (f, sc))).collect::<Result<_, _>>()?;
            let outcomes = check::run_all(
                &files,
                seeds,
                jobs_or_default(jobs),
                cost::DEFAULT_MAX_EVENTS,
                schedsim_core::patch::MAX_PATCH_WORK,
            )?;
            // The same runs' claim lines on stderr, so one run both writes the table and says what failed.
            let (text, t) = check::render(&outcomes, true);
            eprintln!("{text}claims: {} passed, {} failed, {} not reproduced", t.passed, t.failed, t.not_reproduced);
            let md =
                check::fidelity_markdown(&outcomes, &FidelityFiles { figures, doc: PathBuf::new() }.figures()?, seeds);
            match out {
                Some(path) => {
                    std::fs::write(&path, md).map_err(|e| format!("{}: cannot write: {e}", path.display()))?
                }
                None => emit(&md),
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Sweep {
            file,
            sets,
            seeds,
            seed,
            duration_ms,
            policies,
            jobs,
            format,
            metrics,
            shard,
            out,
            merge,
            max_runs,
            max_total_events,
            max_grid_work,
            scripts,
            limit,
        } => {
            let table = if let Some(dir) = merge {
                sweep::merge(&dir)?
            } else {
                let file = file.ok_or("sweep: a scenario FILE is required (or --merge DIR)")?;
                let mut text = read(&file)?;
                let scripts = scripts.read()?;
                if !scripts.is_empty() {
                    let mut v = schedsim_core::scenario::parse_strict(&text)
                        .map_err(|e| format!("{}: not valid JSON: {e}", file.display()))?;
                    schedsim_core::attach_scripts(&mut v, &scripts)?;
                    text = v.to_string();
                }
                // The file as written must be valid on its own (size, JSON, schema), so that errors in combinations
                // are the sweep's; the grid is then built on its JSON.
                Scenario::from_json(&text).map_err(|e| format!("{}: {e}", file.display()))?;
                let base: Value =
                    schedsim_core::scenario::parse_strict(&text).map_err(|e| format!("{}: {e}", file.display()))?;
                let axes = sets.iter().map(|s| sweep::parse_axis(s)).collect::<Result<Vec<_>, _>>()?;
                let shard = shard.as_deref().map(sweep::Shard::parse).transpose()?;
                let spec = sweep::Spec {
                    grid: sweep::GridSpec { axes, seeds, seed, duration_ms, policies },
                    metrics,
                    jobs: jobs_or_default(jobs),
                    shard,
                    limits: sweep::Limits {
                        max_events: limit.events(),
                        max_runs: max_runs.unwrap_or(schedsim_core::grid::DEFAULT_MAX_RUNS),
                        max_total_events: max_total_events.unwrap_or(schedsim_core::grid::DEFAULT_MAX_TOTAL_EVENTS),
                        max_grid_work: max_grid_work.unwrap_or(schedsim_core::grid::DEFAULT_MAX_GRID_WORK),
                    },
                };
                let failed = |e: String| format!("sweep {}: {e}", file.display());
                let table = sweep::sweep(&base, &spec).map_err(|e| failed(e.to_string()))?;
                if let (Some(dir), Some(s)) = (out, shard) {
                    let path = sweep::write_shard(&dir, &table, &spec, &text).map_err(failed)?;
                    let n = table.rows.len();
                    eprintln!("schedsim sweep: shard {}/{}: {n} runs -> {}", s.index, s.count, path.display());
                    return Ok(ExitCode::SUCCESS);
                }
                table
            };
            match format {
                Format::Csv => emit(&table.to_csv()),
                Format::Json => {
                    emit(&format!("{}\n", serde_json::to_string_pretty(&table.to_json()).expect("table serialises")))
                }
            }
            Ok(ExitCode::SUCCESS)
        }
        Cmd::Bench { files, json, rounds, scripts, limit } => {
            let scripts = scripts.read()?;
            let mut rows = Vec::new();
            for f in scenario_files(&files)? {
                let sc = load_with(&f, &scripts)?;
                cost::within(&sc, &[], limit.events()).map_err(|e| format!("{}: {e}", f.display()))?;
                rows.push(bench::run(&sc, rounds as usize).map_err(|e| format!("{}: {e}", f.display()))?);
            }
            bench::set_relative(&mut rows);
            if json {
                emit(&format!("{}\n", serde_json::to_string_pretty(&rows).expect("bench rows serialise")));
            } else {
                emit(&bench::text(&rows));
            }
            Ok(ExitCode::SUCCESS)
        }
    }
}

/// Runs the scenario as `report::run_scenario` does, with a progress bar on stderr when the run is estimated to
/// take more than a few seconds and stderr is a terminal (never on stdout, which carries the report).
fn run_with_progress(
    sc: &Scenario,
    policies: &[String],
    opts: &RunOptions,
    estimate: &cost::Cost,
) -> Result<Report, schedsim_core::sim::SimError> {
    use indicatif::{ProgressBar, ProgressStyle};
    use std::io::IsTerminal;
    let ids: Vec<String> =
        if policies.is_empty() { sc.policies.iter().map(|p| p.id.clone()).collect() } else { policies.to_vec() };
    const STEPS: u64 = 1000;
    let bar = if std::io::stderr().is_terminal() && estimate.events > 20_000_000 {
        let bar = ProgressBar::new(STEPS * ids.len() as u64);
        bar.set_style(
            ProgressStyle::with_template("{bar:40.cyan/blue} {percent}% {msg} [{elapsed_precise}, eta {eta}]")
                .expect("progress template is valid")
                .progress_chars("=> "),
        );
        bar
    } else {
        ProgressBar::hidden()
    };
    let rep = report::run_scenario_observed(sc, policies, opts, &mut |i, f| {
        if let Some(id) = ids.get(i) {
            bar.set_message(id.clone());
        }
        bar.set_position(i as u64 * STEPS + (f * STEPS as f64) as u64);
    });
    bar.finish_and_clear();
    rep
}

/// `scenario,policy,metric,mean,ci95,min,max,n`: the `stats` of a multi-seed report as a table.
fn stats_csv(report: &Value) -> String {
    let mut out = String::from("scenario,policy,metric,mean,ci95,min,max,n\n");
    let scenario = report["scenario"].as_str().unwrap_or_default();
    for run in report["runs"].as_array().into_iter().flatten() {
        let policy = run["policy"].as_str().unwrap_or_default();
        for (metric, s) in run["stats"].as_object().into_iter().flatten() {
            let num = |k: &str| s.get(k).map(Value::to_string).unwrap_or_default();
            out.push_str(&format!(
                "{scenario},{policy},{metric},{},{},{},{},{}\n",
                num("mean"),
                num("ci95"),
                num("min"),
                num("max"),
                num("n")
            ));
        }
    }
    out
}

/// `schedsim check`: every file's claims (each file's runs spread over threads with the other files'), with their
/// ablations. Without `--seeds` each claim line is as it always was; with it, it says for how many seeds it held.
/// With `fidelity`, the fidelity table generated from the same runs must equal that file.
fn check_cmd(
    paths: &[PathBuf],
    scripts: &[(String, String)],
    how: &CheckOptions,
    limit: Limit,
) -> Result<ExitCode, String> {
    let &CheckOptions { seeds, first_seed, jobs, fidelity, json } = how;
    if first_seed.is_some() && fidelity.is_some() {
        return Err(
            "--first-seed: the fidelity table is judged on the scenarios' own seeds; leave out --fidelity".into()
        );
    }
    let files: Vec<(PathBuf, Scenario)> = scenario_files(paths)?
        .into_iter()
        .map(|f| {
            load_with(&f, scripts).map(|mut sc| {
                if let Some(s) = first_seed {
                    sc.seed = s;
                }
                (f, sc)
            })
        })
        .collect::<Result<_, _>>()?;
    let outcomes = check::run_all(&files, seeds.unwrap_or(1), jobs, limit.events(), limit.patch_work())?;
    let (mut text, t) = check::render(&outcomes, seeds.is_some());
    if json {
        text = serde_json::to_string_pretty(&check::results(&outcomes)).expect("verdicts serialise") + "\n";
    }
    let mut stale = false;
    if let Some(ff) = fidelity {
        let want = check::fidelity_markdown(&outcomes, &ff.figures()?, seeds.unwrap_or(1));
        let have = std::fs::read_to_string(&ff.doc).unwrap_or_default();
        if have != want {
            stale = true;
            let msg = format!(
                "FAIL {} is not what these runs give: regenerate it with `schedsim fidelity {} --seeds {} --figures {} --out {}`\n",
                ff.doc.display(),
                paths.iter().map(|p| p.display().to_string()).collect::<Vec<_>>().join(" "),
                seeds.unwrap_or(1),
                ff.figures.display(),
                ff.doc.display()
            );
            if json {
                eprint!("{msg}");
            } else {
                text.push_str(&msg);
            }
        }
    }
    if t.not_reproduced > 0 && !json {
        text.push_str(&format!(
            "not reproduced: {} (kept as findings with the paper's value; not failed)\n",
            t.not_reproduced
        ));
    }
    if t.goals > 0 && !json {
        // With --script the goals grade the student's script; without, the scenario's own starting script.
        let on = if scripts.is_empty() {
            "judged on the scenario's starting scripts".to_string()
        } else {
            let ids: Vec<&str> = scripts.iter().map(|(id, _)| id.as_str()).collect();
            format!("judged on your script for {}", ids.join(", "))
        };
        text.push_str(&format!(
            "homework goals: {} of {} met ({on}; a goal not met does not fail the check)\n",
            t.goals_met, t.goals
        ));
    }
    if t.toothless > 0 && !json {
        text.push_str(&format!(
            "could hardly fail: {} (numbers that do not move under the ablation, or a bound over 10x from every \
             value; not failed)\n",
            t.toothless
        ));
    }
    if json {
        // The lines' tally goes to stderr, so stdout stays one JSON document.
        eprintln!("claims: {} passed, {} failed", t.passed, t.failed + usize::from(stale));
    } else {
        text.push_str(&format!("claims: {} passed, {} failed\n", t.passed, t.failed + usize::from(stale)));
    }
    emit(&text);
    Ok(if t.failed == 0 && !stale { ExitCode::SUCCESS } else { ExitCode::FAILURE })
}

/// How `schedsim check` runs and what it prints.
struct CheckOptions<'a> {
    /// `--seeds`: consecutive seeds per scenario and variant (the lines then count seeds).
    seeds: Option<u64>,
    /// `--first-seed`: where every scenario's seeds start instead of its own seed.
    first_seed: Option<u64>,
    jobs: usize,
    fidelity: Option<&'a FidelityFiles>,
    /// `--json`: the verdicts as one JSON array instead of the lines.
    json: bool,
}

/// The fidelity table's files: the list of the papers' figures and the generated Markdown.
struct FidelityFiles {
    figures: PathBuf,
    doc: PathBuf,
}

impl FidelityFiles {
    fn figures(&self) -> Result<Value, String> {
        serde_json::from_str(&read(&self.figures)?)
            .map_err(|e| format!("{}: not valid JSON: {e}", self.figures.display()))
    }
}
