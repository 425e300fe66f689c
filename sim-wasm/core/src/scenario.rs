//! The scenario file: typed structs, validation against `scenarios/schema.json`, and the
//! cross-field checks a schema cannot express. Every error names the field path (`domains[1].weight: ...`).

use serde::Deserialize;
use serde_json::Value;
use std::fmt;
use std::sync::{Arc, OnceLock};

use crate::sim::workload::CheckCx;

pub use crate::model::{Priority, RtTag};
pub use crate::sim::workload::{
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

#[derive(Debug, Clone, Deserialize, serde::Serialize)]
#[serde(deny_unknown_fields)]
pub struct Claim {
    pub text: String,
    pub metric: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lower: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub higher: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub than: Option<String>,
    /// Compare against this metric of the `than` run instead of the same one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub than_metric: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_factor: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub by_at_least: Option<f64>,
    /// An upper bound on the factor between the two sides: a number, or a metric of a run times a scale (001
    /// Corollary 1: CPS's speed-up over PS is at most 2|Lag|).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub factor_at_most: Option<FactorBound>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub policy: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub near: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within: Option<f64>,
    /// Tolerance of `near` relative to the target [%].
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub within_pct: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_most: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub at_least: Option<f64>,
    /// The counterfactual of an effect claim: the scenario with the credited mechanism switched off. `check`
    /// passes the claim only if it holds on the scenario and fails on this ablation, for every seed and variant.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub without: Option<Ablation>,
    /// `not_reproduced`: the paper's result does not come out of the model (see `reason`); reported, not failed.
    /// `goal`: a homework's goal for a policy the student writes (the file's starting script need not meet it);
    /// judged and reported like any claim, not failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<ClaimStatus>,
    /// What the paper reports for this statement (value and figure), for the fidelity table.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub paper: Option<String>,
    /// Why a `not_reproduced` claim does not hold in the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A claim's ablation: a label for people and a JSON Patch (RFC 6902) on the scenario that switches the
/// mechanism off (a policy parameter, a domain's type, a feature flag).
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(deny_unknown_fields)]
pub struct Ablation {
    pub label: String,
    pub patch: Value,
}

#[derive(Debug, Clone, Copy, Deserialize, serde::Serialize, PartialEq, Eq)]
#[cfg_attr(test, derive(ts_rs::TS))]
#[serde(rename_all = "snake_case")]
pub enum ClaimStatus {
    /// The paper's result is not reproduced by the model; the claim stays as a finding, with `paper` and
    /// `reason`.
    NotReproduced,
    /// A homework's goal: what the student's policy should achieve. The scenario ships a starting script that
    /// need not meet it, so `check` reports it and does not fail it.
    Goal,
}

/// The most a `higher`/`lower` claim's factor may be.
#[derive(Debug, Clone, Deserialize, serde::Serialize, PartialEq)]
#[serde(untagged)]
pub enum FactorBound {
    Number(f64),
    /// `scale` times the value of `metric` (which must match one number) in the run of `policy`, taken as at
    /// least `min` (001 Lemma 1: an ideal PS deviates by one slot, so 2|Lag| never bounds below 2).
    Metric {
        policy: String,
        metric: String,
        #[serde(default = "unit_scale")]
        scale: f64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        min: Option<f64>,
    },
}

fn unit_scale() -> f64 {
    1.0
}

impl Claim {
    /// The policy whose run this claim is about (reported in that run's `claims`).
    pub fn subject(&self) -> Option<&str> {
        self.lower.as_deref().or(self.higher.as_deref()).or(self.policy.as_deref())
    }

    /// Whether the claim is kept as a finding the model does not reproduce.
    pub fn not_reproduced(&self) -> bool {
        self.status == Some(ClaimStatus::NotReproduced)
    }

    /// Whether the claim is a homework's goal (judged, reported, never failed by `check`).
    pub fn goal(&self) -> bool {
        self.status == Some(ClaimStatus::Goal)
    }

    /// What is wrong with a `not_reproduced` claim's reason, if anything: a reason states the mechanism and the
    /// model's cause, so that it stays true as work lands. It may not name a work item ("issue"), a branch ("on
    /// main"), or say the cause is unknown ("not investigated"); it must exist.
    pub fn reason_defect(&self) -> Option<&'static str> {
        if !self.not_reproduced() {
            return None;
        }
        let Some(reason) = self.reason.as_deref().filter(|r| !r.trim().is_empty()) else {
            return Some("it gives no reason");
        };
        let r = reason.to_lowercase();
        // Whole words only: "issues" (the verb) and "domain" are fine.
        let word = |w: &str| {
            r.match_indices(w).any(|(i, _)| {
                let before = r[..i].chars().next_back().is_none_or(|c| !c.is_alphanumeric());
                let after = r[i + w.len()..].chars().next().is_none_or(|c| !c.is_alphanumeric());
                before && after
            })
        };
        if word("issue") {
            Some("its reason names a work item (\"issue\")")
        } else if word("on main") || word("main branch") || word("held on main") {
            Some("its reason names a branch (\"main\")")
        } else if r.contains("not investigated") || r.contains("uninvestigated") {
            Some("its reason says the cause was not investigated")
        } else {
            None
        }
    }

    /// Every policy whose run the claim reads.
    pub fn policies(&self) -> Vec<&str> {
        let bound = match &self.factor_at_most {
            Some(FactorBound::Metric { policy, .. }) => Some(policy.as_str()),
            _ => None,
        };
        let mut out: Vec<&str> = [self.lower.as_deref(), self.higher.as_deref(), self.than.as_deref()]
            .into_iter()
            .chain([self.policy.as_deref(), bound])
            .flatten()
            .collect();
        out.dedup();
        out
    }
}

/// Builds the schema validator now rather than at the first validation. Building it checks the schema against
/// JSON Schema's own meta-schema and compiles both: the largest part of a cold first validation in WebAssembly
/// (about 0.3 s before the engine has tiered its code up), which a page's worker can pay while the scenario is
/// still loading.
pub fn prepare_validator() {
    validator();
}

/// Where the validator finds `scenarios/schema.json` (its own `$id`).
const SCHEMA_ID: &str = "https://schedlab.invalid/scenario.schema.json";

fn validator() -> &'static jsonschema::Validator {
    static V: OnceLock<jsonschema::Validator> = OnceLock::new();
    V.get_or_init(|| {
        let schema: Value = serde_json::from_str(SCHEMA_JSON).expect("scenarios/schema.json is valid JSON");
        // Building a validator checks its root document against that document's meta-schema, and jsonschema has
        // no public switch to skip it: for the 2020-12 meta-schema that was most of a cold worker's first
        // validation. Our schema is fixed and checked once by a test (`the_schema_is_a_valid_2020_12_schema`), so
        // the root is a one-line draft-4 document (whose small meta-schema costs little) that refers to it; the
        // schema itself is compiled as the 2020-12 resource it declares, so it validates and words every error
        // as before.
        let root = serde_json::json!({ "$schema": "http://json-schema.org/draft-04/schema#", "$ref": SCHEMA_ID });
        let registry = jsonschema::Registry::new()
            .add(SCHEMA_ID, jsonschema::Resource::from_contents(schema))
            .and_then(|r| r.prepare())
            .expect("scenarios/schema.json is a resource");
        jsonschema::options()
            .with_registry(&registry)
            // As 2020-12 has it (a draft-4 root would otherwise make `format` an assertion).
            .should_validate_formats(false)
            .build(&root)
            .expect("scenarios/schema.json is a valid JSON Schema")
    })
}

/// `/domains/1/weight` -> `domains[1].weight`; the root is `(scenario)`.
pub fn pointer_to_path(pointer: &str) -> String {
    let mut out = String::new();
    for part in pointer.split('/').skip(1) {
        let part = part.replace("~1", "/").replace("~0", "~");
        if !part.is_empty() && part.bytes().all(|b| b.is_ascii_digit()) {
            out.push_str(&format!("[{part}]"));
        } else {
            if !out.is_empty() {
                out.push('.');
            }
            out.push_str(&part);
        }
    }
    if out.is_empty() {
        "(scenario)".into()
    } else {
        out
    }
}

/// Parses JSON text as `serde_json` does but refuses an object with the same key twice (which `serde_json` would
/// silently resolve to the last value, so an edit could be lost without a word). Errors carry line and column. A
/// leading UTF-8 byte order mark (as some Windows editors save) is skipped.
pub fn parse_strict(text: &str) -> Result<Value, serde_json::Error> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    use serde::de::{self, Deserializer, MapAccess, SeqAccess, Visitor};
    struct Strict(Value);
    struct V;
    impl<'de> Deserialize<'de> for Strict {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Strict, D::Error> {
            d.deserialize_any(V).map(Strict)
        }
    }
    impl<'de> Visitor<'de> for V {
        type Value = Value;
        fn expecting(&self, f: &mut fmt::Formatter) -> fmt::Result {
            f.write_str("a JSON value")
        }
        fn visit_bool<E>(self, b: bool) -> Result<Value, E> {
            Ok(Value::Bool(b))
        }
        fn visit_i64<E>(self, n: i64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_u64<E>(self, n: u64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_f64<E>(self, n: f64) -> Result<Value, E> {
            Ok(Value::from(n))
        }
        fn visit_str<E>(self, s: &str) -> Result<Value, E> {
            Ok(Value::String(s.to_owned()))
        }
        fn visit_string<E>(self, s: String) -> Result<Value, E> {
            Ok(Value::String(s))
        }
        fn visit_unit<E>(self) -> Result<Value, E> {
            Ok(Value::Null)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
            let mut out = Vec::new();
            while let Some(Strict(v)) = seq.next_element()? {
                out.push(v);
            }
            Ok(Value::Array(out))
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
            let mut out = serde_json::Map::new();
            while let Some(k) = map.next_key::<String>()? {
                if out.contains_key(&k) {
                    return Err(de::Error::custom(format!("duplicate key '{}'", clip(k))));
                }
                let Strict(v) = map.next_value()?;
                out.insert(k, v);
            }
            Ok(Value::Object(out))
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let Strict(v) = Strict::deserialize(&mut de)?;
    de.end()?;
    Ok(v)
}

/// When typed parsing fails after the schema passed, the usual cause is a whole number written as a float
/// (`"pcpus": 2.0`), which JSON Schema counts as an integer but the typed fields do not: name the field. Each
/// candidate is tried alone (written as an integer) and reported if that changes the outcome.
fn integral_float_at(value: &Value) -> Option<String> {
    fn floats(v: &Value, at: String, out: &mut Vec<String>) {
        match v {
            Value::Number(n) if n.is_f64() && n.as_f64().is_some_and(|x| x.fract() == 0.0 && x.abs() < 9.0e15) => {
                out.push(at)
            }
            Value::Array(a) => a.iter().enumerate().for_each(|(i, x)| floats(x, format!("{at}/{i}"), out)),
            Value::Object(o) => {
                o.iter().for_each(|(k, x)| floats(x, format!("{at}/{}", k.replace('~', "~0").replace('/', "~1")), out))
            }
            _ => {}
        }
    }
    let mut found = Vec::new();
    floats(value, String::new(), &mut found);
    let before = serde_json::from_value::<Scenario>(value.clone()).err()?.to_string();
    for at in found.into_iter().take(20) {
        let mut v = value.clone();
        let slot = v.pointer_mut(&at)?;
        let x = slot.as_f64()?;
        *slot = Value::from(x as i64);
        let after = serde_json::from_value::<Scenario>(v).err().map(|e| e.to_string());
        if after.as_deref() != Some(before.as_str()) {
            return Some(format!(
                "{}: {x:?} must be a whole number written without a fraction ({})",
                pointer_to_path(&at),
                x as i64
            ));
        }
    }
    None
}

/// Shortens a value quoted in an error so a hostile or huge input cannot flood the message.
fn clip(s: String) -> String {
    const MAX: usize = 160;
    if s.chars().count() <= MAX {
        s
    } else {
        let mut t: String = s.chars().take(MAX).collect();
        t.push('…');
        t
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
            .map(|e| clip(format!("{}: {}", pointer_to_path(e.instance_path().as_str()), e)))
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

    /// Variant `i`'s patch, as the document has it (`Null` past the last variant).
    pub fn variant_patch(&self, i: usize) -> &Value {
        &self.doc["variants"][i]["patch"]
    }

    /// The scenario's document without `key`, copied for a patch (the copy skips what the patch may not see).
    fn doc_without(&self, key: &str) -> Value {
        match &*self.doc {
            Value::Object(m) => {
                Value::Object(m.iter().filter(|(k, _)| *k != key).map(|(k, v)| (k.clone(), v.clone())).collect())
            }
            v => v.clone(),
        }
    }

    /// Variant `i` (see `variants`): its patch applied to a copy of this scenario's document, paid for from
    /// `budget` before it is applied, and validated. Only the variant asked for is built, so a variant's error
    /// surfaces when it is picked (`run --variant`) or checked (`check` builds each in turn), naming it.
    pub fn variant_with(
        &self,
        i: usize,
        rules: &dyn SchedulerRules,
        budget: &mut crate::patch::PatchBudget,
    ) -> Result<Scenario, ScenarioError> {
        let v = self.variants.get(i).ok_or_else(|| ScenarioError::one(format!("variants[{i}]: no such variant")))?;
        let at = |e: String| ScenarioError::one(format!("variants[{i}] ('{}'): {e}", v.label));
        let patch = self.variant_patch(i);
        budget.charge(patch, self.doc_bytes).map_err(at)?;
        let mut doc = self.doc_without("variants");
        crate::patch::apply_bounded(&mut doc, patch).map_err(at)?;
        if doc.get("variants").is_some() {
            return Err(at("a variant cannot add variants of its own".into()));
        }
        Scenario::parse_value(doc, rules).map_err(|e| at(e.to_string()))
    }

    /// The scenario with claim `k`'s ablation applied (`None` when the claim has none), paid for from `budget`
    /// before it is applied. The result keeps the claims (so they can be judged on it) but neither variants nor
    /// ablations of its own.
    pub fn ablated_with(
        &self,
        k: usize,
        rules: &dyn SchedulerRules,
        budget: &mut crate::patch::PatchBudget,
    ) -> Option<Result<Scenario, ScenarioError>> {
        let ab = self.claims.get(k)?.without.as_ref()?;
        let at = |e: String| ScenarioError::one(format!("claims[{k}].without ('{}'): {e}", ab.label));
        Some((|| {
            budget.charge(&ab.patch, self.doc_bytes).map_err(at)?;
            let mut doc = self.doc_without("variants");
            crate::patch::apply_bounded(&mut doc, &ab.patch).map_err(at)?;
            if let Some(obj) = doc.as_object_mut() {
                obj.remove("variants");
                // The same seed as what was run (a `--seed` override lives in `self`, not in the document).
                obj.insert("seed".into(), Value::from(self.seed));
                obj.insert("duration_ms".into(), Value::from(self.duration_ms));
            }
            for c in doc.get_mut("claims").and_then(Value::as_array_mut).into_iter().flatten() {
                if let Some(obj) = c.as_object_mut() {
                    obj.remove("without");
                }
            }
            Scenario::parse_value(doc, rules).map_err(|e| at(e.to_string()))
        })())
    }

    /// The first claim of each distinct ablation (the same label and patch): claims sharing one share its runs.
    pub fn distinct_ablations(&self) -> Vec<usize> {
        let mut seen = std::collections::HashSet::new();
        (0..self.claims.len())
            .filter(|&k| {
                self.claims[k]
                    .without
                    .as_ref()
                    .is_some_and(|ab| seen.insert(serde_json::to_string(ab).unwrap_or_default()))
            })
            .collect()
    }

    /// An estimate of the patch work of checking this scenario [bytes] ([`crate::patch::work`]): each variant
    /// built, and each distinct ablation built on the scenario and on every variant (a variant's document taken
    /// at the most its patch can grow it to, its claims as the scenario's). [`crate::patch::PatchBudget`] still
    /// charges what is really built, so a variant that adds ablations cannot pass the limit either.
    pub fn check_work(&self) -> u64 {
        let ablations = self.distinct_ablations();
        let ablation_work = |bytes: usize| -> u64 {
            ablations
                .iter()
                .filter_map(|&k| self.claims[k].without.as_ref())
                .map(|ab| crate::patch::work(&ab.patch, bytes))
                .fold(0u64, u64::saturating_add)
        };
        (0..self.variants.len()).fold(ablation_work(self.doc_bytes), |total, i| {
            let patch = self.variant_patch(i);
            let grown = crate::patch::grown_bound(patch, self.doc_bytes);
            total.saturating_add(crate::patch::work(patch, self.doc_bytes)).saturating_add(ablation_work(grown))
        })
    }

    /// Cross-field checks that JSON Schema cannot express.
    fn check(&self, rules: &dyn SchedulerRules) -> Result<(), ScenarioError> {
        let mut p = Vec::new();
        if self.warmup_ms >= self.duration_ms {
            p.push(format!("warmup_ms: {} must be less than duration_ms ({})", self.warmup_ms, self.duration_ms));
        }
        let total_vcpus: u32 = self.domains.iter().map(|d| d.vcpus).sum();
        if total_vcpus > MAX_TOTAL_VCPUS {
            p.push(format!("domains: {total_vcpus} vCPUs in all, more than the limit of {MAX_TOTAL_VCPUS}"));
        }
        let total_tasks: usize =
            self.domains.iter().flat_map(|d| d.tasks.iter().map(|t| t.workload.kind().threads())).sum();
        if total_tasks > MAX_TOTAL_TASKS {
            p.push(format!("domains: {total_tasks} tasks in all, more than the limit of {MAX_TOTAL_TASKS}"));
        }
        let mut clients = 0u64;
        let find = |path: &str| self.find_task(path).map(|(_, t)| &t.workload);
        let drivers: Vec<&str> =
            self.domains.iter().filter(|d| d.role == Role::Driver).map(|d| d.name.as_str()).collect();
        for (i, d) in self.domains.iter().enumerate() {
            if self.domains[..i].iter().any(|o| o.name == d.name) {
                p.push(format!("domains[{i}].name: '{}' is used by another domain", d.name));
            }
            if d.costs.is_some() && self.sensitivity.is_none() {
                p.push(format!(
                    "domains[{i}].costs: costs come from the host cost profile; overriding them makes the scenario a \
                     sensitivity study, which must say so in a top-level \"sensitivity\""
                ));
            }
            if let Some(drv) = &d.driver {
                if !drivers.contains(&drv.as_str()) {
                    p.push(format!("domains[{i}].driver: '{drv}' is not a domain with role \"driver\""));
                }
            }
            for (j, t) in d.tasks.iter().enumerate() {
                let at = format!("domains[{i}].tasks[{j}]");
                if d.tasks[..j].iter().any(|o| o.name == t.name) {
                    p.push(format!("{at}.name: '{}' is used by another task of '{}'", t.name, d.name));
                }
                if d.guest.balloon && (t.name == "balloon" || t.name.starts_with("balloon.")) {
                    p.push(format!("{at}.name: '{}' is the name of the guest's CPU balloon (guest.balloon)", t.name));
                }
                if let Some(v) = t.vcpu {
                    if v >= d.vcpus {
                        p.push(format!("{at}.vcpu: {v} but '{}' has {} vCPU(s)", d.name, d.vcpus));
                    }
                }
                let kind = t.workload.kind();
                let needs_driver = kind.needs_driver();
                // A driver domain owns the disk, so its own block I/O goes to the disk directly; its network
                // workloads would need a bridge to itself, which the model does not have.
                if needs_driver && d.role == Role::Driver && !kind.own_disk() {
                    p.push(format!(
                        "{at}.workload: a driver domain's own tasks can do disk I/O (disk_reader, io_loop with io \"disk\") but no network I/O"
                    ));
                } else if needs_driver && drivers.is_empty() {
                    p.push(format!(
                        "{at}.workload: this workload does I/O and needs a driver domain (a domain with \"role\": \"driver\")"
                    ));
                }
                clients += kind.clients();
                let path = format!("{}/{}", d.name, t.name);
                kind.validate(&CheckCx { at: &at, path: &path, pinned: t.vcpu.is_some(), find: &find }, &mut p);
                // Work shorter than a microsecond is below what a switch costs, so the model says nothing about it
                // and it would only flood the event queue; 0 means none.
                if let Some(us) = kind.cpu_us().filter(|&us| us > 0.0 && us < MIN_WORK_US) {
                    p.push(format!(
                        "{at}.workload.cpu_us: {us} is below the floor of {MIN_WORK_US} us (0 for none, or at least {MIN_WORK_US})"
                    ));
                }
                if let Some(port) = kind.port() {
                    if d.tasks[..j].iter().any(|o| o.workload.kind().port() == Some(port)) {
                        p.push(format!("{at}.workload.port: {port} is already served in '{}'", d.name));
                    }
                }
            }
        }
        // Links between tasks, once every task's own spec is checked.
        for (i, d) in self.domains.iter().enumerate() {
            for (j, t) in d.tasks.iter().enumerate() {
                let (at, path) = (format!("domains[{i}].tasks[{j}]"), format!("{}/{}", d.name, t.name));
                let cx = CheckCx { at: &at, path: &path, pinned: t.vcpu.is_some(), find: &find };
                t.workload.kind().validate_links(&cx, &mut p);
            }
        }
        if clients > MAX_TOTAL_CLIENTS {
            p.push(format!("domains: {clients} clients in all, more than the limit of {MAX_TOTAL_CLIENTS}"));
        }
        for (i, pol) in self.policies.iter().enumerate() {
            if self.policies[..i].iter().any(|o| o.id == pol.id) {
                p.push(format!("policies[{i}].id: '{}' is used by another policy", pol.id));
            }
            rules.check_policy(self, i, &mut p);
        }
        let policy_ids: Vec<&str> = self.policies.iter().map(|p| p.id.as_str()).collect();
        for (i, c) in self.changes.iter().enumerate() {
            match self.policies.iter().find(|p| p.id == c.policy) {
                None => p.push(format!("changes[{i}].policy: no policy with id '{}'", c.policy)),
                Some(_) => rules.check_change(self, i, &mut p),
            }
            if c.at_ms >= self.duration_ms {
                p.push(format!("changes[{i}].at_ms: {} is not before duration_ms ({})", c.at_ms, self.duration_ms));
            }
        }
        for (i, v) in self.variants.iter().enumerate() {
            if self.variants[..i].iter().any(|o| o.label == v.label) {
                p.push(format!("variants[{i}].label: '{}' is used by another variant", v.label));
            }
        }
        for (i, c) in self.claims.iter().enumerate() {
            if let Some(problem) = self.metric_names_missing(&c.metric) {
                p.push(format!("claims[{i}].metric: {problem}"));
            }
            for (field, val) in [("lower", &c.lower), ("higher", &c.higher), ("than", &c.than), ("policy", &c.policy)] {
                if let Some(id) = val {
                    if !policy_ids.contains(&id.as_str()) {
                        p.push(format!("claims[{i}].{field}: no policy with id '{id}'"));
                    }
                }
            }
            if c.not_reproduced() && (c.paper.is_none() || c.reason.is_none()) {
                p.push(format!(
                    "claims[{i}].status: a not_reproduced claim states the paper's value (paper) and why (reason)"
                ));
            }
        }
        if p.is_empty() {
            Ok(())
        } else {
            Err(ScenarioError { problems: p })
        }
    }

    /// Why a claim's metric path cannot match anything in a report of this scenario: it names a domain, task or
    /// job the scenario does not have (a wildcard matches whatever there is). `None` when it may match.
    fn metric_names_missing(&self, metric: &str) -> Option<String> {
        let mut parts = metric.splitn(3, '.');
        let (kind, key) = (parts.next()?, parts.next()?);
        if key.contains('*') {
            return None;
        }
        match kind {
            "domains" if !self.domains.iter().any(|d| d.name == key) => {
                Some(format!("'{metric}' names no domain of this scenario ('{key}')"))
            }
            "tasks" | "jobs" => {
                let (dom, task) = key.split_once('/')?;
                let d = self.domains.iter().find(|d| d.name == dom);
                // The balloon task (guest.balloon) is added by the engine, so it is in reports though not in the file.
                let known = d.is_some_and(|d| {
                    d.tasks.iter().any(|t| t.name == task) || (d.guest.balloon && task.starts_with("balloon"))
                });
                (!known).then(|| format!("'{metric}' names no task of this scenario ('{key}')"))
            }
            _ => None,
        }
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
mod tests {
    use super::*;

    const MINIMAL: &str = r#"{"schema":1,"id":"t","title":"t","seed":1,"duration_ms":1000,
        "host":{"pcpus":1},"domains":[{"name":"a","tasks":[{"name":"burn","workload":{"type":"cpu"}}]}],
        "policies":[{"id":"credit","scheduler":"credit"}]}"#;

    /// A not-reproduced reason that names a work item, a branch or an uninvestigated cause is a defect.
    #[test]
    fn reasons_state_the_model_not_work_items() {
        let defect = |reason: &str| {
            let c: Claim = serde_json::from_value(serde_json::json!({"text":"t","metric":"m","policy":"p",
                "at_most":1,"status":"not_reproduced","reason":reason}))
            .unwrap();
            c.reason_defect()
        };
        assert!(defect("out-of-phase pCPUs are issue 21").is_some());
        assert!(defect("it held on main before").is_some());
        assert!(defect("drifting timers, not investigated").is_some());
        assert!(defect("").is_some());
        assert_eq!(defect("the guest issues reads one at a time, so the domain's disk is idle 40% of the time"), None);
    }

    fn with(patch: impl FnOnce(&mut Value)) -> Result<Scenario, ScenarioError> {
        let mut v: Value = serde_json::from_str(MINIMAL).unwrap();
        patch(&mut v);
        Scenario::from_value(v)
    }

    #[test]
    fn the_schema_is_a_valid_2020_12_schema() {
        let schema: Value = serde_json::from_str(SCHEMA_JSON).unwrap();
        assert_eq!(schema["$id"], SCHEMA_ID);
        jsonschema::draft202012::meta::validate(&schema).unwrap();
    }

    #[test]
    fn the_validator_reports_what_one_built_from_the_schema_itself_does() {
        let schema: Value = serde_json::from_str(SCHEMA_JSON).unwrap();
        let direct = jsonschema::validator_for(&schema).unwrap();
        let errors = |v: &jsonschema::Validator, doc: &Value| -> Vec<String> {
            let mut out: Vec<String> = v
                .iter_errors(doc)
                .map(|e| format!("{} | {} | {}", e.instance_path().as_str(), e, e.kind().keyword()))
                .collect();
            out.sort();
            out
        };
        let mut docs: Vec<Value> = vec![serde_json::from_str(MINIMAL).unwrap(), Value::Null, serde_json::json!([1])];
        let breaks: [fn(&mut Value); 8] = [
            |v| v["domains"][0]["weight"] = "heavy".into(),
            |v| v["domains"][0]["tasks"][0]["workload"]["colour"] = 1.into(),
            |v| v["host"]["pcpus"] = 100000.into(),
            |v| v["id"] = "Not An Id!".into(),
            |v| v["policies"][0]["scheduler"] = "fifo".into(),
            |v| v["policies"][0]["params"] = serde_json::json!({"tslice_ms": -1, "boost": "yes"}),
            |v| v["extra"] = true.into(),
            |v| v["claims"] = serde_json::json!([{"kind": "nope"}, {}]),
        ];
        for b in breaks {
            let mut v = docs[0].clone();
            b(&mut v);
            docs.push(v);
        }
        for f in std::fs::read_dir(concat!(env!("CARGO_MANIFEST_DIR"), "/../../scenarios")).unwrap() {
            let f = f.unwrap().path();
            if f.extension().is_some_and(|e| e == "json") {
                docs.push(serde_json::from_str(&std::fs::read_to_string(f).unwrap()).unwrap());
            }
        }
        for doc in &docs {
            assert_eq!(errors(validator(), doc), errors(&direct, doc), "{doc}");
        }
        assert!(docs.iter().filter(|d| !errors(&direct, d).is_empty()).count() >= 10);
    }

    #[test]
    fn minimal_scenario_parses_with_defaults() {
        let s = Scenario::from_json(MINIMAL).unwrap();
        assert_eq!(s.domains[0].weight, 256);
        assert_eq!(s.domains[0].vcpus, 1);
        assert_eq!(s.host.net.latency_us, 100.0);
    }

    #[test]
    fn errors_name_the_field_path() {
        let e = with(|v| v["domains"][0]["weight"] = "heavy".into()).unwrap_err();
        assert!(e.to_string().contains("domains[0].weight"), "{e}");
        let e = with(|v| v["domains"][0]["tasks"][0]["workload"]["colour"] = 1.into()).unwrap_err();
        assert!(e.to_string().contains("domains[0].tasks[0].workload"), "{e}");
        let e = with(|v| v["host"]["pcpus"] = 100000.into()).unwrap_err();
        assert!(e.to_string().contains("host.pcpus"), "{e}");
        let e = with(|v| v["duration_ms"] = 7_200_000.into()).unwrap_err();
        assert!(e.to_string().contains("duration_ms"), "{e}");
    }

    #[test]
    fn a_copy_bomb_in_a_variant_or_an_ablation_is_refused_naming_it() {
        let bomb: Vec<Value> =
            (0..40).map(|_| serde_json::json!({"op":"copy","from":"/domains","path":"/domains/-"})).collect();
        let sc = with(|v| v["variants"] = serde_json::json!([{"label":"bomb","patch":bomb}])).unwrap();
        let e = sc.pick_variant("bomb").unwrap_err();
        assert!(e.to_string().contains("variants[0] ('bomb'): patch op"), "{e}");
        assert!(e.to_string().contains("larger than the limit"), "{e}");
        let sc = with(|v| {
            v["claims"] = serde_json::json!([{"text":"x","metric":"domains.a.cpu_share","policy":"credit",
                "at_least":0,"without":{"label":"boom","patch":bomb}}])
        })
        .unwrap();
        let e = sc.ablated(0).unwrap().unwrap_err();
        assert!(e.to_string().contains("claims[0].without ('boom'): patch op"), "{e}");
        // Refused at the first copy that would pass the limit (the size is measured before each copy), not after
        // applying all forty: the op it names is one of the first thirty (each copy doubles the domains).
        let op: usize =
            e.to_string().split("patch op ").nth(1).and_then(|r| r.split(' ').next()?.parse().ok()).unwrap();
        assert!(op < 30, "{e}");
    }

    #[test]
    fn duplicate_keys_and_variant_labels_are_refused() {
        let text = MINIMAL.replace(r#""name":"a""#, r#""name":"a","name":"b""#);
        let e = Scenario::from_json(&text).unwrap_err();
        assert!(e.to_string().contains("duplicate key 'name' at line"), "{e}");
        let e = with(|v| v["variants"] = serde_json::json!([{"label":"x","patch":[]},{"label":"x","patch":[]}]))
            .unwrap_err();
        assert!(e.to_string().contains("variants[1].label: 'x' is used by another variant"), "{e}");
    }

    #[test]
    fn a_whole_number_written_as_a_float_names_its_field() {
        let e = Scenario::from_json(&MINIMAL.replace(r#""pcpus":1"#, r#""pcpus":1.0"#)).unwrap_err();
        assert!(e.to_string().contains("host.pcpus: 1.0 must be a whole number"), "{e}");
        // Float fields keep taking floats.
        assert!(Scenario::from_json(&MINIMAL.replace(r#""pcpus":1}"#, r#""pcpus":1,"net":{"mbps":100.0}}"#)).is_ok());
    }

    #[test]
    fn claims_naming_a_missing_domain_or_task_are_refused_at_load() {
        let claim = |metric: &str| {
            with(|v| v["claims"] = serde_json::json!([{"text":"x","metric":metric,"policy":"credit","at_least":0}]))
        };
        let e = claim("domains.nope.cpu_share").unwrap_err();
        assert!(e.to_string().contains("claims[0].metric") && e.to_string().contains("'nope'"), "{e}");
        let e = claim("tasks.a/nope.belief").unwrap_err();
        assert!(e.to_string().contains("names no task"), "{e}");
        assert!(claim("domains.a.cpu_share").is_ok());
        assert!(claim("domains.*.cpu_share").is_ok());
        assert!(claim("tasks.a/burn.cpu_ms").is_ok());
        assert!(claim("fairness.jain").is_ok());
    }

    #[test]
    fn work_below_a_microsecond_is_refused_naming_the_field() {
        let e = with(|v| {
            v["domains"][0]["vcpus"] = 2.into();
            v["domains"][0]["tasks"][0]["workload"] =
                serde_json::json!({"type":"barrier","compute_us":0.01,"phases":10,"sync":"spin"});
        })
        .unwrap_err();
        assert!(e.to_string().contains("domains[0].tasks[0].workload.compute_us"), "{e}");
        let e = with(|v| {
            v["domains"][0]["role"] = "driver".into();
            v["domains"][0]["tasks"][0]["workload"] = serde_json::json!({"type":"disk_reader","cpu_us":0.5});
        })
        .unwrap_err();
        assert!(e.to_string().contains("workload.cpu_us: 0.5 is below the floor of 1 us"), "{e}");
    }

    #[test]
    fn variants_are_patched_and_validated_when_built() {
        let sc = with(|v| {
            let b = serde_json::json!({"name":"b","tasks":[{"name":"burn","workload":{"type":"cpu"}}]});
            v["domains"].as_array_mut().unwrap().push(b);
            v["variants"] = serde_json::json!([{"label":"one domain","patch":[{"op":"remove","path":"/domains/1"}]}]);
        })
        .unwrap();
        let v = sc.pick_variant("one domain").unwrap();
        assert_eq!((sc.domains.len(), v.domains.len()), (2, 1));
        assert!(v.variants.is_empty());
        // A patch that breaks the scenario loads (it is not built then) and is reported when the variant is
        // built, naming the variant and the field.
        let sc = with(|v| {
            v["variants"] = serde_json::json!([{"label":"bad","patch":[
                {"op":"add","path":"/domains/0/weight","value":"heavy"}]}]);
        })
        .unwrap();
        let e = sc.pick_variant("bad").unwrap_err();
        assert!(e.contains("variants[0] ('bad')") && e.contains("domains[0].weight"), "{e}");
        let sc = with(|v| {
            v["variants"] = serde_json::json!([{"label":"gone","patch":[{"op":"remove","path":"/domains/7"}]}]);
        })
        .unwrap();
        let e = sc.variant(0, &mut crate::patch::PatchBudget::default()).unwrap_err();
        assert!(e.to_string().contains("variants[0] ('gone')"), "{e}");
        let e = sc.pick_variant("other").unwrap_err();
        assert!(e.contains("no variant 'other' ('gone')"), "{e}");
    }

    #[test]
    fn ablations_patch_what_was_run_and_are_checked_when_built() {
        let claim = |patch: Value| {
            serde_json::json!([{"text":"busy","metric":"domains.a.cpu_share","policy":"credit","at_least":0.5,
                "without":{"label":"capped","patch":patch}}])
        };
        let sc = with(|v| {
            v["claims"] = claim(serde_json::json!([{"op":"add","path":"/domains/0/cap_pct","value":20}]));
            v["variants"] = serde_json::json!([{"label":"longer","patch":[
                {"op":"replace","path":"/duration_ms","value":2000}]}]);
        })
        .unwrap();
        let seeded = crate::report::with_overrides(
            &sc.pick_variant("longer").unwrap(),
            &crate::report::RunOptions { seed: Some(9), ..Default::default() },
        )
        .unwrap();
        let ab = seeded.ablated(0).unwrap().unwrap();
        // The variant's change, the run's seed, and the ablation itself; no ablation of the ablation.
        assert_eq!((ab.duration_ms, ab.seed, ab.domains[0].cap_pct), (2000, 9, 20));
        assert!(ab.claims[0].without.is_none() && ab.variants.is_empty());
        assert!(sc.ablated(1).is_none());
        // A patch that does not fit names the claim and its ablation when it is built.
        let sc =
            with(|v| v["claims"] = claim(serde_json::json!([{"op":"replace","path":"/domains/4/cap_pct","value":1}])))
                .unwrap();
        let e = sc.ablated(0).unwrap().unwrap_err();
        assert!(e.to_string().contains("claims[0].without ('capped')"), "{e}");
        let e = with(|v| {
            v["claims"] = serde_json::json!([{"text":"x","metric":"fairness.jain","policy":"credit","at_least":0.9,
                "status":"not_reproduced"}]);
        })
        .unwrap_err();
        assert!(e.to_string().contains("claims[0].status"), "{e}");
    }

    #[test]
    fn patch_work_is_charged_before_a_patch_is_applied_and_estimated_for_a_check() {
        let op = serde_json::json!({"op":"add","path":"/domains/0/weight","value":300});
        let sc = with(|v| {
            v["claims"] = serde_json::json!([
                {"text":"a","metric":"domains.a.cpu_share","policy":"credit","at_least":0.5,
                 "without":{"label":"w","patch":[op.clone(), op.clone()]}},
                {"text":"b","metric":"domains.a.cpu_share","policy":"credit","at_least":0.4,
                 "without":{"label":"w","patch":[op.clone(), op.clone()]}}]);
            v["variants"] = serde_json::json!([{"label":"v","patch":[op.clone()]}]);
        })
        .unwrap();
        let s = sc.doc_bytes as u64;
        assert_eq!(s, serde_json::to_string(&*sc.doc).unwrap().len() as u64);
        // One distinct ablation of 2 ops on the scenario and on the variant; the variant's 1 op.
        let grown = crate::patch::grown_bound(sc.variant_patch(0), sc.doc_bytes) as u64;
        assert_eq!(sc.distinct_ablations(), vec![0]);
        assert_eq!(sc.check_work(), 3 * s + 2 * s + 3 * grown);
        // A budget that holds one variant build but not two.
        let mut budget = crate::patch::PatchBudget::new(3 * s);
        sc.variant(0, &mut budget).unwrap();
        assert_eq!(budget.spent, 2 * s);
        let e = sc.variant(0, &mut budget).unwrap_err().to_string();
        assert!(e.contains("variants[0] ('v'): applying it takes") && e.contains("--max-patch-work"), "{e}");
        let e = sc.ablated_within(0, &mut budget).unwrap().unwrap_err().to_string();
        assert!(e.contains("claims[0].without ('w')") && e.contains("(2 operations + 1)"), "{e}");
        let e = budget.check_total(sc.check_work(), "its variants and ablations").unwrap_err();
        assert!(e.contains("more than the limit of") && e.contains("--max-patch-work raises it"), "{e}");
    }

    #[test]
    fn broken_json_is_a_clear_error() {
        let e = Scenario::from_json("{\"schema\": 1,").unwrap_err();
        assert!(e.to_string().contains("not valid JSON"), "{e}");
        let e = Scenario::from_json(&" ".repeat(MAX_SCENARIO_BYTES + 1)).unwrap_err();
        assert!(e.to_string().contains("limit"), "{e}");
    }

    #[test]
    fn cross_field_checks() {
        let e = with(|v| v["domains"][0]["tasks"][0]["vcpu"] = 3.into()).unwrap_err();
        assert!(e.to_string().contains("domains[0].tasks[0].vcpu"), "{e}");
        let e = with(|v| {
            v["domains"][0]["tasks"][0]["workload"] = serde_json::json!({"type":"server","port":7});
        })
        .unwrap_err();
        assert!(e.to_string().contains("driver domain"), "{e}");
        // A driver domain's own tasks may do disk I/O, but not network I/O; a server's disk must do some I/O.
        let driver_task = |w: serde_json::Value| {
            with(|v| {
                v["domains"][0]["role"] = "driver".into();
                v["domains"][0]["tasks"][0]["workload"] = w;
            })
        };
        assert!(driver_task(serde_json::json!({"type":"disk_reader","op":"write"})).is_ok());
        let e = driver_task(serde_json::json!({"type":"io_loop","io":"net"})).unwrap_err();
        assert!(e.to_string().contains("domains[0].tasks[0].workload: a driver domain's own tasks"), "{e}");
        let e = driver_task(serde_json::json!({"type":"disk_reader","op":"erase"})).unwrap_err();
        assert!(e.to_string().contains("op"), "{e}");
        let e = with(|v| {
            v["domains"].as_array_mut().unwrap().insert(0, serde_json::json!({"name":"dom0","role":"driver"}));
            v["domains"][1]["tasks"][0]["workload"] = serde_json::json!({"type":"server","port":7,"disk":{}});
        })
        .unwrap_err();
        assert!(e.to_string().contains("domains[1].tasks[0].workload.disk"), "{e}");
        let e = with(|v| {
            v["claims"] = serde_json::json!([{"text":"x","metric":"fairness.jain","policy":"nope","at_least":0.9}]);
        })
        .unwrap_err();
        assert!(e.to_string().contains("claims[0].policy"), "{e}");
        let e = with(|v| v["warmup_ms"] = 1000.into()).unwrap_err();
        assert!(e.to_string().contains("warmup_ms"), "{e}");
        let e = with(|v| {
            v["domains"][0]["guest"] = serde_json::json!({"balloon": true});
            v["domains"][0]["tasks"][0]["name"] = "balloon".into();
        })
        .unwrap_err();
        assert!(e.to_string().contains("domains[0].tasks[0].name"), "{e}");
    }

    #[test]
    fn pointer_paths() {
        assert_eq!(pointer_to_path(""), "(scenario)");
        assert_eq!(pointer_to_path("/domains/1/tasks/0/name"), "domains[1].tasks[0].name");
    }
}
