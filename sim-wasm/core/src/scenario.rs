//! The scenario file: typed structs, validation against `scenarios/schema.json`, and the
//! cross-field checks a schema cannot express. Every error names the field path (`domains[1].weight: ...`).

use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::workload::CheckCx;

mod check;
mod claim;
mod json;
mod variants;

pub use claim::*;
pub use json::*;

pub use crate::model::{Priority, RtTag};
pub use crate::workload::{
    barrier::{BarrierSpec, SyncMode},
    disk_reader::{DiskOp, DiskReaderSpec},
    interactive::InteractiveSpec,
    io_loop::{IoKind, IoLoopSpec},
    net_bulk::{Direction, NetBulkSpec},
    pipe::PipeSpec,
    server::{Proto, ServerDiskSpec, ServerSpec},
    stream::StreamSpec,
    tier::TierSpec,
    Workload,
};

/// The JSON Schema, the one source of truth for Rust and TypeScript validation.
pub const SCHEMA_JSON: &str = include_str!("../../../scenarios/schema.json");

pub use crate::limits::{MAX_PCPUS, MAX_SCENARIO_BYTES, MAX_TOTAL_VCPUS};

/// Shortest piece of guest work a workload may ask for [us]: below it the model says nothing (a switch costs
/// more) and the events would only flood the queue.
pub const MIN_WORK_US: f64 = 1.0;
/// Largest seed: seeds travel as JSON numbers, exact only up to 2^53 - 1 (the schema's maximum).
pub const MAX_SEED: u64 = (1 << 53) - 1;
/// Most tasks over all domains.
pub const MAX_TOTAL_TASKS: usize = 65_536;
/// Most external clients over all servers.
pub const MAX_TOTAL_CLIENTS: u64 = 100_000;

/// Scheduler-specific checks the file format hands each policy and change to: the scheduler table
/// (`policy::registry`) implements them, so this module knows no scheduler. `Scenario::from_json` (in `load.rs`, a
/// layer above both) parses with the table's rules.
pub trait SchedulerRules {
    /// Problems of policy `i` against the rest of the scenario (unknown scheduler, parameters naming no domain,
    /// co-scheduling needs), each with its field path.
    fn check_policy(&self, sc: &Scenario, i: usize, problems: &mut Vec<String>);
    /// Problems of change `i`, whose policy exists: is its parameter one the scheduler can change at run time.
    fn check_change(&self, sc: &Scenario, i: usize, problems: &mut Vec<String>);
}

/// A validation error: every problem found, each with its field path.
#[derive(Debug, Clone, PartialEq)]
pub struct ScenarioError {
    pub problems: Vec<String>,
}

impl ScenarioError {
    fn one(msg: impl Into<String>) -> ScenarioError {
        ScenarioError { problems: vec![msg.into()] }
    }
}

impl fmt::Display for ScenarioError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.problems.as_slice() {
            [one] => write!(f, "invalid scenario: {one}"),
            many => {
                write!(f, "invalid scenario ({} problems): ", many.len())?;
                write!(f, "{}", many.join("; "))
            }
        }
    }
}

impl std::error::Error for ScenarioError {}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Scenario {
    pub schema: u32,
    pub id: String,
    pub title: String,
    #[serde(default)]
    pub summary: String,
    #[serde(default)]
    pub source: String,
    /// Seed of every random stream.
    pub seed: u64,
    /// Simulated time [ms].
    pub duration_ms: u64,
    /// Metrics ignore the first `warmup_ms` [ms].
    #[serde(default)]
    pub warmup_ms: u64,
    pub host: Host,
    pub domains: Vec<Domain>,
    pub policies: Vec<PolicySpec>,
    #[serde(default)]
    pub changes: Vec<Change>,
    #[serde(default)]
    pub claims: Vec<Claim>,
    /// Moderate changes of the setting under which the claims must hold too (`schedsim check`), so that an effect
    /// is shown to come from the mechanism rather than from one tuned setting.
    #[serde(default)]
    pub variants: Vec<Variant>,
    /// What the page puts first (`{policies, metrics}`); the simulator ignores it. Scenarios without one get it
    /// derived from their claims by the page.
    #[serde(default)]
    pub focus: Option<Value>,
    /// Set when the scenario departs from the host cost profile (`domains[].costs`): what it varies and why. Such
    /// a scenario is a sensitivity study, not a reproduction.
    #[serde(default)]
    pub sensitivity: Option<String>,
    /// The validated document this scenario was read from (a variant's: with its patch applied), so that a
    /// variant or a claim's ablation can patch exactly what was run. Shared: clones of a scenario (one per seed)
    /// do not copy it.
    #[serde(skip)]
    pub doc: Arc<Value>,
    /// Compact JSON length of `doc` [bytes]: what one walk of it costs in patch work ([`crate::patch::work`]).
    #[serde(skip)]
    pub doc_bytes: usize,
}

/// A named change of the setting (e.g. one CPU-bound domain fewer) under which the scenario's claims must hold.
#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Variant {
    pub label: String,
    /// JSON Patch operations on the scenario file, applied when the variant is built
    /// ([`Scenario::variant_with`]). Read where it is, in the document ([`Scenario::variant_patch`]): a copy here
    /// would double what a big patch value takes.
    #[serde(rename = "patch")]
    pub _patch: serde::de::IgnoredAny,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Host {
    /// Physical CPUs.
    pub pcpus: u32,
    #[serde(default)]
    pub net: Net,
    #[serde(default)]
    pub disk: Disk,
    /// How the pCPUs' timers fire: as Xen's do (default) or all in lockstep (an ablation).
    #[serde(default)]
    pub timing: Timing,
    /// Hardware threads per core (SMT); 1 = no SMT. pCPU i is thread `i % threads_per_core` of core
    /// `i / threads_per_core`.
    #[serde(default = "one")]
    pub threads_per_core: u32,
    /// Cores per socket; absent = all cores in one socket. Only `sched_gran: "socket"` uses it.
    #[serde(default)]
    pub cores_per_socket: Option<u32>,
}

/// The host's timer behaviour (see `sim::timing`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Timing {
    /// Every hypervisor timer fires somewhere in Xen's timer-slop window after its deadline (seeded per pCPU), and
    /// periodic tickers re-arm from their own firing, so pCPUs drift out of phase.
    #[default]
    Xen,
    /// Every timer fires exactly at its deadline: a symmetric host's pCPUs tick and end slices at the same instants.
    Lockstep,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Net {
    /// One-way wire latency [us].
    pub latency_us: f64,
    /// Link bandwidth, each direction [Mbit/s].
    pub mbps: f64,
    /// Mean extra queueing delay per packet on the way (cross traffic at the switch), exponential, seeded; packets
    /// stay in order [us]. 0 = none.
    pub jitter_us: f64,
}

impl Default for Net {
    fn default() -> Net {
        Net { latency_us: 100.0, mbps: 100.0, jitter_us: 0.0 }
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Disk {
    /// Mean positioning time per request [us].
    pub service_us: f64,
    /// Transfer rate [MB/s].
    pub mb_per_s: f64,
}

impl Default for Disk {
    fn default() -> Disk {
        Disk { service_us: 150.0, mb_per_s: 100.0 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    #[default]
    Guest,
    Driver,
}

/// A driver domain's backend threads (`backends`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Backends {
    /// One backend thread serving every domain, on the driver domain's first vCPU.
    #[default]
    One,
    /// One backend thread per domain served, the k-th (in scenario order) on vCPU k mod `vcpus`.
    PerDomain,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum DomainType {
    #[default]
    Throughput,
    Concurrent,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Domain {
    pub name: String,
    #[serde(default)]
    pub role: Role,
    #[serde(default = "one")]
    pub vcpus: u32,
    #[serde(default = "default_weight")]
    pub weight: u32,
    /// Cap in percent of one pCPU; 0 = uncapped.
    #[serde(default)]
    pub cap_pct: u32,
    #[serde(default, rename = "type")]
    pub kind: DomainType,
    /// Driver domain carrying this domain's I/O (the first driver domain when absent).
    #[serde(default)]
    pub driver: Option<String>,
    /// Backend costs overriding the host cost profile; only in a labelled sensitivity study (`sensitivity`).
    #[serde(default)]
    pub costs: Option<Costs>,
    /// Priority of a driver domain's backend thread: "rt" (softirq/tasklet, Linux 2.6.18 netback) or a nice
    /// value (a kthread, newer kernels). Default "rt".
    #[serde(default)]
    pub backend_priority: Option<Priority>,
    /// How a driver domain's backend is threaded: one thread for every domain it serves (Linux 2.6.18's netback
    /// tasklet, the default), or one per served domain (newer netback's kthread per interface, KVM's vhost worker
    /// per VM), each on the driver domain's vCPUs in turn.
    #[serde(default)]
    pub backends: Backends,
    #[serde(default)]
    pub guest: GuestSpec,
    #[serde(default)]
    pub tasks: Vec<TaskSpec>,
}

fn one() -> u32 {
    1
}
fn default_weight() -> u32 {
    256
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Costs {
    /// Driver-domain CPU per network packet [us].
    pub packet_us: f64,
    /// Driver-domain CPU per block request [us].
    pub block_us: f64,
}

impl Default for Costs {
    fn default() -> Costs {
        let p = crate::costs::PROFILE;
        Costs { packet_us: p.net_backend_pkt_ns as f64 / 1000.0, block_us: p.blk_backend_req_ns as f64 / 1000.0 }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum GuestScheduler {
    #[default]
    Linux,
    Cfs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum GuestClock {
    #[default]
    Wall,
    Steal,
    TwoClocks,
}

#[derive(Debug, Clone, Deserialize, Default)]
#[serde(deny_unknown_fields, default)]
pub struct GuestSpec {
    pub scheduler: GuestScheduler,
    pub clock: GuestClock,
    pub balloon: bool,
    /// Block-layer plugging: a task's block requests reach the driver domain only when the guest unplugs its
    /// queue, this long after the first one was queued or once four are queued (Linux 2.6: 3 ms, 4) [us];
    /// 0 = at once. The task running at that moment is the one the hypervisor sees issue them (000 3.5.1).
    pub block_unplug_us: f64,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TaskSpec {
    pub name: String,
    #[serde(default)]
    pub vcpu: Option<u32>,
    #[serde(default)]
    pub priority: Option<Priority>,
    pub workload: Workload,
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PolicySpec {
    pub id: String,
    #[serde(default)]
    pub label: Option<String>,
    pub scheduler: String,
    #[serde(default)]
    pub params: Value,
}

impl PolicySpec {
    pub fn label(&self) -> &str {
        self.label.as_deref().unwrap_or(&self.id)
    }
}

#[derive(Debug, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Change {
    pub at_ms: u64,
    pub policy: String,
    pub param: String,
    pub value: Value,
}

/// A schema error's text, the rule first: a value over a size limit is named by its size, not quoted (the quote of
/// a long string or array is cut before the reason would show).
fn schema_message(e: &jsonschema::ValidationError<'_>) -> String {
    use jsonschema::error::ValidationErrorKind as K;
    let inst = e.instance();
    match e.kind() {
        K::MaxLength { limit } => format!(
            "at most {limit} characters, and this string has {}",
            inst.as_str().map_or(0, |t| t.chars().count())
        ),
        K::MaxItems { limit } => {
            format!("at most {limit} items, and this array has {}", inst.as_array().map_or(0, Vec::len))
        }
        K::MaxProperties { limit } => {
            format!("at most {limit} keys, and this object has {}", inst.as_object().map_or(0, |o| o.len()))
        }
        _ => e.to_string(),
    }
}

impl Scenario {
    /// Parses and validates a scenario file, each policy by `rules`.
    pub fn parse_json(text: &str, rules: &dyn SchedulerRules) -> Result<Scenario, ScenarioError> {
        if text.len() > MAX_SCENARIO_BYTES {
            return Err(ScenarioError::one(format!(
                "(scenario): file is {} bytes, more than the limit of {} bytes",
                text.len(),
                MAX_SCENARIO_BYTES
            )));
        }
        let value = parse_strict(text).map_err(|e| ScenarioError::one(format!("(scenario): not valid JSON: {e}")))?;
        Scenario::parse_value(value, rules)
    }

    /// Validates an already-parsed JSON value, each policy by `rules`.
    pub fn parse_value(value: Value, rules: &dyn SchedulerRules) -> Result<Scenario, ScenarioError> {
        let mut problems: Vec<String> = validator()
            .iter_errors(&value)
            .map(|e| clip(format!("{}: {}", pointer_to_path(e.instance_path().as_str()), schema_message(&e))))
            .collect();
        if !problems.is_empty() {
            problems.sort();
            problems.dedup();
            problems.truncate(20);
            return Err(ScenarioError { problems });
        }
        // Deserialised from a reference: the document is kept (`doc`), not copied.
        let mut sc = Scenario::deserialize(&value)
            .map_err(|e| ScenarioError::one(integral_float_at(&value).unwrap_or_else(|| format!("(scenario): {e}"))))?;
        sc.check(rules)?;
        sc.doc_bytes = crate::patch::json_len(&value, usize::MAX).unwrap_or(usize::MAX);
        sc.doc = Arc::new(value);
        Ok(sc)
    }

    /// The task named by "DOMAIN/TASK", with its domain index.
    pub fn find_task(&self, path: &str) -> Option<(usize, &TaskSpec)> {
        let (dom, task) = path.split_once('/')?;
        let d = self.domains.iter().position(|d| d.name == dom)?;
        self.domains[d].tasks.iter().find(|t| t.name == task).map(|t| (d, t))
    }

    /// The policy spec with this id.
    pub fn policy(&self, id: &str) -> Option<&PolicySpec> {
        self.policies.iter().find(|p| p.id == id)
    }
}

#[cfg(test)]
mod tests;
