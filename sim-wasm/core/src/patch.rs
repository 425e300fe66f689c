//! JSON Patch (RFC 6902) applied one operation at a time under the scenario limits, so that no patch in a file
//! (a variant, a claim's ablation) can grow the document past what a scenario file may be: a `copy` of
//! `/domains` onto `/domains/-` doubles the document per operation, and a dozen such operations would otherwise
//! take gigabytes before validation ever saw the result.
//!
//! The document's size is tracked as its compact JSON length and every value an operation adds is measured before
//! it is added (measuring stops as soon as the limit is passed), so the memory and time a hostile patch can take
//! stay within a small multiple of the limit.
//!
//! Patches are applied lazily (a variant when it is run, an ablation when its claim is judged), each to a copy of
//! the one parsed document, and every application is paid for from a [`PatchBudget`] before it starts: its
//! [`work`] is (operations + 1) x the document's size, since one operation may walk, copy or compare the whole
//! document and validating the result reads it once more. A file's whole check is estimated the same way up front
//! ([`crate::scenario::Scenario::check_work`]), so a file of many variants and ablations is refused, with its
//! figure, before anything is patched.

use crate::limits::{MAX_PCPUS, MAX_SCENARIO_BYTES, MAX_TOTAL_VCPUS};
use json_patch::PatchOperation;
use serde::Deserialize;
use serde_json::Value;
use std::io::{self, Write};

/// Patch work a scenario file may cost by default [bytes of document walked]: 16 walks of a document at the
/// 4 MB limit, about 10 s of patching and validating natively at worst (a library scenario's whole check takes
/// under 5% of it). The CLI's `--max-patch-work` raises it.
pub const MAX_PATCH_WORK: u64 = 1 << 26;

/// What raises [`MAX_PATCH_WORK`], for error messages.
const RAISE: &str = "--max-patch-work raises it";

/// Work of applying `patch` to a document of `doc_bytes` and validating the result [bytes]: (operations + 1) x
/// the document's size.
pub fn work(patch: &Value, doc_bytes: usize) -> u64 {
    (patch.as_array().map_or(0, Vec::len) as u64 + 1).saturating_mul(doc_bytes as u64)
}

/// An upper bound of the document's size after `patch` [bytes], known before applying it: an `add` or `replace`
/// adds at most its own JSON (value, path and framing), a `copy` may double the document, and nothing passes the
/// size limit ([`apply_bounded`] refuses it).
pub fn grown_bound(patch: &Value, doc_bytes: usize) -> usize {
    let ops = patch.as_array().map_or(&[][..], Vec::as_slice);
    if ops.iter().any(|op| op.get("op").and_then(Value::as_str) == Some("copy")) {
        return MAX_SCENARIO_BYTES;
    }
    let added = json_len(patch, MAX_SCENARIO_BYTES).unwrap_or(MAX_SCENARIO_BYTES);
    doc_bytes.saturating_add(added).min(MAX_SCENARIO_BYTES)
}

/// Patch work allowed and spent [bytes] (see [`work`]): each variant or ablation built is charged before its patch
/// is applied, so a file's patches can never take more than the limit however they are built.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PatchBudget {
    pub limit: u64,
    pub spent: u64,
}

impl Default for PatchBudget {
    fn default() -> PatchBudget {
        PatchBudget::new(MAX_PATCH_WORK)
    }
}

impl PatchBudget {
    pub fn new(limit: u64) -> PatchBudget {
        PatchBudget { limit, spent: 0 }
    }

    /// Refuses an estimate of the whole file's patch work above the limit, before anything is patched.
    pub fn check_total(&self, total: u64, what: &str) -> Result<(), String> {
        if total > self.limit {
            return Err(format!(
                "{what} take about {total} bytes of patch work ((operations + 1) x document size, summed over every \
                 variant and ablation built), more than the limit of {}: {RAISE}",
                self.limit
            ));
        }
        Ok(())
    }

    /// Pays for applying `patch` to a document of `doc_bytes`, or says why not (before anything is applied).
    pub fn charge(&mut self, patch: &Value, doc_bytes: usize) -> Result<(), String> {
        let w = work(patch, doc_bytes);
        let ops = patch.as_array().map_or(0, Vec::len);
        if self.spent.saturating_add(w) > self.limit {
            return Err(format!(
                "applying it takes {w} bytes of patch work (({ops} operations + 1) x {doc_bytes} bytes of \
                 document), which with the {} spent on this file before passes the limit of {}: {RAISE}",
                self.spent, self.limit
            ));
        }
        self.spent += w;
        Ok(())
    }
}

/// Compact JSON length of `v` [bytes], or `None` once it passes `cap` (the walk stops there).
pub fn json_len(v: &Value, cap: usize) -> Option<usize> {
    struct Counter {
        n: usize,
        cap: usize,
    }
    impl Write for Counter {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.n += buf.len();
            if self.n > self.cap {
                // Any error stops serde_json's walk; the caller only reads `n > cap`.
                return Err(io::Error::other("over the cap"));
            }
            Ok(buf.len())
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }
    let mut c = Counter { n: 0, cap };
    match serde_json::to_writer(&mut c, v) {
        Ok(()) => Some(c.n),
        Err(_) => None,
    }
}

/// One operation in words for an error message: `op 3 (copy from /domains to /domains/-)`.
fn describe(i: usize, op: &PatchOperation) -> String {
    let what = match op {
        PatchOperation::Add(o) => format!("add at {}", o.path),
        PatchOperation::Remove(o) => format!("remove {}", o.path),
        PatchOperation::Replace(o) => format!("replace {}", o.path),
        PatchOperation::Move(o) => format!("move from {} to {}", o.from, o.path),
        PatchOperation::Copy(o) => format!("copy from {} to {}", o.from, o.path),
        PatchOperation::Test(o) => format!("test {}", o.path),
    };
    format!("patch op {i} ({what})")
}

/// Counts the limits name (domains, vCPUs over all domains, pCPUs) as the document stands; an error names the one
/// that is over.
fn check_counts(doc: &Value) -> Result<(), String> {
    if let Some(domains) = doc.get("domains").and_then(Value::as_array) {
        // Every domain has at least one vCPU, so the vCPU limit bounds the number of domains too.
        if domains.len() > MAX_TOTAL_VCPUS as usize {
            return Err(format!("{} domains, more than the limit of {MAX_TOTAL_VCPUS}", domains.len()));
        }
        let vcpus: u64 = domains.iter().map(|d| d.get("vcpus").and_then(Value::as_u64).unwrap_or(1)).sum();
        if vcpus > u64::from(MAX_TOTAL_VCPUS) {
            return Err(format!("{vcpus} vCPUs in all, more than the limit of {MAX_TOTAL_VCPUS}"));
        }
    }
    if let Some(p) = doc.pointer("/host/pcpus").and_then(Value::as_u64) {
        if p > u64::from(MAX_PCPUS) {
            return Err(format!("host.pcpus {p}, more than the limit of {MAX_PCPUS}"));
        }
    }
    Ok(())
}

/// Applies `patch` (the JSON form of an RFC 6902 patch) to `doc`, checking after every operation that the document
/// is within [`MAX_SCENARIO_BYTES`] and the count limits. An error names the operation and the limit; `doc` is then
/// left part-way and must be dropped.
///
/// An operation's `value` is read where it is, in `patch`, and copied once, into `doc`: the operation itself is
/// read without it (`json_patch` would clone it once to read the operation and again to apply it, so a variant
/// inserting a 100 MB value took three copies of it at once); a `test` compares in place.
pub fn apply_bounded(doc: &mut Value, patch: &Value) -> Result<(), String> {
    let raw = patch.as_array().ok_or_else(|| format!("a patch is a list of operations, not {}", kind(patch)))?;
    let ops = raw
        .iter()
        .enumerate()
        .map(|(i, op)| PatchOperation::deserialize(&without_value(op)).map_err(|e| format!("patch op {i}: {e}")))
        .collect::<Result<Vec<_>, _>>()?;
    let limit = MAX_SCENARIO_BYTES;
    let over = |i: usize, op: &PatchOperation| {
        format!("{} would make the scenario larger than the limit of {limit} bytes", describe(i, op))
    };
    // The document itself is within the limit (it was read from a file that is); measure it once.
    let mut size = json_len(doc, limit).ok_or_else(|| format!("the scenario is larger than {limit} bytes"))?;
    for (i, (op, raw)) in ops.iter().zip(raw).enumerate() {
        // Add, replace and test have one (deserialising checked it is there).
        let value = raw.get("value").unwrap_or(&Value::Null);
        // Bytes this operation adds (measured before anything is copied) and an upper bound of those it removes.
        let added = match op {
            PatchOperation::Add(_) | PatchOperation::Replace(_) => json_len(value, limit),
            PatchOperation::Copy(o) => match doc.pointer(o.from.as_str()) {
                Some(v) => json_len(v, limit - size.min(limit)),
                None => Some(0), // json_patch reports the bad `from` below
            },
            PatchOperation::Remove(_) | PatchOperation::Move(_) | PatchOperation::Test(_) => Some(0),
        };
        let removed = match op {
            PatchOperation::Remove(o) => doc.pointer(o.path.as_str()).and_then(|v| json_len(v, limit)).unwrap_or(0),
            PatchOperation::Replace(o) => doc.pointer(o.path.as_str()).and_then(|v| json_len(v, limit)).unwrap_or(0),
            _ => 0,
        };
        // A key or a separator comes with an added value: its path's last token bounds the key.
        let framing = op.path().as_str().rsplit('/').next().map_or(0, str::len) + 4;
        let grown = added.map(|a| size.saturating_sub(removed) + a + framing);
        match grown {
            Some(s) if s <= limit => size = s,
            _ => return Err(over(i, op)),
        }
        let failed = |why: &str| format!("{}: operation '/{i}' failed at path '{}': {why}", describe(i, op), op.path());
        if let PatchOperation::Test(o) = op {
            match doc.pointer(o.path.as_str()) {
                None => return Err(failed("path is invalid")),
                Some(v) if v != value => return Err(failed("value did not match")),
                Some(_) => {}
            }
            continue;
        }
        // An add or replace puts `null` in place, then the value is copied into it.
        json_patch::patch(doc, std::slice::from_ref(op)).map_err(|e| format!("{}: {e}", describe(i, op)))?;
        if let PatchOperation::Add(_) | PatchOperation::Replace(_) = op {
            *placed(doc, op.path().as_str()).ok_or_else(|| failed("path is invalid"))? = value.clone();
        }
        check_counts(doc).map_err(|e| format!("{}: the scenario would have {e}", describe(i, op)))?;
    }
    Ok(())
}

/// An operation's fields but its `value` (`null` in its place, when it has one): what reading it may copy.
fn without_value(op: &Value) -> Value {
    let Some(m) = op.as_object() else { return op.clone() };
    let mut out = serde_json::Map::new();
    for (k, v) in m {
        // Unknown fields are ignored when an operation is read, so they need not be copied either.
        match k.as_str() {
            "value" => out.insert(k.clone(), Value::Null),
            "op" | "path" | "from" => out.insert(k.clone(), v.clone()),
            _ => None,
        };
    }
    Value::Object(out)
}

/// The value an `add` or `replace` at `path` (a JSON pointer) has just put in place: at the path itself, or for an
/// `add` at `/-` of an array, its last element.
fn placed<'d>(doc: &'d mut Value, path: &str) -> Option<&'d mut Value> {
    let Some((parent, last)) = path.rsplit_once('/') else { return Some(doc) };
    match doc.pointer_mut(parent)? {
        Value::Array(items) => {
            let i = if last == "-" { items.len().checked_sub(1)? } else { last.parse::<usize>().ok()? };
            items.get_mut(i)
        }
        Value::Object(m) => m.get_mut(&last.replace("~1", "/").replace("~0", "~")),
        _ => None,
    }
}

/// What a JSON value is, in words for a message (`a number`).
pub(crate) fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn doc() -> Value {
        json!({"host": {"pcpus": 2}, "domains": [{"name": "a", "vcpus": 2, "tasks": [{"name": "t"}]}]})
    }

    #[test]
    fn ordinary_patches_apply() {
        let mut d = doc();
        apply_bounded(
            &mut d,
            &json!([{"op": "add", "path": "/domains/-", "value": {"name": "b"}},
                                     {"op": "replace", "path": "/host/pcpus", "value": 4}]),
        )
        .unwrap();
        assert_eq!(d["domains"][1]["name"], "b");
        assert_eq!(d["host"]["pcpus"], 4);
    }

    #[test]
    fn a_copy_bomb_stops_at_the_size_limit_naming_the_op() {
        let mut d = doc();
        // 30 doublings would be 2^30 times the document; the byte limit stops it part-way.
        let bomb: Vec<Value> =
            (0..30).map(|_| json!({"op": "copy", "from": "/domains", "path": "/domains/-"})).collect();
        let e = apply_bounded(&mut d, &Value::Array(bomb)).unwrap_err();
        assert!(e.contains("copy from /domains to /domains/-"), "{e}");
        // A big copied subtree hits the byte limit first.
        let mut d = doc();
        d["summary"] = Value::String("x".repeat(1 << 20));
        let bomb: Vec<Value> =
            (0..30).map(|i| json!({"op": "copy", "from": "/summary", "path": format!("/s{i}")})).collect();
        let e = apply_bounded(&mut d, &Value::Array(bomb)).unwrap_err();
        // 1 MB copied onto new keys: the third copy (op 2) would take the document past 4 MB.
        assert!(e.contains("patch op 2 (copy from /summary to /s2)") && e.contains("larger than the limit"), "{e}");
    }

    #[test]
    fn vcpus_and_pcpus_are_counted_as_each_op_applies() {
        let mut d = doc();
        let e =
            apply_bounded(&mut d, &json!([{"op": "replace", "path": "/domains/0/vcpus", "value": 5000}])).unwrap_err();
        assert!(e.contains("5000 vCPUs in all"), "{e}");
        let e =
            apply_bounded(&mut doc(), &json!([{"op": "replace", "path": "/host/pcpus", "value": 100000}])).unwrap_err();
        assert!(e.contains("host.pcpus 100000"), "{e}");
    }

    #[test]
    fn json_len_is_the_compact_length_and_stops_at_the_cap() {
        let v = doc();
        assert_eq!(json_len(&v, usize::MAX), Some(serde_json::to_string(&v).unwrap().len()));
        assert_eq!(json_len(&v, 5), None);
    }
}
