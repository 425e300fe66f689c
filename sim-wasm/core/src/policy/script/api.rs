//! The script API as users read it: the rows the engine checks scripts against ([`HOOKS`], [`RETURN_KEYS`],
//! [`HOST_FUNCTIONS`], the limits) written out as `docs/script-api.md`, which the page's policy editor shows too.
//! A test compares the file with [`reference`] and rewrites it under `SCHEDSIM_BLESS=1`, so the reference cannot
//! drift from what the engine does.

use super::engine::{
    BYTES_PER_OPERATION, MAX_ARRAY, MAX_CALLS_AT_ONE_INSTANT, MAX_CALL_LEVELS, MAX_EXPR_DEPTH, MAX_KEPT_CHARS,
    MAX_KEPT_DEPTH, MAX_KEPT_VALUES, MAX_LOG_LINES, MAX_MAP, MAX_OPERATIONS, MAX_RUN_OPERATIONS, MAX_SOURCE,
    MAX_STRING,
};
use super::{HOOKS, MAX_PERIOD_US, MAX_SLICE_US, MIN_PERIOD_US};
use std::fmt::Write as _;

/// A key of the map `do_schedule` returns; any other key is refused.
pub struct ReturnKey {
    pub name: &'static str,
    pub doc: &'static str,
}

pub const RETURN_KEYS: [ReturnKey; 3] = [
    ReturnKey {
        name: "next",
        doc: "The vCPU to run on `p`, or `()` (or left out) to leave `p` idle. It must be runnable (or `cur`) and \
              not running on another pCPU.",
    },
    ReturnKey {
        name: "slice_us",
        doc: "How long it may run before `do_schedule` is called again on `p` [us], an integer; required with a \
              `next`. Idle pCPUs are asked again after 1 ms when it is left out.",
    },
    ReturnKey { name: "reason", doc: "A line for the decision log (optional)." },
];

/// A function the engine gives every hook.
pub struct HostFunction {
    pub name: &'static str,
    pub params: &'static [&'static str],
    pub doc: &'static str,
}

pub const HOST_FUNCTIONS: [HostFunction; 9] = [
    HostFunction { name: "now", params: &[], doc: "Simulated time since boot [ns]." },
    HostFunction {
        name: "explaining",
        params: &[],
        doc: "Whether this run keeps a decision log (the page's detail, a trace): `do_schedule`'s `reason` and \
              `log` lines are read only then, so a script may build them only when this is `true`.",
    },
    HostFunction { name: "running", params: &["p"], doc: "The vCPU running on pCPU `p`, or `()`." },
    HostFunction {
        name: "resched",
        params: &["p"],
        doc: "Run `do_schedule` on pCPU `p` once the hook returns (to preempt what runs there).",
    },
    HostFunction { name: "pause", params: &["v"], doc: "Take vCPU `v` off the CPUs until `unpause(v)`." },
    HostFunction { name: "unpause", params: &["v"], doc: "Let a paused vCPU `v` run again." },
    HostFunction {
        name: "timer_at",
        params: &["ns"],
        doc: "Call the `timer` hook at that time since boot [ns] (a time past fires at once).",
    },
    HostFunction {
        name: "log",
        params: &["p", "text"],
        doc: "A line in pCPU `p`'s decision log (`print` and `debug` log on the hook's pCPU).",
    },
    HostFunction {
        name: "random",
        params: &[],
        doc: "A float in [0, 1) from the run's seeded stream: the same run draws the same numbers.",
    },
];

/// Numeric helpers beside the host functions (exact on every platform; no transcendental functions).
pub const NUMERIC_FUNCTIONS: &str = "`to_float(i)`, `to_int(x)`, `floor(x)`, `ceiling(x)`, `round(x)`, `sqrt(x)`, \
                                     `min(a, b)`, `max(a, b)`";

fn signature(name: &str, params: &[&str]) -> String {
    format!("{name}({})", params.join(", "))
}

/// `docs/script-api.md`: the whole reference.
pub fn reference() -> String {
    let mut s = String::new();
    s.push_str(
        "# Script policies: the API\n\n\
         <!-- Generated from sim-wasm/core/src/policy/script/ (api.rs and the hook table in mod.rs), the rows the \
         engine checks scripts against. Edit those and run `SCHEDSIM_BLESS=1 cargo test -p schedsim-core \
         script_api`; a test fails while this file differs. -->\n\n\
         A policy with `\"scheduler\": \"script\"` runs a scheduler written in [Rhai](https://rhai.rs). The same \
         script gives the same report in the page, from the CLI and from Python:\n\n\
         ```json\n\
         { \"id\": \"mine\", \"label\": \"My scheduler\", \"scheduler\": \"script\",\n  \
         \"params\": { \"source\": \"fn do_schedule(p, cur, runnable) { ... }\", \"vars\": { \"slice_ms\": 30 } } }\n\
         ```\n\n\
         vCPUs and pCPUs are integers (indices from 0); `()` means none. The templates (round robin, a Credit-like \
         fair share, EDF reservations) are in `sim-wasm/core/src/policy/script/templates/` and in the page's \
         \"New scheduler from template\".\n\n",
    );
    s.push_str(
        "## Hooks\n\nScript functions the engine calls. Only `do_schedule` is required; a hook the script does not \
         define does nothing. A hook with the wrong number of parameters is an error.\n\n\
         | Hook | Returns | When, and what it means |\n|---|---|---|\n",
    );
    for h in &HOOKS {
        let returns = if h.returns.is_empty() { "-".to_string() } else { format!("`{}`", h.returns) };
        let _ = writeln!(s, "| `fn {}` | {returns} | {} |", signature(h.name, h.params), h.doc);
    }
    s.push_str("\n## What `do_schedule` returns\n\n| Key | Meaning |\n|---|---|\n");
    for k in &RETURN_KEYS {
        let _ = writeln!(s, "| `{}` | {} |", k.name, k.doc);
    }
    let _ = writeln!(
        s,
        "\n`slice_us` is between 1 and {MAX_SLICE_US} (10 s). Anything else (another type, an unknown key, a vCPU that \
         is blocked, paused or running elsewhere) stops the run with a message naming the hook, the simulated time \
         and the script line."
    );
    s.push_str(
        "\n## `this`, `host` and `vars`\n\n\
         `this` is the policy's state, an object map that starts as `#{ host: HOST, vars: VARS }`. What the hooks \
         store there is kept between calls and copied into the engine's checkpoints, so it holds plain data \
         (numbers, strings, booleans, arrays, maps).\n\n\
         - `HOST` = `#{ pcpus: N, vcpus: [#{ domain: index, name: \"web.v0\" }], domains: [#{ name, weight, \
         cap_pct, vcpus: [v, ...], driver: bool }] }`.\n\
         - `VARS` = the policy's `params.vars` as given (numbers, strings or booleans). A scenario's `changes` set one \
         at run time (`\"param\": \"vars.slice_ms\"`), and sweeps reach them at `policies.ID.params.vars.NAME`.\n",
    );
    s.push_str("\n## Host functions\n\n| Function | What it does |\n|---|---|\n");
    for f in &HOST_FUNCTIONS {
        let _ = writeln!(s, "| `{}` | {} |", signature(f.name, f.params), f.doc);
    }
    let _ = writeln!(
        s,
        "\nAlso: {NUMERIC_FUNCTIONS}, and Rhai's strings, arrays and maps. Nothing else is reachable: no files, \
         network, clock or modules."
    );
    let _ = write!(
        s,
        "\n## Limits\n\n\
         | Limit | Value |\n|---|---|\n\
         | operations per hook call (an endless loop stops), copying counted: one per {BYTES_PER_OPERATION} bytes a \
         hook allocates | {MAX_OPERATIONS} |\n\
         | operations per run, all hook calls together | {MAX_RUN_OPERATIONS} |\n\
         | decision-log lines per run (`log`, `print`, `debug`; the rest are dropped and counted) | {MAX_LOG_LINES} |\n\
         | hook calls at one simulated instant (time must advance) | {MAX_CALLS_AT_ONE_INSTANT} |\n\
         | kept in `this` across calls, checked after each hook: values (array elements and map entries, nested \
         ones counted) / characters of strings / levels of nesting | {MAX_KEPT_VALUES} / {MAX_KEPT_CHARS} / \
         {MAX_KEPT_DEPTH} |\n\
         | nested function calls | {MAX_CALL_LEVELS} |\n\
         | expression depth (top level, inside functions) | {}, {} |\n\
         | elements of an array / of a map | {MAX_ARRAY} / {MAX_MAP} |\n\
         | characters of a string | {MAX_STRING} |\n\
         | source size [bytes] | {MAX_SOURCE} |\n\
         | `slice_us` | 1 to {MAX_SLICE_US} |\n\
         | `tick_us`, `account_us` | {MIN_PERIOD_US} to {MAX_PERIOD_US} |\n\n\
         A syntax error is a scenario error with its line and column. A runtime error, a limit or a bad return \
         stops that policy's run (the other columns go on) with one message: `script policy 'mine': do_schedule at \
         12.345 ms, line 7: ...`.\n",
        MAX_EXPR_DEPTH.0, MAX_EXPR_DEPTH.1
    );
    s.push_str(
        "\n## Running a script\n\n\
         - In the page: Script (or \"Edit as script\" on a column) opens the editor; the column re-runs when typing \
         pauses, and the share link carries the source.\n\
         - CLI: `schedsim run FILE --script ID=PATH` (also `check`, `sweep`, `bench`); for a homework, \
         `schedsim check scenarios/hw-mixed-response.json --script student=my.rhai` says which goals are met.\n\
         - Python: `schedsim.run(scenario, scripts={\"mine\": source})`.\n",
    );
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    /// docs/script-api.md is [`reference`]; `SCHEDSIM_BLESS=1 cargo test -p schedsim-core script_api` rewrites it.
    #[test]
    fn script_api_doc_matches_the_tables() {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../docs/script-api.md");
        let want = reference();
        if std::fs::read_to_string(&path).ok().as_deref() == Some(want.as_str()) {
            return;
        }
        if std::env::var_os("SCHEDSIM_BLESS").is_some() {
            std::fs::write(&path, want).unwrap();
            return;
        }
        panic!(
            "docs/script-api.md differs from the script API tables it is generated from; regenerate it with \
             SCHEDSIM_BLESS=1 cargo test -p schedsim-core script_api"
        );
    }

    /// Every documented host function is one the engine has, and every host function the engine registers
    /// beside the numeric helpers is documented.
    #[test]
    fn script_api_host_functions_are_the_engines() {
        let engine = super::super::engine::new_engine();
        // Outside a hook call the run's operation budget is spent; give these calls one.
        super::super::engine::IO.with(|io| io.borrow_mut().ops_left = u64::MAX);
        for f in &HOST_FUNCTIONS {
            let args = vec!["0"; f.params.len()].join(", ");
            let r = engine.eval::<rhai::Dynamic>(&format!("{}({args})", f.name));
            if let Err(e) = r {
                assert!(
                    !matches!(*e, rhai::EvalAltResult::ErrorFunctionNotFound(..)),
                    "{} is documented but not registered",
                    f.name
                );
            }
        }
        let missing = engine.eval::<rhai::Dynamic>("no_such_host_function()").unwrap_err();
        assert!(matches!(*missing, rhai::EvalAltResult::ErrorFunctionNotFound(..)), "{missing:?}");
        let src = include_str!("engine.rs");
        let host = &src[src.find("// The contract's host functions.").expect("the host functions' block")..];
        for name in host.split("register_fn(\"").skip(1).filter_map(|r| r.split('"').next()) {
            assert!(HOST_FUNCTIONS.iter().any(|f| f.name == name), "host function {name} is not documented");
        }
    }
}
