//! `scheduler: "script"`: a scheduler the user wrote in Rhai, run inside the engine so that the same script gives
//! the same report natively, in the page and from Python. The contract is the design document's section 10:
//!
//! - Hooks are script functions, each optional but `do_schedule`: `init(host)`, `init_vcpu(v) -> p`,
//!   `wake(v, cause)`, `sleep(v)`, `do_schedule(p, cur, runnable) -> #{ next, slice_us, reason }`,
//!   `timers() -> #{ tick_us, account_us }`, `tick(p)`, `account()`, `timer()`, `event_sent(from, to)`,
//!   `runqueue(p) -> [v, ...]`, `vcpu_state(v) -> #{ pri, credit }`. vCPUs and pCPUs are integers, `()` is none.
//! - `this` is the policy's state, an object map that starts as `#{ host: HOST, vars: VARS }` and is copied with
//!   the policy into checkpoints (replays and focus windows rerun a scripted column exactly).
//! - Host functions: `now()`, `running(p)`, `resched(p)`, `pause(v)`, `unpause(v)`, `timer_at(ns)`,
//!   `log(p, text)`, `random()` (the run's seeded stream). `print`/`debug` write to the decision log. Nothing else
//!   is reachable: no files, network, clock or modules (see [`engine`]). The views (`runqueue`, `vcpu_state`) are
//!   read between events and may only read `this`: host functions fail there.
//! - `params.vars` are numbers, strings or booleans; scenario `changes` set `vars.NAME` (the name must exist and
//!   the type fit), and sweeps reach them at `policies.ID.params.vars.NAME`.
//! - A syntax error is a load error naming `policies[i].params.source: line L, column C`. At run time an error, a
//!   limit hit (operations per call, sizes, call depth) or a bad return value stops the run with one message
//!   naming the hook, the simulated time and the script line ([`Policy::take_fault`]).
//!
//! The script is compiled once per run; the engine and the AST are shared by the run's checkpoints. Hooks are
//! called with `this` bound in place (no copy per call). A call itself is cheap (an empty hook about 0.1 us); the
//! time goes to interpreting the script, around 0.1 us per Rhai operation: the fair-share template (some 100
//! operations per event) runs paper 000's Fig. 10 host 40-70x slower than native Credit (`schedsim bench`'s
//! `script_vs_credit`).

pub mod api;
mod engine;
mod templates;
#[cfg(test)]
mod tests;

pub use engine::{ScriptError, MAX_RUN_OPERATIONS};
pub use templates::{Template, TEMPLATES};

use super::params::{self, Params};
use super::{Action, Ctx, DomainInfo, Pick, Policy, Pri, Timers, VcpuSched, WakeCause};
use crate::model::{PcpuId, VcpuId};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::rng::Stream;
use crate::scenario::Scenario;
use crate::time::Nanos;
use engine::IO;
use rhai::{CallFnOptions, Dynamic, Engine, FuncArgs, Map, Scope, AST};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::cell::{Cell, RefCell};
use std::fmt::Write as _;
use std::sync::Arc;

/// Longest slice a decision may ask for [us] (10 s): more is a mistake, not a policy.
pub const MAX_SLICE_US: i64 = 10_000_000;
/// Shortest and longest periodic timer [us].
pub const MIN_PERIOD_US: i64 = 100;
pub const MAX_PERIOD_US: i64 = 10_000_000;

/// The hooks, in the order of [`HOOKS`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Hook {
    Init,
    InitVcpu,
    Wake,
    Sleep,
    DoSchedule,
    Timers,
    Tick,
    Account,
    Timer,
    EventSent,
    Runqueue,
    VcpuState,
}

/// A hook as scripts see it: the engine checks a script's functions against `name` and `params`, and the user's
/// reference (docs/script-api.md, [`api::reference`]) is written from the same rows.
pub struct HookSpec {
    hook: Hook,
    pub name: &'static str,
    pub params: &'static [&'static str],
    /// What the hook returns, or "" when the engine ignores its value.
    pub returns: &'static str,
    pub doc: &'static str,
}

/// Every hook, in the order of [`Hook`].
pub const HOOKS: [HookSpec; 12] = [
    HookSpec {
        hook: Hook::Init,
        name: "init",
        params: &["host"],
        returns: "",
        doc: "Once, before any other hook. `host` is `this.host` (below).",
    },
    HookSpec {
        hook: Hook::InitVcpu,
        name: "init_vcpu",
        params: &["v"],
        returns: "p",
        doc: "The pCPU vCPU `v` starts on (default: `v % host.pcpus`).",
    },
    HookSpec {
        hook: Hook::Wake,
        name: "wake",
        params: &["v", "cause"],
        returns: "",
        doc: "`v` became runnable; `cause` is the engine's wake cause as a string (\"boot\", \"timer\", \"net rx\", \
              \"block I/O done\", \"unpark\", ...). Without this hook idle pCPUs look for work when a vCPU wakes.",
    },
    HookSpec {
        hook: Hook::Sleep,
        name: "sleep",
        params: &["v"],
        returns: "",
        doc: "`v` blocked or was paused (if it is running, the engine reschedules its pCPU).",
    },
    HookSpec {
        hook: Hook::DoSchedule,
        name: "do_schedule",
        params: &["p", "cur", "runnable"],
        returns: "#{ next: v or (), slice_us: N, reason: \"text\" }",
        doc: "Required. Picks what pCPU `p` runs next. `cur` is the vCPU that ran on `p` until now, or `()`; \
              `runnable` says whether it could go on. The return map is described below.",
    },
    HookSpec {
        hook: Hook::Timers,
        name: "timers",
        params: &[],
        returns: "#{ tick_us: N, account_us: N }",
        doc: "The periodic hooks wanted (either key may be left out; the periods are bounded, see Limits).",
    },
    HookSpec { hook: Hook::Tick, name: "tick", params: &["p"], returns: "", doc: "Every `tick_us` on each pCPU." },
    HookSpec { hook: Hook::Account, name: "account", params: &[], returns: "", doc: "Every `account_us`, on pCPU 0." },
    HookSpec {
        hook: Hook::Timer,
        name: "timer",
        params: &[],
        returns: "",
        doc: "The time asked for with `timer_at(ns)` has come.",
    },
    HookSpec {
        hook: Hook::EventSent,
        name: "event_sent",
        params: &["from", "to"],
        returns: "",
        doc: "An event-channel notification from vCPU `from` to vCPU `to`.",
    },
    HookSpec {
        hook: Hook::Runqueue,
        name: "runqueue",
        params: &["p"],
        returns: "[v, ...]",
        doc: "What the run-queue view shows queued on `p`, in run order. Read between events: it may only read \
              `this` (host functions fail here).",
    },
    HookSpec {
        hook: Hook::VcpuState,
        name: "vcpu_state",
        params: &["v"],
        returns: "#{ pri: \"UNDER\", credit: N }",
        doc: "What the views and the log show for `v` (`credit` optional). Read between events, like `runqueue`.",
    },
];

impl Hook {
    fn name(self) -> &'static str {
        HOOKS[self as usize].name
    }
}

/// A compiled script: what every copy of a run's policy shares.
struct Shared {
    engine: Engine,
    ast: AST,
    /// Which hooks the script defines (with the right number of parameters).
    defined: [bool; HOOKS.len()],
    /// The line of each hook's `fn`, for errors in what it returned.
    lines: [usize; HOOKS.len()],
    /// Where each hook may return from ([`return_sites`]), to name the line of a bad return.
    returns: Vec<Vec<(usize, String)>>,
    /// The policy's id, for messages.
    id: String,
}

/// Compiles a script and checks its hooks: the script's problems as one message each.
fn compile(engine: &Engine, src: &str) -> Result<(AST, [bool; HOOKS.len()], [usize; HOOKS.len()]), ScriptError> {
    let ast = engine::compile(engine, src)?;
    let mut defined = [false; HOOKS.len()];
    let mut lines = [0; HOOKS.len()];
    for &HookSpec { hook, name, params, .. } in &HOOKS {
        let arities: Vec<usize> = ast.iter_functions().filter(|f| f.name == name).map(|f| f.params.len()).collect();
        let line = fn_line(src, name);
        lines[hook as usize] = line;
        if arities.contains(&params.len()) {
            defined[hook as usize] = true;
        } else if let Some(n) = arities.first() {
            return Err(ScriptError {
                line,
                column: 1,
                message: format!("fn {name} takes {} parameters ({}), not {n}", params.len(), params.join(", ")),
            });
        }
    }
    if !defined[Hook::DoSchedule as usize] {
        return Err(ScriptError {
            line: 1,
            column: 1,
            message: "the script has no fn do_schedule(p, cur, runnable), the one hook every scheduler needs"
                .to_string(),
        });
    }
    Ok((ast, defined, lines))
}

/// The line where `fn NAME(` is defined (1-based), 0 if not found.
fn fn_line(src: &str, name: &str) -> usize {
    src.lines()
        .position(|l| {
            let l = l.trim_start();
            let l = l.strip_prefix("private ").map_or(l, str::trim_start);
            l.strip_prefix("fn ")
                .is_some_and(|r| r.trim_start().strip_prefix(name).is_some_and(|r| r.trim_start().starts_with('(')))
        })
        .map_or(0, |i| i + 1)
}

/// Where a hook's body may return from, as (line, that line's text): each `return` and the body's last
/// expression, read off the source (the AST keeps no positions of values). Strings and comments are skipped.
fn return_sites(src: &str, fn_line: usize) -> Vec<(usize, String)> {
    if fn_line == 0 {
        return Vec::new();
    }
    let lines: Vec<&str> = src.lines().collect();
    let bytes = src.as_bytes();
    let start = if fn_line == 1 {
        0
    } else {
        bytes.iter().enumerate().filter(|&(_, &b)| b == b'\n').nth(fn_line - 2).map_or(bytes.len(), |(j, _)| j + 1)
    };
    let (mut depth, mut i, mut line) = (0usize, start, fn_line);
    let (mut opened, mut last) = (false, None::<(usize, u8)>);
    let mut sites: Vec<usize> = Vec::new();
    let mut maps: Vec<bool> = Vec::new();
    while i < bytes.len() {
        let c = bytes[i];
        match c {
            b'\n' => line += 1,
            b'"' | b'`' | b'\'' => {
                i += 1;
                while i < bytes.len() && bytes[i] != c {
                    if bytes[i] == b'\\' {
                        i += 1;
                    } else if bytes[i] == b'\n' {
                        line += 1;
                    }
                    i += 1;
                }
                last = Some((line, c));
            }
            b'/' if bytes.get(i + 1) == Some(&b'/') => {
                while i < bytes.len() && bytes[i] != b'\n' {
                    i += 1;
                }
                continue;
            }
            b'{' => {
                depth += 1;
                opened = true;
                maps.push(i > 0 && bytes[i - 1] == b'#');
            }
            b'}' if opened => {
                depth -= 1;
                // A map literal's `}` ends an expression; a block's ends a statement (an if/else, a loop).
                if maps.pop() == Some(true) {
                    last = Some((line, b'm'));
                    i += 1;
                    continue;
                }
                if depth == 0 {
                    // The body's last expression, unless it ends in a block (an if/else, a loop) or a `;`.
                    if let Some((l, _)) = last.filter(|&(_, ch)| ch != b'}' && ch != b';') {
                        if !sites.contains(&l) {
                            sites.push(l);
                        }
                    }
                    break;
                }
            }
            _ => {}
        }
        if opened && depth > 0 && bytes[i..].starts_with(b"return") {
            let before = i.checked_sub(1).map(|j| bytes[j]);
            let after = bytes.get(i + 6).copied();
            let word = |b: Option<u8>| b.is_some_and(|b| b.is_ascii_alphanumeric() || b == b'_');
            if !word(before) && !word(after) && !sites.contains(&line) {
                sites.push(line);
            }
        }
        if opened && depth > 0 && !c.is_ascii_whitespace() && !(c == b'{' && depth == 1 && last.is_none()) {
            last = Some((line, c));
        }
        i += 1;
    }
    sites.sort_unstable();
    sites.into_iter().filter_map(|l| lines.get(l - 1).map(|t| (l, t.to_string()))).collect()
}

/// Checks a script's syntax and hooks without running it (the page's editor, the CLI's `--script`).
pub fn check_source(src: &str) -> Result<(), ScriptError> {
    compile(&engine::new_engine(), src).map(|_| ())
}

/// A JSON scalar as a script value.
fn to_dynamic(v: &Value) -> Option<Dynamic> {
    match v {
        Value::Bool(b) => Some(Dynamic::from(*b)),
        Value::String(s) => Some(Dynamic::from(s.clone())),
        Value::Number(n) => Some(match n.as_i64() {
            Some(i) => Dynamic::from(i),
            None => Dynamic::from(n.as_f64()?),
        }),
        _ => None,
    }
}

/// What kind of scalar a var is, for type checks of changes.
fn kind(v: &Value) -> &'static str {
    match v {
        Value::Bool(_) => "a boolean",
        Value::String(_) => "a string",
        Value::Number(_) => "a number",
        _ => "not a number, string or boolean",
    }
}

/// A policy the user writes: its scheduler in Rhai and the values it reads.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(transform = source_required)]
pub struct ScriptParams {
    /// The scheduler, in Rhai: script functions for the hooks (do_schedule required; init, init_vcpu, wake,
    /// sleep, timers, tick, account, timer, event_sent, runqueue, vcpu_state optional). See the design document's
    /// section on script policies.
    #[schemars(length(max = 200_000))]
    pub source: String,
    /// Values the script reads as this.vars.NAME; scenario changes set them with param "vars.NAME".
    #[schemars(extend("additionalProperties" = {"type": ["number", "string", "boolean"]}))]
    pub vars: serde_json::Map<String, Value>,
}

/// The source has no default: a file must give it.
fn source_required(schema: &mut schemars::Schema) {
    if let Some(source) = schema.get_mut("properties").and_then(|p| p.get_mut("source")).and_then(Value::as_object_mut)
    {
        source.remove("default");
    }
    schema.insert("required".into(), serde_json::json!(["source"]));
}

impl Params for ScriptParams {
    const SCHEDULER: &'static str = "script";
    const DEF: &'static str = "script_params";
    /// The script is compiled once, at boot.
    const FIXED: &'static [&'static str] = &["source"];
}

/// A policy's `params` read against the declaration: the source given, each var a number, string or boolean.
fn params_of(params: &Value) -> Result<ScriptParams, String> {
    if params.get("source").is_none() {
        return Err("source: the script's text is required".to_string());
    }
    let p: ScriptParams = params::from_value(params)?;
    for (k, v) in &p.vars {
        if to_dynamic(v).is_none() {
            return Err(format!("vars.{k}: a var is a number, a string or a boolean"));
        }
    }
    Ok(p)
}

/// The parameter a change may set: `vars.NAME`.
fn var_name(param: &str) -> Result<&str, String> {
    param
        .strip_prefix("vars.")
        .filter(|n| !n.is_empty())
        .ok_or_else(|| format!("script: only vars change at run time ('vars.NAME'), not '{param}'"))
}

/// Checks that `param` names a var and `value` is a scalar (the var's existence and type are checked against the
/// policy's params by [`check_scenario`]).
pub fn check_param(param: &str, value: &Value) -> Result<(), String> {
    var_name(param)?;
    let _ = to_dynamic(value).ok_or_else(|| format!("{param}: a var is a number, a string or a boolean"))?;
    params::change(&mut ScriptParams::default(), param, value)
}

/// Load-time checks of policy `i`: the script compiles, its hooks take the right parameters, and each change of
/// this policy names a var it has, with a value of the var's type.
pub fn check_scenario(sc: &Scenario, i: usize, problems: &mut Vec<String>) {
    let pol = &sc.policies[i];
    let ScriptParams { source, vars } = match params_of(&pol.params) {
        Ok(p) => p,
        Err(e) => return problems.push(format!("policies[{i}].params.{e}")),
    };
    if let Err(e) = check_source(&source) {
        problems.push(format!("policies[{i}].params.source: {e}"));
    }
    for (k, c) in sc.changes.iter().enumerate().filter(|(_, c)| c.policy == pol.id) {
        let Ok(name) = var_name(&c.param) else { continue };
        match vars.get(name) {
            None => problems.push(format!(
                "changes[{k}].param: policy '{}' has no var '{name}' (its vars: {})",
                pol.id,
                vars.keys().cloned().collect::<Vec<_>>().join(", ")
            )),
            Some(v) if kind(v) != kind(&c.value) => problems.push(format!(
                "changes[{k}].value: var '{name}' of policy '{}' is {}, the change gives {}",
                pol.id,
                kind(v),
                kind(&c.value)
            )),
            Some(_) => {}
        }
    }
}

/// A script policy: the shared compiled script and this run's state.
#[derive(Clone)]
pub struct Script {
    shared: Arc<Shared>,
    /// The script's `this`. In a cell because the views (`runqueue`, `vcpu_state`) call the script through `&self`.
    this: RefCell<Dynamic>,
    /// The stream `random()` draws from (lent to the engine during a call).
    rng: Option<Stream>,
    pcpus: usize,
    /// Whether each vCPU is runnable and off its pCPU or running, as the wake and sleep hooks said: what a
    /// decision may pick.
    runnable: Vec<bool>,
    versions: Vec<u64>,
    timers: Timers,
    /// The first error, waiting for the engine to take it; once set, the script is not called again.
    fault: RefCell<Option<String>>,
    failed: Cell<bool>,
    /// The time of the last hook with a context [ns], for the views' errors.
    last_now: Cell<u64>,
    /// What `init` asked for, carried out with the first hook that has a context.
    pending: Vec<Action>,
    pending_logs: Vec<(usize, String)>,
    /// What the run has spent of its bounds (copied into checkpoints with the rest).
    spent: Cell<Spent>,
}

#[cfg(test)]
thread_local! {
    /// A smaller run budget for a test on this thread (the real one takes minutes to spend).
    static RUN_OPERATIONS: Cell<u64> = const { Cell::new(engine::MAX_RUN_OPERATIONS) };
}

fn run_operations() -> u64 {
    #[cfg(test)]
    return RUN_OPERATIONS.with(Cell::get);
    #[cfg(not(test))]
    engine::MAX_RUN_OPERATIONS
}

/// A run's use of the bounds that hold for a whole run rather than one call.
#[derive(Debug, Clone, Copy, Default)]
struct Spent {
    ops: u64,
    log_lines: u64,
    dropped: u64,
    /// The instant of the last hook call with a context [ns] and the calls made at it.
    at: u64,
    calls_at: u64,
}

impl Script {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo], seed: u64, id: &str) -> Result<Script, String> {
        let ScriptParams { source, vars } = params_of(params)?;
        let engine = engine::new_engine();
        let (ast, defined, lines) = compile(&engine, &source).map_err(|e| format!("source: {e}"))?;
        let nvcpus = domains.iter().map(|d| d.vcpus.len()).sum();
        let host = host_map(pcpus, domains, nvcpus);
        let mut this = Map::new();
        this.insert("host".into(), host.clone());
        this.insert(
            "vars".into(),
            Dynamic::from_map(vars.iter().filter_map(|(k, v)| Some((k.into(), to_dynamic(v)?))).collect()),
        );
        let mut s = Script {
            shared: Arc::new(Shared {
                returns: lines.iter().map(|&l| return_sites(&source, l)).collect(),
                engine,
                ast,
                defined,
                lines,
                id: id.to_string(),
            }),
            this: RefCell::new(Dynamic::from_map(this)),
            rng: Some(Stream::new(seed, &format!("script/{id}"))),
            pcpus,
            runnable: vec![false; nvcpus],
            versions: vec![0; pcpus],
            timers: Timers { timer_slop: true, ..Timers::default() },
            fault: RefCell::new(None),
            failed: Cell::new(false),
            last_now: Cell::new(0),
            pending: Vec::new(),
            pending_logs: Vec::new(),
            spent: Cell::new(Spent::default()),
        };
        // `init` and `timers` run before the host boots, at time 0 with every pCPU idle.
        let idle = vec![None; pcpus];
        let boot = Boot { now: 0, running: &idle, explain: true, pcpu: 0 };
        IO.with(|c| c.borrow_mut().rng = s.rng.take());
        if s.shared.defined[Hook::Init as usize] {
            let mut out = (Vec::new(), Vec::new());
            let r = s.call_raw(Hook::Init, Some(&boot), &mut out, (host,));
            (s.pending, s.pending_logs) = out;
            if let Err(e) = r {
                s.fail(Hook::Init, e);
            }
        }
        if !s.failed.get() && s.shared.defined[Hook::Timers as usize] {
            let mut out = (Vec::new(), Vec::new());
            match s.call_raw(Hook::Timers, Some(&boot), &mut out, ()) {
                Ok(t) => match parse_timers(&t) {
                    Ok((tick, account)) => {
                        s.timers.tick = tick;
                        s.timers.account = account;
                    }
                    Err(e) => s.fail(Hook::Timers, (s.shared.lines[Hook::Timers as usize], e)),
                },
                Err(e) => s.fail(Hook::Timers, e),
            }
        }
        s.rng = IO.with(|c| c.borrow_mut().rng.take());
        Ok(s)
    }

    /// Records the first fault: `script policy 'ID': HOOK at T ms, line L: MESSAGE`. An error without a position
    /// (a limit hit between statements) names the hook's `fn` line.
    fn fail(&self, hook: Hook, (line, msg): (usize, String)) {
        if self.failed.replace(true) {
            return;
        }
        let line = if line > 0 { line } else { self.shared.lines[hook as usize] };
        let ms = self.last_now.get() as f64 / 1e6;
        let line = if line > 0 { format!(", line {line}") } else { String::new() };
        *self.fault.borrow_mut() =
            Some(format!("script policy '{}': {} at {ms:.3} ms{line}: {msg}", self.shared.id, hook.name()));
    }

    /// A bad return value of `hook`: the fault names the line it was returned from when the source leaves one
    /// place it can have come from (of the hook's returns, those that write a map when it is one, and name the
    /// key at fault), else the hook's `fn` line.
    fn bad_return(&self, hook: Hook, value: Option<&Dynamic>, msg: String) {
        let sites = &self.shared.returns[hook as usize];
        let mut fit: Vec<&(usize, String)> = sites.iter().collect();
        let mut narrow = |keep: &dyn Fn(&str) -> bool| {
            let kept: Vec<_> = fit.iter().copied().filter(|(_, t)| keep(t)).collect();
            if !kept.is_empty() {
                fit = kept;
            }
        };
        if let Some(v) = value {
            let map = v.is_map();
            narrow(&|t: &str| t.contains("#{") == map);
        }
        if let Some(key) = ["slice_us", "next", "reason", "pri", "credit"].iter().find(|k| msg.starts_with(*k)) {
            narrow(&|t: &str| t.contains(key));
        }
        let line = match fit.as_slice() {
            [(l, _)] => *l,
            _ => self.shared.lines[hook as usize],
        };
        self.fail(hook, (line, msg));
    }

    /// Calls a hook with `this` bound. `io` is the hook's view of the host (None: the host functions refuse);
    /// what it asks for goes to `out` (actions, log lines). An error comes back as (line, message).
    fn call_raw(
        &self,
        hook: Hook,
        io: Option<&Boot>,
        out: &mut (Vec<Action>, Vec<(usize, String)>),
        args: impl FuncArgs,
    ) -> Result<Dynamic, (usize, String)> {
        IO.with(|cell| {
            let mut c = cell.borrow_mut();
            c.active = io.is_some();
            if let Some(b) = io {
                c.now = b.now;
                c.pcpus = self.pcpus;
                c.vcpus = self.runnable.len();
                c.running.clear();
                c.running.extend(b.running.iter().map(|r| r.map(|v| v.0)));
                c.explain = b.explain;
                c.pcpu = b.pcpu;
            }
            c.actions.clear();
            c.logs.clear();
            let spent = self.spent.get();
            c.ops_left = run_operations().saturating_sub(spent.ops);
            c.ops = 0;
            c.log_room = engine::MAX_LOG_LINES.saturating_sub(spent.log_lines);
            c.dropped = 0;
            engine::CALL_OPS.with(|o| o.set(0));
            // Last: the setup's own allocations are not the script's.
            c.bytes0 = crate::allocated::bytes();
        });
        let mut this = self.this.borrow_mut();
        let opts = CallFnOptions::new().eval_ast(false).rewind_scope(true).bind_this_ptr(&mut this);
        let r = self.shared.engine.call_fn_with_options::<Dynamic>(
            opts,
            &mut Scope::new(),
            &self.shared.ast,
            hook.name(),
            args,
        );
        // What the script keeps, checked once the call is over (a call's own values are bounded by the engine);
        // the walk is work the script causes, charged to the run.
        let mut kept = Kept::default();
        let r = r.map_err(|e| engine::runtime_error(&e)).and_then(|v| match kept.walk(&this, 1) {
            Ok(()) => Ok(v),
            Err(what) => Err((0, format!("{what} after the call: {}", kept_rule()))),
        });
        drop(this);
        IO.with(|cell| {
            let mut c = cell.borrow_mut();
            c.active = false;
            let mut spent = self.spent.get();
            // The call's operations: the engine's count at its last one, and its copying since the last look.
            let copied = crate::allocated::bytes().wrapping_sub(c.bytes0) / engine::BYTES_PER_OPERATION;
            let ops = engine::CALL_OPS.with(Cell::get).saturating_add(copied).max(c.ops);
            spent.ops += ops + (kept.values / engine::KEPT_VALUES_PER_OPERATION) as u64;
            if r.is_ok() {
                spent.log_lines += c.logs.len() as u64;
                out.0.append(&mut c.actions);
                out.1.append(&mut c.logs);
                // The lines dropped, said once per power of ten of them so that the notes stay few.
                let before = spent.dropped;
                spent.dropped += c.dropped;
                if c.dropped > 0 && (before == 0 || spent.dropped.ilog10() > before.ilog10()) {
                    let text = format!(
                        "{} lines dropped: a script writes at most {} lines to a run's decision log",
                        spent.dropped,
                        engine::MAX_LOG_LINES
                    );
                    out.1.push((c.pcpu, text));
                }
            }
            self.spent.set(spent);
        });
        r
    }

    /// Calls a hook that has the engine's context: carries out what `init` left, lends the random stream, hands
    /// the hook's actions and log lines to `ctx`. None when the hook is missing or failed (the fault is kept).
    fn call(&mut self, hook: Hook, ctx: &mut Ctx, pcpu: usize, args: impl FuncArgs) -> Option<Dynamic> {
        if !self.pending.is_empty() || !self.pending_logs.is_empty() {
            ctx.actions.append(&mut self.pending);
            for (p, s) in self.pending_logs.drain(..) {
                ctx.note(PcpuId(p), |w| w.write_str(&s));
            }
        }
        if self.failed.get() || !self.shared.defined[hook as usize] {
            return None;
        }
        self.last_now.set(ctx.now.0);
        let mut spent = self.spent.get();
        if spent.at == ctx.now.0 {
            spent.calls_at += 1;
        } else {
            (spent.at, spent.calls_at) = (ctx.now.0, 1);
        }
        self.spent.set(spent);
        if spent.calls_at > engine::MAX_CALLS_AT_ONE_INSTANT {
            let msg = format!(
                "more than {} hook calls at one simulated instant: the script keeps time from advancing (a \
                 storm of timer_at(now()) or resched?)",
                engine::MAX_CALLS_AT_ONE_INSTANT
            );
            self.fail(hook, (self.shared.lines[hook as usize], msg));
            return None;
        }
        if self.shared.defined[Hook::Runqueue as usize] || self.shared.defined[Hook::VcpuState as usize] {
            // Any hook may change what the views show.
            for v in &mut self.versions {
                *v += 1;
            }
        }
        let boot = Boot { now: ctx.now.0, running: ctx.host.running, explain: ctx.explain, pcpu };
        IO.with(|c| c.borrow_mut().rng = self.rng.take());
        let mut out = (Vec::new(), Vec::new());
        let r = self.call_raw(hook, Some(&boot), &mut out, args);
        self.rng = IO.with(|c| c.borrow_mut().rng.take());
        ctx.actions.append(&mut out.0);
        for (p, s) in out.1 {
            ctx.note(PcpuId(p), |w| w.write_str(&s));
        }
        match r {
            Ok(v) => Some(v),
            Err(e) => {
                self.fail(hook, e);
                None
            }
        }
    }

    /// Calls a view hook (no context: the host functions refuse).
    fn call_view(&self, hook: Hook, arg: i64) -> Option<Dynamic> {
        if self.failed.get() || !self.shared.defined[hook as usize] {
            return None;
        }
        match self.call_raw(hook, None, &mut (Vec::new(), Vec::new()), (arg,)) {
            Ok(v) => Some(v),
            Err(e) => {
                self.fail(hook, e);
                None
            }
        }
    }

    fn vcpu(&self, d: &Dynamic) -> Option<usize> {
        d.as_int().ok().and_then(|v| usize::try_from(v).ok()).filter(|&v| v < self.runnable.len())
    }

    /// Checks what `do_schedule` returned on `p`.
    fn decision(&self, d: &Dynamic, p: PcpuId, cur: Option<VcpuId>, ctx: &Ctx) -> Result<Pick, String> {
        let Some(m) = d.read_lock::<Map>() else {
            return Err(format!(
                "returned {} ({d}), not #{{ next: v or (), slice_us: N, reason: \"text\" }}",
                d.type_name()
            ));
        };
        if let Some(k) = m.keys().find(|k| !api::RETURN_KEYS.iter().any(|r| r.name == k.as_str())) {
            return Err(format!("returned a map with key '{k}' (the keys are next, slice_us, reason)"));
        }
        let next = match m.get("next") {
            None => None,
            Some(n) if n.is_unit() => None,
            Some(n) => Some(
                self.vcpu(n).ok_or_else(|| format!("next: {n} is not a vCPU (0..{} or ())", self.runnable.len()))?,
            ),
        };
        let slice = match m.get("slice_us") {
            Some(s) => match s.as_int() {
                Ok(us) if (1..=MAX_SLICE_US).contains(&us) => Nanos::from_us(us as u64),
                Ok(us) => return Err(format!("slice_us: {us} us is not in 1..{MAX_SLICE_US}")),
                Err(t) => return Err(format!("slice_us: an integer number of microseconds, not {t}")),
            },
            None if next.is_some() => return Err("slice_us is missing: how long may the vCPU run?".to_string()),
            None => Nanos::from_ms(1),
        };
        if let Some(n) = next {
            let name = &ctx.host.vcpu_name[n];
            if let Some(q) = ctx.host.running.iter().position(|&r| r == Some(VcpuId(n))).filter(|&q| q != p.0) {
                return Err(format!("next: vCPU {n} ({name}) runs on pCPU {q}"));
            }
            if Some(VcpuId(n)) != cur && !self.runnable[n] {
                return Err(format!("next: vCPU {n} ({name}) is not runnable (blocked or paused)"));
            }
        }
        let reason = match m.get("reason") {
            None => String::new(),
            Some(r) => match r.read_lock::<rhai::ImmutableString>() {
                Some(s) => s.to_string(),
                None => r.to_string(),
            },
        };
        Ok(Pick { next: next.map(VcpuId), slice, reason })
    }
}

/// A hook's view of the host while it runs.
struct Boot<'a> {
    now: u64,
    running: &'a [Option<VcpuId>],
    explain: bool,
    pcpu: usize,
}

/// `HOST`: `#{ pcpus, vcpus: [#{ domain, name }], domains: [#{ name, weight, cap_pct, vcpus, driver }] }`.
fn host_map(pcpus: usize, domains: &[DomainInfo], nvcpus: usize) -> Dynamic {
    let mut vcpus = vec![Dynamic::UNIT; nvcpus];
    let mut doms = rhai::Array::new();
    for (d, info) in domains.iter().enumerate() {
        for (k, v) in info.vcpus.iter().enumerate() {
            let mut m = Map::new();
            m.insert("domain".into(), Dynamic::from(d as i64));
            m.insert("name".into(), Dynamic::from(format!("{}.v{k}", info.name)));
            vcpus[v.0] = Dynamic::from_map(m);
        }
        let mut m = Map::new();
        m.insert("name".into(), Dynamic::from(info.name.clone()));
        m.insert("weight".into(), Dynamic::from(i64::from(info.weight)));
        m.insert("cap_pct".into(), Dynamic::from(i64::from(info.cap_pct)));
        m.insert("vcpus".into(), Dynamic::from_array(info.vcpus.iter().map(|v| Dynamic::from(v.0 as i64)).collect()));
        m.insert("driver".into(), Dynamic::from(info.is_driver));
        doms.push(Dynamic::from_map(m));
    }
    let mut host = Map::new();
    host.insert("pcpus".into(), Dynamic::from(pcpus as i64));
    host.insert("vcpus".into(), Dynamic::from_array(vcpus));
    host.insert("domains".into(), Dynamic::from_array(doms));
    Dynamic::from_map(host)
}

/// `timers()`'s map: the tick and accounting periods asked for.
fn parse_timers(t: &Dynamic) -> Result<(Option<Nanos>, Option<Nanos>), String> {
    let Some(m) = t.read_lock::<Map>() else {
        return Err(format!("returned {}, not #{{ tick_us: N, account_us: N }}", t.type_name()));
    };
    let mut out = (None, None);
    for (k, v) in m.iter() {
        let us = match v.as_int() {
            Ok(us) if (MIN_PERIOD_US..=MAX_PERIOD_US).contains(&us) => Nanos::from_us(us as u64),
            _ => return Err(format!("{k}: {v} is not a period in {MIN_PERIOD_US}..{MAX_PERIOD_US} us")),
        };
        match k.as_str() {
            "tick_us" => out.0 = Some(us),
            "account_us" => out.1 = Some(us),
            _ => return Err(format!("returned a map with key '{k}' (the keys are tick_us, account_us)")),
        }
    }
    Ok(out)
}

/// A script's priority label as the views show it: classed by its name (BOOST, UNDER, OVER, ... style as Credit's
/// do; see `PriClass::of_label`). Common labels borrow a static string; others are cut to 24 characters, since the
/// trace interns the labels it keeps up to a bound.
fn pri_of(label: &str) -> Pri {
    const KNOWN: &[&str] = &["BOOST", "UNDER", "OVER", "IDLE", "PARKED", "BLOCKED", "WAIT", ""];
    match KNOWN.iter().find(|k| **k == label) {
        Some(k) => Pri::from_label(*k),
        None => Pri::from_label(label.chars().take(24).collect::<String>()),
    }
}

impl Policy for Script {
    fn timers(&self) -> Timers {
        self.timers
    }

    fn init_vcpu(&mut self, v: VcpuId, ctx: &mut Ctx) -> PcpuId {
        let default = PcpuId(v.0 % self.pcpus.max(1));
        match self.call(Hook::InitVcpu, ctx, 0, (v.0 as i64,)) {
            Some(p) if p.is_unit() => default,
            Some(p) => match p.as_int().ok().and_then(|p| usize::try_from(p).ok()).filter(|&p| p < self.pcpus) {
                Some(p) => PcpuId(p),
                None => {
                    self.bad_return(
                        Hook::InitVcpu,
                        None,
                        format!("returned {p}, not a pCPU (0..{}) or ()", self.pcpus),
                    );
                    default
                }
            },
            None => default,
        }
    }

    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        self.runnable[v.0] = true;
        if !self.shared.defined[Hook::Wake as usize] {
            // Without a `wake` hook the idle pCPUs look for work, so a script of `do_schedule` alone (the one hook
            // the contract requires) runs what becomes runnable.
            for p in 0..self.pcpus {
                if ctx.host.running[p].is_none() {
                    ctx.resched(PcpuId(p));
                }
            }
            return;
        }
        let cause = rhai::ImmutableString::from(cause.to_string());
        self.call(Hook::Wake, ctx, 0, (v.0 as i64, cause));
    }

    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        self.runnable[v.0] = false;
        self.call(Hook::Sleep, ctx, 0, (v.0 as i64,));
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        if let Some(c) = cur {
            self.runnable[c.0] = cur_runnable;
        }
        let cur_arg = cur.map_or(Dynamic::UNIT, |c| Dynamic::from(c.0 as i64));
        let idle = Pick { next: None, slice: Nanos::from_ms(1), reason: String::new() };
        let Some(d) = self.call(Hook::DoSchedule, ctx, p.0, (p.0 as i64, cur_arg, cur_runnable)) else {
            return idle;
        };
        match self.decision(&d, p, cur, ctx) {
            Ok(d) => d,
            Err(e) => {
                self.bad_return(Hook::DoSchedule, Some(&d), e);
                idle
            }
        }
    }

    fn tick(&mut self, p: PcpuId, ctx: &mut Ctx) {
        self.call(Hook::Tick, ctx, p.0, (p.0 as i64,));
    }

    fn account(&mut self, ctx: &mut Ctx) {
        self.call(Hook::Account, ctx, 0, ());
    }

    fn timer(&mut self, ctx: &mut Ctx) {
        self.call(Hook::Timer, ctx, 0, ());
    }

    fn event_sent(&mut self, from: VcpuId, to: VcpuId, ctx: &mut Ctx) {
        self.call(Hook::EventSent, ctx, 0, (from.0 as i64, to.0 as i64));
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        let name = var_name(param)?;
        let new = to_dynamic(value).ok_or_else(|| format!("{param}: a var is a number, a string or a boolean"))?;
        let mut this = self.this.borrow_mut();
        let mut this = this.as_map_mut().map_err(|_| "script: `this` is no longer a map".to_string())?;
        let vars = this.entry("vars".into()).or_insert_with(|| Dynamic::from_map(Map::new()));
        let mut vars = vars.as_map_mut().map_err(|_| "script: `this.vars` is no longer a map".to_string())?;
        vars.insert(name.into(), new);
        for v in &mut self.versions {
            *v += 1;
        }
        Ok(())
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let none = || VcpuSched { pri: pri_of(""), credit: None };
        let Some(s) = self.call_view(Hook::VcpuState, v.0 as i64) else { return none() };
        let Some(m) = s.read_lock::<Map>() else {
            self.bad_return(
                Hook::VcpuState,
                None,
                format!("returned {}, not #{{ pri: \"UNDER\", credit: N }}", s.type_name()),
            );
            return none();
        };
        let pri = match m.get("pri").map(|p| p.read_lock::<rhai::ImmutableString>().map(|s| pri_of(&s))) {
            None => pri_of(""),
            Some(Some(p)) => p,
            Some(None) => {
                self.bad_return(Hook::VcpuState, None, "pri: a string such as \"UNDER\"".to_string());
                return none();
            }
        };
        let credit = match m.get("credit") {
            None => None,
            Some(c) if c.is_unit() => None,
            Some(c) => match c.as_int() {
                Ok(c) => Some(c),
                Err(_) => match c.as_float() {
                    Ok(f) if f.is_finite() && f.abs() < 9e18 => Some(f.round() as i64),
                    _ => {
                        self.bad_return(Hook::VcpuState, None, format!("credit: {c} is not a number"));
                        return none();
                    }
                },
            },
        };
        if let Some(k) = m.keys().find(|k| !matches!(k.as_str(), "pri" | "credit")) {
            self.bad_return(Hook::VcpuState, None, format!("returned a map with key '{k}' (the keys are pri, credit)"));
            return none();
        }
        VcpuSched { pri, credit }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        let Some(q) = self.call_view(Hook::Runqueue, p.0 as i64) else { return Vec::new() };
        let Some(a) = q.read_lock::<rhai::Array>() else {
            self.bad_return(Hook::Runqueue, None, format!("returned {}, not an array of vCPUs", q.type_name()));
            return Vec::new();
        };
        let mut out = Vec::with_capacity(a.len());
        for v in a.iter() {
            match self.vcpu(v) {
                Some(v) => out.push(VcpuId(v)),
                None => {
                    self.bad_return(Hook::Runqueue, None, format!("{v} is not a vCPU (0..{})", self.runnable.len()));
                    return Vec::new();
                }
            }
        }
        out
    }

    fn runqueue_versions(&self) -> &[u64] {
        &self.versions
    }

    fn take_fault(&mut self) -> Option<String> {
        self.fault.get_mut().take()
    }

    fn script_operations(&self) -> u64 {
        self.spent.get().ops
    }
}

impl crate::size::HeapSize for Script {
    fn heap_size(&self) -> usize {
        dynamic_size(&self.this.borrow())
            + self.runnable.capacity()
            + self.versions.capacity() * 8
            + self.pending.capacity() * std::mem::size_of::<Action>()
    }
}

/// The rule a script's kept state is held to, for the message that stops it.
fn kept_rule() -> String {
    format!(
        "a script keeps at most {} values (array elements and map entries, nested ones counted), {} characters of \
         strings and {} levels of nesting in `this` across its calls",
        engine::MAX_KEPT_VALUES,
        engine::MAX_KEPT_CHARS,
        engine::MAX_KEPT_DEPTH
    )
}

/// What a script keeps in `this`, counted by a walk that stops at the first bound passed (so it is bounded too,
/// and never recurses deeper than the nesting allowed).
#[derive(Default)]
struct Kept {
    values: usize,
    chars: usize,
}

impl Kept {
    /// Counts `d`, a value `depth` containers deep (`this` is 1); Err names the bound passed.
    fn walk(&mut self, d: &Dynamic, depth: usize) -> Result<(), String> {
        let mut enter = |n: usize| {
            if depth > engine::MAX_KEPT_DEPTH {
                return Err(format!("`this` nests values more than {} levels deep", engine::MAX_KEPT_DEPTH));
            }
            self.values += n;
            if self.values > engine::MAX_KEPT_VALUES {
                return Err(format!("`this` holds more than {} values", engine::MAX_KEPT_VALUES));
            }
            Ok(())
        };
        // A scalar (most of what a script keeps) is told by its tag alone, before any typed look at it.
        if !(d.is_map() || d.is_array() || d.is_string()) {
            return Ok(());
        }
        if let Some(m) = d.read_lock::<Map>() {
            enter(m.len())?;
            for (k, v) in m.iter() {
                self.chars += k.len();
                self.walk(v, depth + 1)?;
            }
        } else if let Some(a) = d.read_lock::<rhai::Array>() {
            enter(a.len())?;
            for v in a.iter() {
                self.walk(v, depth + 1)?;
            }
        } else if let Some(s) = d.read_lock::<rhai::ImmutableString>() {
            self.chars += s.len();
        }
        if self.chars > engine::MAX_KEPT_CHARS {
            return Err(format!("`this` holds more than {} characters of strings", engine::MAX_KEPT_CHARS));
        }
        Ok(())
    }
}

/// What a script value owns on the heap, roughly (strings, arrays and maps by element).
fn dynamic_size(d: &Dynamic) -> usize {
    const SLOT: usize = std::mem::size_of::<Dynamic>();
    if let Some(m) = d.read_lock::<Map>() {
        m.iter().map(|(k, v)| k.len() + SLOT + 32 + dynamic_size(v)).sum()
    } else if let Some(a) = d.read_lock::<rhai::Array>() {
        a.iter().map(|v| SLOT + dynamic_size(v)).sum()
    } else if let Some(s) = d.read_lock::<rhai::ImmutableString>() {
        s.len() + 16
    } else {
        0
    }
}

/// The script policy's registry row: a policy must give its `params` (the script's source).
pub const ROW: Scheduler = Scheduler {
    name: "script",
    caps: Caps::PLAIN,
    build: |s| registry::boxed(Script::new(s.params, s.pcpus, s.domains, s.seed, s.policy_id)),
    check_param,
    check_scenario,
    params: params::declared::<ScriptParams>().required(),
};
