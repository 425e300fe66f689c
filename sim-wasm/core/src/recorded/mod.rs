//! Recorded runs: schedules a real host wrote down (Linux `perf`/ftrace, Xen's xentrace), read into the model's
//! terms so that the report, the trace views and the claims treat them as they treat a simulated run.
//!
//! Layers: the readers ([`text`], [`xentrace`], [`perfdata`]) turn bytes into [`Event`]s, streaming, and know no
//! model; [`mapping`] says which threads are which domain's vCPUs (an editable, serialisable [`Mapping`]);
//! [`replay`] plays the events into a [`crate::trace::Trace`] and the engine's own measurement, and asks the
//! report code for the run object ([`replay::RecordedRun::report`]); [`fit`] turns what was measured into a
//! scenario the simulator can run ("the same load, simulated").
//!
//! The readers do no I/O: they take a [`std::io::BufRead`] (text) or a `Read + Seek` (xentrace, perf.data);
//! [`open_path`] is the one place a file is opened, for the CLI and Python alike.

pub mod fit;
pub mod gzip;
pub mod mapping;
pub mod perfcheck;
pub mod perfdata;
pub mod replay;
pub mod text;
pub mod validate;
pub mod wake;
pub mod xentrace;

pub use mapping::Mapping;
pub use replay::RecordedRun;

use serde::Serialize;
use std::collections::BTreeMap;

/// CPU numbers a trace may name are below this: well past the model's 256 pCPUs (a mapping's `cpus` picks those
/// from a larger host), and checked at the record that carries one, before anything is sized by it.
pub const MAX_CPUS: u32 = 4096;
/// Largest thread id (Linux's `PID_MAX_LIMIT`).
pub const MAX_TID: u64 = 1 << 22;

/// A CPU number a record gives in `field`, bounded by [`MAX_CPUS`].
pub(crate) fn cpu_number(field: &str, n: i64) -> Result<u32, String> {
    match u32::try_from(n) {
        Ok(c) if c < MAX_CPUS => Ok(c),
        _ => Err(format!("{field} {n} is not a CPU number: a trace's CPUs are 0 to {}", MAX_CPUS - 1)),
    }
}

/// A thread id a record gives in `field`, bounded by [`MAX_TID`] (a negative one arrives wrapped).
pub(crate) fn thread_id(field: &str, t: &Task<'_>) -> Result<(), String> {
    if t.id <= MAX_TID {
        return Ok(());
    }
    Err(format!("{field} {} is not a thread id: Linux's are 0 to {MAX_TID}", t.id as i64))
}

/// `t_ns` after `last`, or the message saying time went backwards.
pub(crate) fn in_order(t_ns: u64, last: u64) -> Result<(), String> {
    if t_ns >= last {
        return Ok(());
    }
    Err(format!(
        "time goes backwards ({}.{:09} s after {}.{:09} s): the events are out of order",
        t_ns / 1_000_000_000,
        t_ns % 1_000_000_000,
        last / 1_000_000_000,
        last % 1_000_000_000
    ))
}

/// A thread (Linux) or a vCPU (Xen) as a reader names it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Task<'a> {
    /// Thread id (Linux tid); Xen: `domid << 16 | vcpu`.
    pub id: u64,
    /// Its process (Linux tgid) or Xen domain id, when the record says.
    pub group: Option<u64>,
    /// Its name as recorded (Linux comm; Xen `d1v0`).
    pub name: &'a str,
    /// The CPU's idle task (Linux pid 0, Xen's idle domain): a CPU running it is idle.
    pub idle: bool,
}

/// What a task switched out left itself as.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum PrevState {
    /// Preempted: still runnable.
    Runnable,
    /// Asleep or waiting (S, D, I, ...): runs again only after a wake-up.
    Blocked,
    /// Exited (X, Z).
    Dead,
}

/// One scheduling event, times in the trace's own clock [ns].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Event<'a> {
    /// `cpu` switched from `prev` to `next`.
    Switch { t_ns: u64, cpu: u32, prev: Task<'a>, prev_state: PrevState, next: Task<'a> },
    /// `task` became runnable (on `target_cpu`, when the record says), woken by `waker` when known.
    Wake { t_ns: u64, cpu: u32, task: Task<'a>, target_cpu: Option<u32>, waker: Option<Task<'a>> },
    /// `task` moved to `to_cpu`'s run queue.
    Migrate { t_ns: u64, task: Task<'a>, to_cpu: u32 },
    /// Xen only: `task` started running on `cpu` (a runstate change to running).
    Run { t_ns: u64, cpu: u32, task: Task<'a> },
    /// Xen only: `task` stopped running on `cpu` (a runstate change from running) or blocked while queued.
    Stop { t_ns: u64, cpu: u32, task: Task<'a>, state: PrevState },
    /// A scheduler's own mark (Xen Credit's boost, accounting): kept for the decision log.
    Note { t_ns: u64, cpu: u32, task: Task<'a>, what: &'static str },
}

impl Event<'_> {
    pub fn t_ns(&self) -> u64 {
        match *self {
            Event::Switch { t_ns, .. }
            | Event::Wake { t_ns, .. }
            | Event::Migrate { t_ns, .. }
            | Event::Run { t_ns, .. }
            | Event::Stop { t_ns, .. }
            | Event::Note { t_ns, .. } => t_ns,
        }
    }
}

/// The trace formats there are readers for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Format {
    /// ftrace (`/sys/kernel/tracing/trace`), `trace-cmd report` or `perf script` text.
    Text,
    /// `perf.data` as `perf record` / `perf sched record` write it.
    PerfData,
    /// xentrace's binary records.
    Xentrace,
}

/// Where reading stopped early and why: the events before it were read.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Damage {
    /// Byte offset of the damaged record or line.
    pub offset: u64,
    /// Line number (text traces, from 1).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    pub message: String,
}

/// What a reader saw besides the events it handed on.
#[derive(Debug, Clone, Default, PartialEq, Serialize)]
pub struct ReadSummary {
    /// Events handed on.
    pub events: u64,
    /// Records of other events, skipped, by name.
    pub skipped: BTreeMap<String, u64>,
    /// Bytes read.
    pub bytes: u64,
    /// Set when the file is truncated or corrupt: reading stopped there.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub damage: Option<Damage>,
}

impl ReadSummary {
    pub(crate) fn skip(&mut self, name: &str) {
        // The count of distinct names is bounded so that a trace of garbage names cannot grow the map.
        if let Some(n) = self.skipped.get_mut(name) {
            *n += 1;
        } else if self.skipped.len() < 256 {
            self.skipped.insert(name.to_string(), 1);
        } else {
            *self.skipped.entry("(other)".to_string()).or_default() += 1;
        }
    }
}

/// A file no reader accepts, or options a reader cannot use.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotATrace(pub String);

impl std::fmt::Display for NotATrace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for NotATrace {}

/// Which reader a file's first bytes call for.
pub fn detect(head: &[u8]) -> Result<Format, NotATrace> {
    if head.starts_with(b"PERFILE2") || head.starts_with(b"2ELIFREP") || head.starts_with(b"PERFILE") {
        return Ok(Format::PerfData);
    }
    if xentrace::looks_like(head) {
        return Ok(Format::Xentrace);
    }
    if text::looks_like(head) {
        return Ok(Format::Text);
    }
    Err(NotATrace(
        "not a scheduling trace: expected perf.data (starts with PERFILE2), xentrace binary records (starts with \
         a TRC_TRACE_CPU_CHANGE record, 0x0001f003), or ftrace / trace-cmd report / perf script text with \
         sched_switch lines"
            .to_string(),
    ))
}

/// Options the readers share.
#[derive(Debug, Clone, Default, serde::Deserialize, Serialize)]
#[serde(deny_unknown_fields)]
pub struct ReadOptions {
    /// xentrace: the TSC frequency [Hz]. xentrace files carry none (xenalyze asks for it too, `--cpu-hz`,
    /// 2.4 GHz by default, which is used here when absent).
    #[serde(default)]
    pub tsc_hz: Option<u64>,
}

/// Reads a trace from a `BufRead + Seek` (a file, or bytes in a `Cursor`) with the reader its first bytes call
/// for, handing each event to `sink`; every reader streams (memory bounded whatever the file's size).
pub fn read_file<R: std::io::BufRead + std::io::Seek>(
    r: &mut R,
    opts: &ReadOptions,
    sink: &mut dyn FnMut(&Event<'_>),
) -> Result<(Format, ReadSummary), NotATrace> {
    let io = |e: std::io::Error| NotATrace(format!("cannot read the trace: {e}"));
    let mut head = Vec::with_capacity(4096);
    std::io::Read::read_to_end(&mut std::io::Read::take(&mut *r, 4096), &mut head).map_err(io)?;
    r.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
    if head.is_empty() {
        return Err(NotATrace("the file is empty: expected a scheduling trace".to_string()));
    }
    let format = detect(&head)?;
    let summary = match format {
        Format::Text => text::read(&mut *r, sink)?,
        Format::Xentrace => xentrace::read(&mut *r, opts, sink)?,
        Format::PerfData => perfdata::read(&mut *r, sink)?,
    };
    Ok((format, summary))
}

/// Reads a whole trace from bytes with the reader its first bytes call for, handing each event to `sink`.
pub fn read_bytes(
    bytes: &[u8],
    opts: &ReadOptions,
    sink: &mut dyn FnMut(&Event<'_>),
) -> Result<(Format, ReadSummary), NotATrace> {
    read_file(&mut std::io::Cursor::new(bytes), opts, sink)
}

/// What the front ends (CLI, Python, the page) share: a trace's recorded run, from an open trace (gzip-compressed
/// ones expanded within [`gzip`]'s bounds) and the caller's mapping (JSON text; the proposed one when absent).
pub fn open_run<R: std::io::BufRead + std::io::Seek>(
    mut r: R,
    mapping_json: Option<&str>,
    opts: &ReadOptions,
) -> Result<RecordedRun, String> {
    let mapping = match mapping_json {
        Some(text) => Some(serde_json::from_str::<Mapping>(text).map_err(|e| format!("mapping: {e}"))?),
        None => None,
    };
    let io = |e: std::io::Error| format!("cannot read the trace: {e}");
    if gzip::is_gzip(r.fill_buf().map_err(io)?) {
        let len = r.seek(std::io::SeekFrom::End(0)).map_err(io)?;
        r.seek(std::io::SeekFrom::Start(0)).map_err(io)?;
        let bytes = gzip::gunzip(r, len).map_err(|e| e.0)?;
        return RecordedRun::load(std::io::Cursor::new(bytes), opts, mapping);
    }
    RecordedRun::load(r, opts, mapping)
}

/// Bytes read between two calls of [`open_path`]'s `poll`.
const POLL_BYTES: u64 = 1 << 20;

/// A reader that calls `poll` about every [`POLL_BYTES`] and fails the read when it says to stop.
struct Polled<'p, R> {
    inner: R,
    since: u64,
    poll: &'p mut dyn FnMut() -> Result<(), String>,
}

impl<R: std::io::Read> std::io::Read for Polled<'_, R> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.since >= POLL_BYTES {
            self.since = 0;
            (self.poll)().map_err(std::io::Error::other)?;
        }
        let n = self.inner.read(buf)?;
        self.since += n as u64;
        Ok(n)
    }
}

impl<R: std::io::Seek> std::io::Seek for Polled<'_, R> {
    fn seek(&mut self, to: std::io::SeekFrom) -> std::io::Result<u64> {
        self.inner.seek(to)
    }
}

/// A trace file's recorded run, as the CLI and Python open one: a regular file only (a FIFO or a device would
/// block or never end), gzip-compressed or not (by its first bytes), read through a 64 KiB buffer; `poll` is
/// called about every MiB read and stops the read with its error (Python's Ctrl-C).
pub fn open_path(
    path: &std::path::Path,
    mapping_json: Option<&str>,
    opts: &ReadOptions,
    poll: &mut dyn FnMut() -> Result<(), String>,
) -> Result<RecordedRun, String> {
    let ctx = |e: String| format!("{}: {e}", path.display());
    let meta = std::fs::metadata(path).map_err(|e| ctx(e.to_string()))?;
    if !meta.is_file() {
        let what = if meta.is_dir() { "a directory" } else { "not a regular file (a pipe or a device)" };
        return Err(ctx(format!("{what}: a trace is read from a regular file")));
    }
    let f = std::fs::File::open(path).map_err(|e| ctx(e.to_string()))?;
    let r = std::io::BufReader::with_capacity(1 << 16, Polled { inner: f, since: 0, poll });
    open_run(r, mapping_json, opts).map_err(ctx)
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Damaged copies of the fixtures (bytes overwritten, cut at many places) are read or refused, never a panic,
    /// and a damaged read says where.
    /// The seeded stream the mutant tests draw from (the same cases on every run).
    pub(crate) fn xorshift(mut seed: u64) -> impl FnMut() -> u64 {
        move || {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed
        }
    }

    #[test]
    fn mutated_fixtures_never_panic() {
        let xt = replay::tests::fixture("xentrace/synthetic.xt");
        let text = replay::tests::fixture("perf/sched.perf-script.txt.gz");
        let text = &text[..20_000];
        let data = replay::tests::fixture("perf/sched.data.gz");
        let mut next = xorshift(0x9e37_79b9_7f4a_7c15);
        for base in [&xt[..], text, &data[..]] {
            for _ in 0..40 {
                let mut b = base.to_vec();
                for _ in 0..(next() % 8 + 1) {
                    let i = (next() as usize) % b.len();
                    b[i] = next() as u8;
                }
                b.truncate(((next() as usize) % b.len()).max(1));
                let mut n = 0u64;
                if let Ok((_, s)) = read_bytes(&b, &ReadOptions::default(), &mut |_: &Event<'_>| n += 1) {
                    assert_eq!(s.events, n);
                }
                let _ = RecordedRun::from_bytes(&b, &ReadOptions::default(), None);
            }
        }
    }
}
