//! The table of schedulers: one row per scheduler with its name, what it is (co-scheduling, task beliefs, Lag
//! view), its constructor, its parameter checks and its parameter declaration. Everything that used to ask "is
//! this scheduler called gang?" asks this table instead: building a policy, checking a scenario's policies and
//! changes, the capabilities the trace's `Meta` hands to the page, and the scenario schema.
//!
//! A scheduler registers itself: its file exports its row (`pub const ROW: Scheduler`, beside its constructor, as
//! Xen's `REGISTER_SCHEDULER` in each `sched/*.c`), and [`SCHEDULERS`] below lists the rows, one line
//! each. Adding a scheduler is its file (with its `pub mod` line in `policy/mod.rs`) and its line in that list:
//!
//! - its parameters are a [`super::params::Params`] struct, named in the row by [`params::declared`];
//! - `scenarios/schema.json`'s scheduler enum, its `allOf` branch per scheduler (which `$defs` entry a policy's
//!   `params` are checked against) and those `$defs` are generated from the rows by the test that guards them
//!   (`SCHEDSIM_BLESS=1 cargo test -p schedsim-core schema_defs` rewrites them; the test fails while the
//!   committed file differs), and `params::from_value` / `params::change` check files and run-time changes
//!   against the same declaration.
//!
//! The table is also the scenario file's [`SchedulerRules`]: the file format (`scenario.rs`) checks what any
//! scenario must satisfy and hands each policy to these rules, so it never needs to know a scheduler.

use super::{
    arinc653, atropos, bvt, credit, credit2, gang, hybrid, kvm, null, params, relaxed_cosched, rtds, script, sedf,
    xenco, DomainInfo, Policy,
};
use crate::scenario::{DomainType, Scenario, SchedulerRules};
use serde::Serialize;
use serde_json::Value;

/// What a scheduler is, for the views that only apply to some (the page reads these from the trace's `Meta`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct Caps {
    /// Runs a domain's vCPUs together on as many pCPUs (paper 001): needs a pCPU per co-scheduled vCPU.
    pub co_schedules: bool,
    /// Infers guest tasks' I/O-boundness (task-aware Credit, paper 000), so the belief view applies.
    pub beliefs: bool,
    /// Lag against the ideal processor sharing (paper 001) is the measure of interest.
    pub lag: bool,
}

impl Caps {
    /// None of the special views.
    pub const PLAIN: Caps = Caps { co_schedules: false, beliefs: false, lag: false };
    /// The Credit family: beliefs when `tavs` is on.
    pub const INFERS: Caps = Caps { co_schedules: false, beliefs: true, lag: false };
    /// Co-schedulers, judged by Lag.
    pub const CO_SCHEDULES: Caps = Caps { co_schedules: true, beliefs: false, lag: true };
}

/// What a constructor gets: the policy's parameters and the host it will run.
pub struct Setup<'a> {
    pub params: &'a Value,
    pub pcpus: usize,
    pub domains: &'a [DomainInfo],
    /// Each domain's scenario `type` (paper 001).
    pub types: &'a [DomainType],
    /// The scenario's seed (a policy's own random stream derives from it).
    pub seed: u64,
    /// The policy's id in the scenario, for its messages.
    pub policy_id: &'a str,
    /// The host's hardware threads per core (1 = no SMT) and cores per socket (None = one socket), for
    /// `sched_gran`.
    pub threads_per_core: usize,
    pub cores_per_socket: Option<usize>,
}

/// One scheduler.
pub struct Scheduler {
    /// The name scenario files use (`policies[].scheduler`).
    pub name: &'static str,
    pub caps: Caps,
    /// Builds the policy.
    pub build: fn(&Setup) -> Result<Box<dyn Policy>, String>,
    /// Checks that `param` may change at run time and `value` fits it (scenario `changes`).
    pub check_param: fn(param: &str, value: &Value) -> Result<(), String>,
    /// Checks policy `i`'s parameters and changes against the rest of the scenario at load time, pushing each
    /// problem with its field path.
    pub check_scenario: fn(sc: &Scenario, i: usize, problems: &mut Vec<String>),
    /// Its parameter declaration: the `$defs` entry its `params` are checked against (the schema's branch for
    /// this scheduler), generated from the declaration ([`params::declared`]).
    pub params: params::Declared,
}

/// Boxes a concrete policy's constructor result.
pub fn boxed<P: Policy + 'static>(r: Result<P, String>) -> Result<Box<dyn Policy>, String> {
    r.map(|p| Box::new(p) as Box<dyn Policy>)
}

/// For schedulers whose parameters need nothing from the scenario.
pub fn no_scenario_check(_: &Scenario, _: usize, _: &mut Vec<String>) {}

/// Scenario checks that compare parameters with the scenario's domain names.
pub fn check_named(sc: &Scenario, i: usize, p: &mut Vec<String>, check: fn(&Value, &[&str]) -> Result<(), String>) {
    let names: Vec<&str> = sc.domains.iter().map(|d| d.name.as_str()).collect();
    if let Err(e) = check(&sc.policies[i].params, &names) {
        p.push(format!("policies[{i}].params.{e}"));
    }
}

/// Every scheduler, in the order the docs list them: each file's own row (see the module header).
pub static SCHEDULERS: &[Scheduler] = &[
    credit::ROW,
    credit2::ROW,
    sedf::ROW,
    bvt::ROW,
    atropos::ROW,
    arinc653::ROW,
    credit::enhanced::ROW,
    hybrid::ROW,
    gang::ROW,
    xenco::ROW,
    rtds::ROW,
    null::ROW,
    kvm::ROW,
    relaxed_cosched::ROW,
    script::ROW,
];

/// The scheduler with this name.
pub fn lookup(name: &str) -> Option<&'static Scheduler> {
    SCHEDULERS.iter().find(|s| s.name == name)
}

/// The names of all schedulers, in table order.
pub fn names() -> impl Iterator<Item = &'static str> {
    SCHEDULERS.iter().map(|s| s.name)
}

/// Builds the policy of a scenario's policy spec.
pub fn build(scheduler: &str, setup: &Setup) -> Result<Box<dyn Policy>, String> {
    let s = lookup(scheduler).ok_or_else(|| format!("scheduler '{scheduler}' is not implemented yet"))?;
    (s.build)(setup)
}

/// Checks that `param` is a run-time parameter of `scheduler` and `value` fits it.
pub fn check_param(scheduler: &str, param: &str, value: &Value) -> Result<(), String> {
    let s = lookup(scheduler).ok_or_else(|| format!("scheduler '{scheduler}' has no run-time parameters"))?;
    (s.check_param)(param, value)
}

/// The scenario rules of the scheduler table (see the module header).
pub struct Registry;

impl SchedulerRules for Registry {
    fn check_policy(&self, sc: &Scenario, i: usize, problems: &mut Vec<String>) {
        let pol = &sc.policies[i];
        match lookup(&pol.scheduler) {
            Some(s) => (s.check_scenario)(sc, i, problems),
            None => problems.push(format!(
                "policies[{i}].scheduler: '{}' is not implemented yet (available: {})",
                pol.scheduler,
                names().collect::<Vec<_>>().join(", ")
            )),
        }
    }

    fn check_change(&self, sc: &Scenario, i: usize, problems: &mut Vec<String>) {
        let c = &sc.changes[i];
        let Some(pol) = sc.policy(&c.policy) else { return };
        if let Err(e) = check_param(&pol.scheduler, &c.param, &c.value) {
            problems.push(format!("changes[{i}]: {e}"));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scenario::Scenario;
    use crate::sim::test_support::*;
    use crate::sim::Simulation;
    use serde_json::{json, Value};

    /// The parts of `scenarios/schema.json` the rows generate: the scheduler enum, one `allOf` branch per
    /// scheduler naming the `$defs` entry its `params` are checked against (required when the row says so), and
    /// those entries with the nested types they refer to. Only tests generate schemas, so the generator stays
    /// out of the wasm module. The file is rewritten with `SCHEDSIM_BLESS=1 cargo test -p schedsim-core
    /// schema_defs` after a row or a declaration changes.
    #[test]
    fn schema_defs_match_the_declarations() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../scenarios/schema.json");
        let text = std::fs::read_to_string(&path).expect("scenarios/schema.json");
        let mut schema: Value = serde_json::from_str(&text).unwrap();
        let mut generated: Vec<(String, Value)> = Vec::new();
        for s in SCHEDULERS {
            for (name, def) in (s.params.defs)() {
                if let Some((_, old)) = generated.iter().find(|(n, _)| *n == name) {
                    assert_eq!(*old, def, "two declarations generate different $defs '{name}'");
                } else {
                    generated.push((name, def));
                }
            }
        }
        let branches: Vec<Value> = SCHEDULERS
            .iter()
            .map(|s| {
                let params = json!({ "params": { "$ref": format!("#/$defs/{}", s.params.def) } });
                let then = if s.params.required {
                    json!({ "required": ["params"], "properties": params })
                } else {
                    json!({ "properties": params })
                };
                json!({ "if": { "properties": { "scheduler": { "const": s.name } } }, "then": then })
            })
            .collect();
        let defs = schema.get_mut("$defs").and_then(Value::as_object_mut).expect("$defs");
        let mut stale = Vec::new();
        for (name, def) in generated {
            if defs.get(&name) != Some(&def) {
                stale.push(name.clone());
                defs.insert(name, def);
            }
        }
        let policy = defs.get_mut("policy").and_then(Value::as_object_mut).expect("$defs/policy");
        let names: Value = names().collect::<Vec<_>>().into();
        let scheduler = policy.get_mut("properties").and_then(|p| p.get_mut("scheduler")).expect("scheduler");
        if scheduler.get("enum") != Some(&names) {
            stale.push("policy.properties.scheduler.enum".into());
            scheduler["enum"] = names;
        }
        if policy.get("allOf") != Some(&Value::from(branches.clone())) {
            stale.push("policy.allOf".into());
            policy.insert("allOf".into(), branches.into());
        }
        if stale.is_empty() {
            return;
        }
        if std::env::var_os("SCHEDSIM_BLESS").is_some() {
            std::fs::write(&path, serde_json::to_string_pretty(&schema).unwrap() + "\n").unwrap();
            return;
        }
        panic!(
            "scenarios/schema.json's {stale:?} differ from the scheduler rows they are generated from; \
             regenerate them with SCHEDSIM_BLESS=1 cargo test -p schedsim-core schema_defs"
        );
    }

    #[test]
    fn names_are_unique_and_capabilities_fit() {
        for (i, s) in SCHEDULERS.iter().enumerate() {
            assert!(SCHEDULERS[..i].iter().all(|o| o.name != s.name), "{} listed twice", s.name);
            // A co-scheduler is judged by Lag (paper 001).
            assert_eq!(s.caps.co_schedules, s.caps.lag, "{}", s.name);
        }
        assert!(lookup("gang").unwrap().caps.co_schedules && !lookup("credit").unwrap().caps.co_schedules);
        assert!(lookup("nope").is_none());
        assert!(build(
            "nope",
            &Setup {
                params: &Value::Null,
                pcpus: 1,
                domains: &[],
                types: &[],
                seed: 1,
                policy_id: "p",
                threads_per_core: 1,
                cores_per_socket: None
            }
        )
        .is_err());
    }

    /// The rules the scenario format hands over: co-scheduling needs, type changes naming domains, run-time
    /// parameters each scheduler accepts.
    #[test]
    fn scenario_rules_come_from_the_table() {
        let load = |scheduler: &str, params: Value, change: Value| {
            Scenario::from_value(serde_json::json!({"schema":1,"id":"t","title":"t","seed":1,"duration_ms":1000,
                "host":{"pcpus":1},
                "domains":[{"name":"a","vcpus":2,"type":"concurrent","tasks":[{"name":"b","workload":{"type":"cpu"}}]}],
                "policies":[{"id":"p","scheduler":scheduler,"params":params}],
                "changes":[{"at_ms":10,"policy":"p","param":change["param"],"value":change["value"]}]}))
        };
        let e = load("hybrid", json!({}), json!({"param":"slot_ms","value":10})).unwrap_err().to_string();
        assert!(e.contains("domains[0].vcpus: 2 co-scheduled vCPUs under policy 'p'"), "{e}");
        let e = load("credit", json!({}), json!({"param":"domain_type.a","value":"throughput"})).unwrap_err();
        assert!(e.to_string().contains("changes[0]: unknown credit parameter"), "{e}");
        let ok = json!({"domain_type.a":"throughput"});
        let e = load("hybrid", ok, json!({"param":"domain_type.x","value":"concurrent"})).unwrap_err().to_string();
        assert!(e.contains("changes[0].param: no domain 'x'"), "{e}");
        let e = load("gang", json!({}), json!({"param":"domain_type.a","value":"concurrent"})).unwrap_err().to_string();
        assert!(e.contains("changes[0]: domain_type.a: the gang scheduler") && e.contains("domains[0].vcpus"), "{e}");
        assert!(load("credit", json!({}), json!({"param":"tslice_ms","value":10})).is_ok());
    }

    /// The trace's `meta.caps` come from the scheduler registry; beliefs only while the policy infers.
    #[test]
    fn meta_caps_describe_the_scheduler() {
        let sc = scenario(json!({"schema":1,"id":"caps","title":"t","seed":1,"duration_ms":100,"host":{"pcpus":2},
            "domains":[{"name":"a","vcpus":2,"tasks":[cpu_task("burn")]}],
            "policies":[{"id":"credit","scheduler":"credit"},
                        {"id":"tavs","scheduler":"credit","params":{"tavs":{}}},
                        {"id":"gang","scheduler":"gang"}]}));
        let caps = |id: &str| Simulation::new(&sc, id).unwrap().meta().caps;
        assert_eq!(caps("credit"), Caps { co_schedules: false, beliefs: false, lag: false });
        assert_eq!(caps("tavs"), Caps { co_schedules: false, beliefs: true, lag: false });
        assert_eq!(caps("gang"), Caps { co_schedules: true, beliefs: false, lag: true });
    }
}
