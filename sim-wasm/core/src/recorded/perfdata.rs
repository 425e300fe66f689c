//! `perf.data` files: not read yet (see `read`).

use super::{Event, NotATrace, ReadSummary};

/// Refuses, naming the path that works.
pub fn read(_bytes: &[u8], _sink: &mut dyn FnMut(&Event<'_>)) -> Result<ReadSummary, NotATrace> {
    Err(NotATrace(
        "perf.data is not read directly yet: convert it with `perf script -F comm,pid,tid,cpu,time,event,trace`".into(),
    ))
}
