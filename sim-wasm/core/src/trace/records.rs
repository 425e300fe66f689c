//! The records a trace hands out: schedule segments, decisions, notifications, beliefs and boosts, task and
//! vCPU states, and a reason kept as its facts.

use super::*;

/// One stretch of a pCPU running one vCPU with one guest task current.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Segment {
    pub pcpu: u32,
    /// [ns]
    pub start: u64,
    /// [ns]
    pub end: u64,
    /// Global vCPU index.
    pub vcpu: u32,
    /// Global task index; -1 when the guest is idle.
    pub task: i32,
}

/// A scheduling decision or policy note, with its reason (as handed out; stored compactly, see `DecisionCell`).
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "Decision"))]
pub struct DecisionRec<'a> {
    /// [ns]
    pub t_ns: u64,
    pub pcpu: u32,
    /// Borrowed from the arena when the policy wrote text; worded on the spot when it recorded facts.
    #[cfg_attr(test, ts(type = "string"))]
    pub text: Cow<'a, str>,
}

/// How many integer arguments a [`Facts`] reason holds.
pub const FACT_ARGS: usize = 10;

/// A reason kept as its facts (vCPU indices, priorities, credits, pCPUs: whatever `write` reads from `args`, and
/// one fixed word such as a wake cause's name) and worded only when the decision log is read, so recording a
/// window formats nothing. `write` appends the text, given every vCPU's name; it must word the same facts the same
/// way every time (replay compares the logs).
#[derive(Debug, Clone, Copy)]
pub struct Facts {
    pub write: fn(&Facts, &[String], &mut String),
    pub args: [i64; FACT_ARGS],
    pub word: &'static str,
}

impl Facts {
    /// The text, given every vCPU's name.
    pub fn text(&self, names: &[String]) -> String {
        let mut s = String::with_capacity(96);
        (self.write)(self, names, &mut s);
        s
    }
}

/// An event-channel notification: when it became pending at a vCPU, and when it was delivered (with its wait).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct IoRec {
    /// [ns]
    pub t_ns: u64,
    pub vcpu: u32,
    /// "packet", "block", "timer", "ipi" or "backend".
    pub kind: &'static str,
    /// "pending" (the vCPU was not running) or "delivered".
    #[cfg_attr(test, ts(type = r#""pending" | "delivered""#))]
    pub phase: &'static str,
    /// For deliveries: how long it waited for the vCPU to run [ns].
    pub wait_ns: u64,
}

/// A task's degree of belief changed (task-aware scheduling's inference).
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BeliefRec {
    /// [ns]
    pub t_ns: u64,
    pub task: u32,
    pub belief: i64,
}

/// A partial boost given to a vCPU, or revoked because its guest moved on to a task that is not I/O-bound.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BoostRec {
    /// [ns]
    pub t_ns: u64,
    pub vcpu: u32,
    /// "boost" or "revoke".
    #[cfg_attr(test, ts(type = r#""boost" | "revoke""#))]
    pub kind: &'static str,
}

/// A guest task became runnable or blocked.
#[derive(Debug, Clone, Copy, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct TaskRec {
    /// [ns]
    pub t_ns: u64,
    pub task: u32,
    /// "runnable" or "blocked".
    #[cfg_attr(test, ts(type = r#""runnable" | "blocked""#))]
    pub state: &'static str,
}

/// A stretch of CPU a vCPU spent spinning at a barrier: charged as spin, as the report's `spin_ms` counts it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SpinRec {
    pub vcpu: u32,
    /// [ns]
    pub start: u64,
    /// [ns]
    pub end: u64,
}

/// What a vCPU does, as the page's state lanes draw it (the codes are what `vcpu_states_flat` hands out).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum VcpuState {
    /// On a pCPU doing work (or the guest idle loop).
    Running = 0,
    /// On a pCPU, spinning at a barrier while a sibling is not there.
    Spinning = 1,
    /// In a run queue, waiting for a pCPU.
    Runnable = 2,
    /// Neither running nor queued: nothing to do until a wake-up.
    Blocked = 3,
}

/// A vCPU in one state over `[start, end)`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct VcpuSpan {
    pub vcpu: u32,
    /// [ns]
    pub start: u64,
    /// [ns]
    pub end: u64,
    pub state: VcpuState,
}
impl crate::size::HeapSize for RqEntry {
    fn heap_size(&self) -> usize {
        match &self.pri {
            Cow::Borrowed(_) => 0,
            Cow::Owned(s) => s.capacity(),
        }
    }
}

crate::size::no_heap!(Segment, Facts, IoRec, TaskRec, BeliefRec, BoostRec);
