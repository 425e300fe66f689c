//! Loading a scenario file: its format ([`crate::scenario`]) checked together with each scheduler's own rules
//! ([`crate::policy::registry`]). This layer sits above both so that the file format knows no scheduler and the
//! schedulers only read the format's types: `scenario` <- `policy` <- `load`, with no way back.

use crate::patch::PatchBudget;
use crate::policy::registry::Registry;
use crate::scenario::{parse_strict, Scenario, ScenarioError, MAX_SCENARIO_BYTES};
use serde_json::{json, Value};

impl Scenario {
    /// Parses and validates a scenario file (format, cross-field checks, every scheduler's rules). Variants and
    /// ablations are patches kept as written, built one at a time when asked for ([`Scenario::variant`],
    /// [`Scenario::ablated`]), so loading walks the document a fixed number of times whatever its patches.
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse_json(text, &Registry)
    }

    /// Validates an already-parsed JSON value as [`Scenario::from_json`] does.
    pub fn from_value(value: Value) -> Result<Scenario, ScenarioError> {
        Scenario::parse_value(value, &Registry)
    }

    /// Parses a scenario file as [`Scenario::from_json`] does after giving each `(id, source)` pair's policy that
    /// script (see [`attach_scripts`]): how the CLI's `--script ID=PATH` and Python's `scripts=` hand a policy
    /// written in a file to a scenario. Variants and ablations are built from the document with the scripts in it.
    pub fn from_json_with_scripts(text: &str, scripts: &[(String, String)]) -> Result<Scenario, ScenarioError> {
        if scripts.is_empty() {
            return Scenario::from_json(text);
        }
        if text.len() > MAX_SCENARIO_BYTES {
            // The file alone is over the limit: say so as a file without scripts would be told.
            return Scenario::from_json(text);
        }
        let invalid = |e: String| ScenarioError { problems: vec![e] };
        let mut value = parse_strict(text).map_err(|e| invalid(format!("(scenario): not valid JSON: {e}")))?;
        attach_scripts(&mut value, scripts).map_err(invalid)?;
        // Through the text again, so the size limit applies to the file with its scripts in it.
        Scenario::from_json(&value.to_string())
    }

    /// The variant with this label (see the scenario's `variants`), built now within the default patch work
    /// ([`crate::patch::MAX_PATCH_WORK`]), or an error listing the labels there are or saying what is wrong with it.
    pub fn pick_variant(&self, label: &str) -> Result<Scenario, String> {
        self.pick_variant_within(label, &mut PatchBudget::default())
    }

    /// [`Scenario::pick_variant`] paid for from `budget`.
    pub fn pick_variant_within(&self, label: &str, budget: &mut PatchBudget) -> Result<Scenario, String> {
        match self.variants.iter().position(|v| v.label == label) {
            Some(i) => self.variant(i, budget).map_err(|e| format!("--variant: {e}")),
            None => {
                let labels: Vec<String> = self.variants.iter().map(|v| format!("'{}'", v.label)).collect();
                let known = if labels.is_empty() { "it has none".to_string() } else { labels.join(", ") };
                Err(format!("--variant: scenario '{}' has no variant '{label}' ({known})", self.id))
            }
        }
    }

    /// Variant `i` built and validated (see [`Scenario::variant_with`]).
    pub fn variant(&self, i: usize, budget: &mut PatchBudget) -> Result<Scenario, ScenarioError> {
        self.variant_with(i, &Registry, budget)
    }

    /// The scenario with claim `k`'s ablation applied within the default patch work (see
    /// [`Scenario::ablated_with`]); `None` without one.
    pub fn ablated(&self, k: usize) -> Option<Result<Scenario, ScenarioError>> {
        self.ablated_with(k, &Registry, &mut PatchBudget::default())
    }

    /// Claim `k`'s ablation paid for from `budget`.
    pub fn ablated_within(&self, k: usize, budget: &mut PatchBudget) -> Option<Result<Scenario, ScenarioError>> {
        self.ablated_with(k, &Registry, budget)
    }
}

/// Gives policy `id` of a scenario (JSON, before validation) the script `source`, for each pair: an existing
/// policy becomes `"scheduler": "script"` with that source (a script policy keeps its `vars`; another's
/// parameters, which a script does not read, are dropped), and an id the scenario lacks is added as a new policy.
pub fn attach_scripts(scenario: &mut Value, scripts: &[(String, String)]) -> Result<(), String> {
    for (id, source) in scripts {
        if source.len() > MAX_SCENARIO_BYTES {
            return Err(format!("script for policy '{id}': larger than the limit of {MAX_SCENARIO_BYTES} bytes"));
        }
        let policies = scenario
            .get_mut("policies")
            .and_then(Value::as_array_mut)
            .ok_or("script: the scenario has no `policies` list to add a script policy to")?;
        match policies.iter_mut().find(|p| p.get("id").and_then(Value::as_str) == Some(id.as_str())) {
            Some(p) => {
                let vars = match (p.get("scheduler").and_then(Value::as_str), p.pointer("/params/vars")) {
                    (Some("script"), Some(v)) => v.clone(),
                    _ => json!({}),
                };
                p["scheduler"] = json!("script");
                p["params"] = json!({ "source": source, "vars": vars });
            }
            None => policies.push(json!({
                "id": id, "label": id, "scheduler": "script", "params": { "source": source, "vars": {} }
            })),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn scripts_replace_or_add_policies() {
        let mut v = json!({"policies": [
            {"id": "credit", "scheduler": "credit", "params": {"tslice_ms": 30}},
            {"id": "mine", "scheduler": "script", "params": {"source": "old", "vars": {"slice_ms": 10}}}
        ]});
        let s = |id: &str, src: &str| (id.to_string(), src.to_string());
        attach_scripts(&mut v, &[s("mine", "new"), s("credit", "a"), s("extra", "b")]).unwrap();
        assert_eq!(v["policies"][1]["params"], json!({"source": "new", "vars": {"slice_ms": 10}}));
        assert_eq!(
            v["policies"][0],
            json!({"id": "credit", "scheduler": "script", "params": {"source": "a", "vars": {}}})
        );
        assert_eq!(v["policies"][2]["id"], "extra");
        assert_eq!(v["policies"][2]["scheduler"], "script");
        let e = attach_scripts(&mut json!({}), &[s("x", "y")]).unwrap_err();
        assert!(e.contains("no `policies`"), "{e}");
        let big = "x".repeat(MAX_SCENARIO_BYTES + 1);
        let e = attach_scripts(&mut v, &[s("x", &big)]).unwrap_err();
        assert!(e.contains("larger than the limit"), "{e}");
    }
}
