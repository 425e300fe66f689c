//! Script templates: real schedulers written as a scheduler author would, for the page, the CLI and Python to
//! offer as starting points. Each is a Rhai source file beside this one and its default vars.

use serde_json::{json, Value};

/// A scheduler written in Rhai, ready to run as `scheduler: "script"`.
#[derive(Debug, Clone, Copy)]
pub struct Template {
    pub id: &'static str,
    pub title: &'static str,
    pub description: &'static str,
    pub source: &'static str,
    /// Default `params.vars`, as a JSON object.
    pub vars: &'static str,
}

impl Template {
    /// `params` for a policy running this template: `{ source, vars }`.
    pub fn params(&self) -> Value {
        let vars: Value = serde_json::from_str(self.vars).unwrap_or_else(|_| json!({}));
        json!({ "source": self.source, "vars": vars })
    }
}

/// Every template.
pub static TEMPLATES: &[Template] = &[
    Template {
        id: "round_robin",
        title: "Round robin",
        description: "Every vCPU runs for the same slice in turn; idle pCPUs take work from the longest queue.",
        source: include_str!("round_robin.rhai"),
        vars: r#"{ "slice_ms": 30 }"#,
    },
    Template {
        id: "fair_share",
        title: "Weighted fair share (Credit-like)",
        description: "Credits by weight every 30 ms, charged by 10 ms ticks; UNDER before OVER, BOOST on wake, caps \
                      enforced by parking.",
        source: include_str!("fair_share.rhai"),
        vars: r#"{ "tslice_ms": 30, "tick_ms": 10, "account_ms": 30, "boost": true, "weight_per_vcpu": false }"#,
    },
    Template {
        id: "edf",
        title: "EDF reservations",
        description: "Each vCPU is guaranteed slice_ms in every period_ms, earliest deadline first; spare time in \
                      turn.",
        source: include_str!("edf.rhai"),
        vars: r#"{ "slice_ms": 10, "period_ms": 40, "extra": true }"#,
    },
];
