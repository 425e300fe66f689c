//! The sandboxed Rhai engine a script policy runs in: which language features and library functions a script
//! gets, its limits, the host functions, and how a hook reaches the engine's `Ctx` while it runs.
//!
//! Host functions reach the running hook through a per-thread cell ([`Io`]): the policy fills it before calling
//! a hook (the time, who runs where, its random stream) and empties it afterwards (the actions and log lines the
//! hook asked for). A hook never calls another hook, so the cell has one user at a time on a thread; two runs on
//! two threads each have their own.

use crate::policy::Action;
use crate::rng::Stream;
use rhai::packages::{
    BasicArrayPackage, BasicMapPackage, BitFieldPackage, CorePackage, LogicPackage, MoreStringPackage, Package,
};
use rhai::{Dynamic, Engine, EvalAltResult, Position, AST};
use std::cell::{Cell, RefCell};

/// Operations one hook call may take (an endless loop stops here, after some tens of milliseconds).
pub const MAX_OPERATIONS: u64 = 2_000_000;
/// Bytes a hook allocates that count as one operation: the engine copies a value whole when a script reads it
/// into an expression (`let b = a;`, `[a]`) and counts one operation for it, so copying large or deeply nested
/// values is charged by its size (about one operation per element copied).
pub const BYTES_PER_OPERATION: u64 = 16;
/// Nested function calls (deep recursion stops here).
pub const MAX_CALL_LEVELS: usize = 48;
/// Nesting of expressions, at global level and inside functions.
pub const MAX_EXPR_DEPTH: (usize, usize) = (64, 48);
/// Elements of one array or map, counting nested ones, and characters of one string: the allocation is refused
/// before it happens.
pub const MAX_ARRAY: usize = 100_000;
pub const MAX_MAP: usize = 100_000;
pub const MAX_STRING: usize = 100_000;
/// Longest source accepted [bytes].
pub const MAX_SOURCE: usize = 200_000;
/// Operations a whole run's hook calls may take together (some 100 s of interpreting): a script slow in every
/// call stops here, where the per-call limit never fires.
pub const MAX_RUN_OPERATIONS: u64 = 1_000_000_000;
/// Decision-log lines (`log`, `print`, `debug`) a script may write in a run; the rest are dropped and counted.
pub const MAX_LOG_LINES: u64 = 100_000;
/// What a script keeps in `this` across its calls, checked after each hook: values (array elements and map
/// entries, nested ones counted), characters of its strings, and levels of nesting.
pub const MAX_KEPT_VALUES: usize = 100_000;
pub const MAX_KEPT_CHARS: usize = 1_000_000;
pub const MAX_KEPT_DEPTH: usize = 32;
/// Values of `this` walked by the check after each hook that count as one operation of the run.
pub const KEPT_VALUES_PER_OPERATION: usize = 16;
/// Operations between two looks at the call's budgets: the engine reports every operation, and looking costs a
/// few per cent of a run, so a call may overrun its budget by this many operations before it is stopped.
pub const OPERATIONS_PER_LOOK: u64 = 64;
/// Hook calls at one simulated instant: past it the script keeps time from advancing (a storm of
/// `timer_at(now())` or `resched`), and the run stops.
pub const MAX_CALLS_AT_ONE_INSTANT: u64 = 100_000;

/// A syntax error in a script, where it is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ScriptError {
    /// 1-based; 0 when the error has no position.
    pub line: usize,
    pub column: usize,
    pub message: String,
}

impl std::fmt::Display for ScriptError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "line {}, column {}: {}", self.line, self.column, self.message)
    }
}

/// What a running hook may read and what it asked for, for the host functions.
#[derive(Default)]
pub(super) struct Io {
    /// Whether a hook with a context is running: the host functions refuse otherwise.
    pub active: bool,
    /// The simulated time [ns].
    pub now: u64,
    pub pcpus: usize,
    pub vcpus: usize,
    /// The vCPU on each pCPU.
    pub running: Vec<Option<usize>>,
    /// The policy's random stream, lent for the call.
    pub rng: Option<Stream>,
    pub actions: Vec<Action>,
    /// Decision-log lines (pCPU, text), kept only when `explain`.
    pub logs: Vec<(usize, String)>,
    pub explain: bool,
    /// The pCPU `print` writes to (the hook's pCPU, or 0).
    pub pcpu: usize,
    /// Operations the run has left for this call, and how many the call took so far.
    pub ops_left: u64,
    pub ops: u64,
    /// The thread's allocated bytes when the call began ([`crate::allocated::bytes`]).
    pub bytes0: u64,
    /// Log lines this call may still keep, and those it could not.
    pub log_room: u64,
    pub dropped: u64,
}

impl Io {
    /// A log line, kept while the run's allowance lasts. The host's copy of it is not the script's copying: what
    /// it allocates is left out of the call's count (the lines are bounded apart).
    fn log(&mut self, p: usize, text: &dyn std::fmt::Display) {
        if !self.explain {
            return;
        }
        let before = crate::allocated::bytes();
        if (self.logs.len() as u64) < self.log_room {
            self.logs.push((p, text.to_string()));
        } else {
            self.dropped += 1;
        }
        self.bytes0 = self.bytes0.wrapping_add(crate::allocated::bytes().wrapping_sub(before));
    }
}

thread_local! {
    pub(super) static IO: RefCell<Io> = RefCell::new(Io::default());
    /// The running call's operations so far, as the engine last reported them (kept apart from [`IO`] so that
    /// the report on every operation is one store).
    pub(super) static CALL_OPS: Cell<u64> = const { Cell::new(0) };
}

type Res<T> = Result<T, Box<EvalAltResult>>;

fn err<T>(msg: String) -> Res<T> {
    Err(msg.into())
}

/// Runs `f` on the cell, failing when no hook is running (a host function called where it makes no sense).
fn with_io<T>(what: &str, f: impl FnOnce(&mut Io) -> Res<T>) -> Res<T> {
    IO.with(|io| {
        let mut io = io.borrow_mut();
        if !io.active {
            return err(format!("{what}() cannot be called here"));
        }
        f(&mut io)
    })
}

fn pcpu_arg(io: &Io, what: &str, p: i64) -> Res<usize> {
    match usize::try_from(p) {
        Ok(p) if p < io.pcpus => Ok(p),
        _ => err(format!("{what}({p}): no such pCPU (the host has {})", io.pcpus)),
    }
}

fn vcpu_arg(io: &Io, what: &str, v: i64) -> Res<usize> {
    match usize::try_from(v) {
        Ok(v) if v < io.vcpus => Ok(v),
        _ => err(format!("{what}({v}): no such vCPU (the host has {})", io.vcpus)),
    }
}

/// The engine every script policy runs in: the language without modules, clock, I/O or transcendental
/// functions (their results differ between platforms' math libraries; + - * / and sqrt are exact IEEE), with
/// the limits above and the host functions of the contract.
pub fn new_engine() -> Engine {
    use crate::model::{PcpuId, VcpuId};
    let mut e = Engine::new_raw();
    for m in [
        CorePackage::new().as_shared_module(),
        LogicPackage::new().as_shared_module(),
        BitFieldPackage::new().as_shared_module(),
        BasicArrayPackage::new().as_shared_module(),
        BasicMapPackage::new().as_shared_module(),
        MoreStringPackage::new().as_shared_module(),
    ] {
        e.register_global_module(m);
    }
    e.set_max_operations(MAX_OPERATIONS)
        .set_max_call_levels(MAX_CALL_LEVELS)
        .set_max_expr_depths(MAX_EXPR_DEPTH.0, MAX_EXPR_DEPTH.1)
        .set_max_array_size(MAX_ARRAY)
        .set_max_map_size(MAX_MAP)
        .set_max_string_size(MAX_STRING)
        .set_max_variables(10_000)
        .set_max_functions(10_000)
        .set_max_strings_interned(256);
    // `print` and `debug` write to the decision log, like `log` on the hook's pCPU.
    let print = |s: &str| {
        IO.with(|io| {
            let mut io = io.borrow_mut();
            if io.active {
                let p = io.pcpu;
                io.log(p, &s);
            }
        })
    };
    e.on_print(print);
    e.on_debug(move |s, _, _| print(s));
    // The call's and the run's operation budgets, copying counted by its size: each call may take what the run
    // has left.
    e.on_progress(|ops| {
        CALL_OPS.with(|c| c.set(ops));
        if ops % OPERATIONS_PER_LOOK != 0 {
            return None;
        }
        IO.with(|io| {
            let mut io = io.borrow_mut();
            let copied = crate::allocated::bytes().wrapping_sub(io.bytes0) / BYTES_PER_OPERATION;
            io.ops = ops.saturating_add(copied);
            if io.ops > io.ops_left {
                Some(Dynamic::from(RUN_BUDGET))
            } else {
                (io.ops > MAX_OPERATIONS).then(|| Dynamic::from(CALL_BUDGET))
            }
        })
    });
    // Exact numeric conversions and rounding (the math package's transcendental functions are left out).
    e.register_fn("to_float", |x: i64| x as f64);
    e.register_fn("to_int", |x: i64| x);
    e.register_fn("to_int", |x: f64| -> Res<i64> {
        if x.is_finite() && x.abs() < 9.0e18 {
            Ok(x.trunc() as i64)
        } else {
            err(format!("to_int({x}): out of range"))
        }
    });
    e.register_fn("floor", |x: f64| x.floor());
    e.register_fn("ceiling", |x: f64| x.ceil());
    e.register_fn("round", |x: f64| x.round());
    e.register_fn("sqrt", |x: f64| x.sqrt());
    e.register_fn("min", |a: i64, b: i64| a.min(b));
    e.register_fn("max", |a: i64, b: i64| a.max(b));
    e.register_fn("min", |a: f64, b: f64| a.min(b));
    e.register_fn("max", |a: f64, b: f64| a.max(b));

    // The contract's host functions.
    e.register_fn("now", || with_io("now", |io| Ok(io.now as i64)));
    e.register_fn("explaining", || with_io("explaining", |io| Ok(io.explain)));
    e.register_fn("running", |p: i64| {
        with_io("running", |io| {
            let p = pcpu_arg(io, "running", p)?;
            Ok(io.running[p].map_or(Dynamic::UNIT, |v| Dynamic::from(v as i64)))
        })
    });
    e.register_fn("resched", |p: i64| {
        with_io("resched", |io| {
            let p = pcpu_arg(io, "resched", p)?;
            io.actions.push(Action::Resched(PcpuId(p)));
            Ok(())
        })
    });
    e.register_fn("pause", |v: i64| {
        with_io("pause", |io| {
            let v = vcpu_arg(io, "pause", v)?;
            io.actions.push(Action::Pause(VcpuId(v)));
            Ok(())
        })
    });
    e.register_fn("unpause", |v: i64| {
        with_io("unpause", |io| {
            let v = vcpu_arg(io, "unpause", v)?;
            io.actions.push(Action::Unpause(VcpuId(v)));
            Ok(())
        })
    });
    e.register_fn("timer_at", |ns: i64| {
        with_io("timer_at", |io| {
            if ns < 0 {
                return err(format!("timer_at({ns}): a time since boot [ns] cannot be negative"));
            }
            // A time in the past fires at once, as for the native policies.
            io.actions.push(Action::Timer(crate::time::Nanos((ns as u64).max(io.now))));
            Ok(())
        })
    });
    e.register_fn("log", |p: i64, text: Dynamic| {
        with_io("log", |io| {
            let p = pcpu_arg(io, "log", p)?;
            io.log(p, &text);
            Ok(())
        })
    });
    e.register_fn("random", || {
        with_io("random", |io| {
            let rng = io.rng.as_mut().ok_or_else(|| Box::<EvalAltResult>::from("random() cannot be called here"))?;
            // 53 random bits: uniform in [0, 1).
            Ok(rng.uniform(0, (1u64 << 53) - 1) as f64 / (1u64 << 53) as f64)
        })
    });
    e
}

/// The tokens a call stopped by the run's budget, or by the call's budget with copying counted, ends with.
const RUN_BUDGET: &str = "run budget";
const CALL_BUDGET: &str = "call budget";

/// Compiles `src`, or says where its syntax is wrong. A byte-order mark before it is skipped, as in a scenario.
pub fn compile(engine: &Engine, src: &str) -> Result<AST, ScriptError> {
    let src = src.strip_prefix('\u{feff}').unwrap_or(src);
    if src.len() > MAX_SOURCE {
        return Err(ScriptError {
            line: 0,
            column: 0,
            message: format!("the source has {} bytes, more than the {MAX_SOURCE} allowed", src.len()),
        });
    }
    engine.compile(src).map_err(|e| {
        let (line, column) = line_col(e.position());
        ScriptError { line, column, message: e.err_type().to_string() }
    })
}

/// A position as (line, column), 1-based, (0, 0) when none.
pub fn line_col(p: Position) -> (usize, usize) {
    (p.line().unwrap_or(0), p.position().unwrap_or(0))
}

/// A runtime error as (line, message): the innermost error (the one inside the script function that failed)
/// with its position, its text without it.
pub fn runtime_error(e: &EvalAltResult) -> (usize, String) {
    // The deepest position along the chain of calls: where in the script the error happened.
    let mut pos = e.position();
    let mut inner = e;
    while let EvalAltResult::ErrorInFunctionCall(_, _, next, at) = inner {
        if !at.is_none() {
            pos = *at;
        }
        inner = next;
    }
    if !inner.position().is_none() {
        pos = inner.position();
    }
    let msg = match inner {
        EvalAltResult::ErrorTooManyOperations(_) => {
            format!("more than {MAX_OPERATIONS} operations in one call (an endless loop?)")
        }
        EvalAltResult::ErrorStackOverflow(_) => {
            format!("more than {MAX_CALL_LEVELS} nested calls (recursion too deep)")
        }
        EvalAltResult::ErrorTerminated(token, _) if token.clone().into_string().is_ok_and(|t| t == CALL_BUDGET) => {
            format!(
                "more than {MAX_OPERATIONS} operations in one call, copying counted by its size (one operation per \
                 {BYTES_PER_OPERATION} bytes copied): a loop copying a large or deeply nested value?"
            )
        }
        EvalAltResult::ErrorTerminated(..) => format!(
            "more than {MAX_RUN_OPERATIONS} operations in this run, the budget of a whole run's hook calls (a \
             script slow in every call?)"
        ),
        EvalAltResult::ErrorDataTooLarge(what, _) => {
            format!("{what} over the limit ({MAX_ARRAY} elements, {MAX_STRING} characters)")
        }
        other => {
            // Display appends " (line L, position C)"; the line is given apart.
            let text = other.to_string();
            let suffix = format!(" ({})", other.position());
            text.strip_suffix(&suffix).unwrap_or(&text).to_string()
        }
    };
    (pos.line().unwrap_or(0), msg)
}
