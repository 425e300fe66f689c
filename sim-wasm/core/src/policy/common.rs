//! Small pieces the thesis-003 policies share: parameter parsing with field-named errors, per-domain parameter
//! tables keyed by domain name, and run-queue snapshot versions.

use super::DomainInfo;
use crate::model::PcpuId;
use crate::time::Nanos;
use serde_json::{Map, Value};

/// An integer parameter in `lo..=hi`, or an error naming it.
pub fn int(param: &str, v: &Value, lo: u64, hi: u64) -> Result<u64, String> {
    v.as_u64()
        .filter(|x| (lo..=hi).contains(x))
        .ok_or_else(|| format!("{param}: expected an integer in {lo}..={hi}, got {v}"))
}

/// A boolean parameter, or an error naming it.
pub fn boolean(param: &str, v: &Value) -> Result<bool, String> {
    v.as_bool().ok_or_else(|| format!("{param}: expected true or false, got {v}"))
}

/// The object of `params`, or an error when it is something else (null = no parameters).
pub fn object<'a>(scheduler: &str, params: &'a Value) -> Result<Option<&'a Map<String, Value>>, String> {
    match params {
        Value::Null => Ok(None),
        Value::Object(m) => Ok(Some(m)),
        other => Err(format!("{scheduler} params: expected an object, got {other}")),
    }
}

/// Per-domain parameters given as `"domains": { NAME: {...} }`: one entry per domain (None = defaults), with
/// errors for names that are no domain of the scenario.
pub fn per_domain<'a>(
    scheduler: &str,
    params: &'a Value,
    domains: &[DomainInfo],
) -> Result<Vec<Option<&'a Map<String, Value>>>, String> {
    let Some(obj) = params.get("domains") else { return Ok(vec![None; domains.len()]) };
    let map = obj.as_object().ok_or_else(|| format!("{scheduler}.domains: expected an object, got {obj}"))?;
    by_domain_name(scheduler, map, domains)
}

/// The entries of a `{ NAME: {...} }` table in domain order (None = not named), with errors for names that are
/// no domain of the scenario.
pub fn by_domain_name<'a>(
    scheduler: &str,
    map: &'a Map<String, Value>,
    domains: &[DomainInfo],
) -> Result<Vec<Option<&'a Map<String, Value>>>, String> {
    let mut out = vec![None; domains.len()];
    for (name, v) in map {
        let d = domains
            .iter()
            .position(|d| &d.name == name)
            .ok_or_else(|| format!("{scheduler}.domains.{name}: no domain named '{name}'"))?;
        out[d] = Some(v.as_object().ok_or_else(|| format!("{scheduler}.domains.{name}: expected an object, got {v}"))?);
    }
    Ok(out)
}

/// A time parameter given in microseconds, as nanoseconds.
pub fn us(param: &str, v: &Value, lo: u64, hi: u64) -> Result<Nanos, String> {
    int(param, v, lo, hi).map(Nanos::from_us)
}

/// Errors for a per-domain table's keys that name no domain of the scenario (`names`).
pub fn known_domains<'a>(keys: impl IntoIterator<Item = &'a String>, names: &[&str]) -> Result<(), String> {
    match keys.into_iter().find(|k| !names.contains(&k.as_str())) {
        Some(name) => Err(format!("domains.{name}: no domain named '{name}' in this scenario")),
        None => Ok(()),
    }
}

/// A policy timer asked for through `Ctx::timer_at` that is only ever moved earlier: a later request is dropped
/// while an earlier one is pending, and a timer that fires finding nothing due (its work was cancelled) is
/// harmless, so nothing is ever cancelled.
#[derive(Debug, Clone, Copy, Default)]
pub struct EarliestTimer(Option<u64>);

impl EarliestTimer {
    /// Asks for the timer at `at` [ns] unless one is pending no later.
    pub fn arm(&mut self, at: u64, ctx: &mut super::Ctx) {
        if self.0.is_none_or(|t| at < t) {
            self.0 = Some(at);
            ctx.timer_at(Nanos(at));
        }
    }

    /// The policy's `timer` hook ran at `now` [ns]: the pending timer, if due, has fired.
    pub fn fired(&mut self, now: u64) {
        if self.0.is_some_and(|t| t <= now) {
            self.0 = None;
        }
    }
}

/// Per-pCPU counters for `Policy::runqueue_versions`.
#[derive(Debug, Clone)]
pub struct Versions(Vec<u64>);

impl Versions {
    pub fn new(pcpus: usize) -> Versions {
        Versions(vec![0; pcpus])
    }
    pub fn touch(&mut self, p: PcpuId) {
        self.0[p.0] += 1;
    }
    pub fn touch_all(&mut self) {
        self.0.iter_mut().for_each(|x| *x += 1);
    }
    pub fn all(&self) -> &[u64] {
        &self.0
    }
}

/// Where each vCPU starts: spread round robin over the pCPUs in vCPU order, as Xen's initial placement does on
/// an idle host.
pub fn spread(nvcpus: usize, pcpus: usize) -> Vec<PcpuId> {
    (0..nvcpus).map(|v| PcpuId(v % pcpus.max(1))).collect()
}

impl crate::size::HeapSize for Versions {
    fn heap_size(&self) -> usize {
        self.0.heap_size()
    }
}

crate::size::no_heap!(EarliestTimer);
