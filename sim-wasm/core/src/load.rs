//! Loading a scenario file: its format ([`crate::scenario`]) checked together with each scheduler's own rules
//! ([`crate::policy::registry`]). This layer sits above both so that the file format knows no scheduler and the
//! schedulers only read the format's types: `scenario` <- `policy` <- `load`, with no way back.

use crate::policy::registry::Registry;
use crate::scenario::{Scenario, ScenarioError};
use serde_json::Value;

impl Scenario {
    /// Parses and validates a scenario file (format, cross-field checks, every scheduler's rules, variants).
    pub fn from_json(text: &str) -> Result<Scenario, ScenarioError> {
        Scenario::parse_json(text, &Registry)
    }

    /// Validates an already-parsed JSON value as [`Scenario::from_json`] does.
    pub fn from_value(value: Value) -> Result<Scenario, ScenarioError> {
        Scenario::parse_value(value, &Registry)
    }

    /// The scenario with claim `k`'s ablation applied (see [`Scenario::ablated_with`]); `None` without one.
    pub fn ablated(&self, k: usize) -> Option<Result<Scenario, ScenarioError>> {
        self.ablated_with(k, &Registry)
    }
}
