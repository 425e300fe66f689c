//! Variants and ablations: patched copies of the scenario's document, paid for from a patch budget before they
//! are applied, and validated as scenarios of their own.

use super::*;

impl Scenario {
    /// Variant `i`'s patch, as the document has it (`Null` past the last variant).
    pub fn variant_patch(&self, i: usize) -> &Value {
        &self.doc["variants"][i]["patch"]
    }
    /// The scenario's document without `key`, copied for a patch (the copy skips what the patch may not see).
    pub(super) fn doc_without(&self, key: &str) -> Value {
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
}
