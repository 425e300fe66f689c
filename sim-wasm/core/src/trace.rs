//! The recorded trace the UI replays: per-pCPU schedule segments (vCPU and guest task) and every scheduling
//! decision with its one-line reason. Views derive what they draw (share over time, Gantt lanes) from it.

use crate::policy::PriClass;
use serde::Serialize;
use std::borrow::Cow;
use std::sync::Arc;

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

/// A scheduling decision or policy note, with its reason (as handed out; stored compactly, see `Decision`).
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

/// A stored decision: its text lives in the trace's text arena (`chunk`, `start`, `len`); when `chunk` is
/// [`FACTS`] it was recorded as facts: their kind is `fact_kinds[len]` and their arguments are encoded in
/// `fact_bytes` from `start`.
#[derive(Debug, Clone, Copy)]
struct Decision {
    t_ns: u64,
    pcpu: u32,
    chunk: u32,
    start: u32,
    len: u32,
}

/// `Decision::chunk` of a decision stored as facts.
const FACTS: u32 = u32::MAX;

/// Size of one chunk of the decision-text arena [bytes]; chunks never grow, so no text is copied twice.
const TEXT_CHUNK: usize = 1 << 20;

/// What a decision recorded as facts shares with others of its kind: the words put before it, its writer and its
/// fixed word. Interned per trace (a handful exist), so a decision stores an index.
#[derive(Debug, Clone, Copy)]
struct FactKind {
    prefix: &'static str,
    write: fn(&Facts, &[String], &mut String),
    word: &'static str,
}

impl FactKind {
    fn same(&self, prefix: &'static str, f: &Facts) -> bool {
        // Compared by address: a writer that the compiler merged with an identical one words the same facts alike.
        self.prefix == prefix && self.word == f.word && self.write as usize == f.write as usize
    }
}

/// Interned `&'static str` labels (priority classes, I/O kinds and phases, task states): a stored record keeps a
/// one-byte index instead of a 16-byte reference. There are a few dozen at most across every policy.
#[derive(Debug, Clone, Default)]
struct Labels(Vec<&'static str>);

impl Labels {
    /// The index of `label`, if any record names it.
    fn find(&self, label: &str) -> Option<u8> {
        self.0.iter().position(|l| *l == label).map(|i| i as u8)
    }

    fn id(&mut self, label: &'static str) -> u8 {
        if let Some(i) = self.find(label) {
            return i;
        }
        assert!(self.0.len() <= u8::MAX as usize, "more than 256 distinct trace labels");
        self.0.push(label);
        (self.0.len() - 1) as u8
    }

    fn get(&self, id: u8) -> &'static str {
        self.0[id as usize]
    }
}

/// Interned priority labels, like [`Labels`] but owning the ones made at run time (a script policy's words). A
/// script could make a new word at every call: past [`PriLabels::MAX`] distinct ones, the rest are stored as
/// [`PriLabels::OVERFLOW`] rather than growing without bound.
#[derive(Debug, Clone, Default)]
struct PriLabels(Vec<Cow<'static, str>>);

impl PriLabels {
    /// Most distinct labels kept (one index is the overflow's).
    const MAX: usize = u8::MAX as usize;
    /// What a label past the first `MAX` is stored as.
    const OVERFLOW: &'static str = "…";

    // The Cow, not a &str: a new static label is kept borrowed, with no copy.
    #[allow(clippy::ptr_arg)]
    fn id(&mut self, label: &Cow<'static, str>) -> u8 {
        if let Some(i) = self.0.iter().position(|l| l == label) {
            return i as u8;
        }
        if self.0.len() < Self::MAX {
            self.0.push(label.clone());
            return (self.0.len() - 1) as u8;
        }
        match self.0.iter().position(|l| l == Self::OVERFLOW) {
            Some(i) => i as u8,
            None => {
                self.0.push(Cow::Borrowed(Self::OVERFLOW));
                Self::MAX as u8
            }
        }
    }

    fn get(&self, id: u8) -> Cow<'static, str> {
        self.0[id as usize].clone()
    }
}

/// An [`IoRec`] as stored (24 bytes instead of 56): its kind and phase interned in the trace's labels.
#[derive(Debug, Clone, Copy)]
struct IoCell {
    t_ns: u64,
    wait_ns: u64,
    vcpu: u32,
    kind: u8,
    phase: u8,
}

/// A [`TaskRec`] as stored (16 bytes instead of 32).
#[derive(Debug, Clone, Copy)]
struct TaskCell {
    t_ns: u64,
    task: u32,
    state: u8,
}

/// An [`RqEntry`] as stored (16 bytes instead of 48); `vcpu` is [`NO_VCPU`] in the running slot of an idle pCPU.
/// The label is interned in the trace's priority labels; the class is kept beside it (it fits the padding).
#[derive(Debug, Clone, Copy, PartialEq)]
struct RqCell {
    credit: i64,
    vcpu: u32,
    pri: u8,
    class: PriClass,
    has_credit: bool,
}

const NO_VCPU: u32 = u32::MAX;

/// A run-queue snapshot as stored: `cells[at]` is what runs, the next `queued` cells what waits, in its lane's
/// cell arena (no allocation per snapshot).
#[derive(Debug, Clone, Copy)]
struct RqRec {
    t_ns: u64,
    at: u32,
    queued: u32,
}

/// One pCPU's run-queue snapshots.
#[derive(Debug, Clone, Default)]
struct RqLane {
    recs: Vec<RqRec>,
    cells: Vec<RqCell>,
}

impl RqLane {
    /// What snapshot `i` runs and has queued.
    fn entries(&self, i: usize) -> (Option<&RqCell>, &[RqCell]) {
        let r = &self.recs[i];
        let at = r.at as usize;
        let running = Some(&self.cells[at]).filter(|c| c.vcpu != NO_VCPU);
        (running, &self.cells[at + 1..at + 1 + r.queued as usize])
    }
}

/// A vCPU in a run-queue snapshot, as the policy sees it.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "RunQueueEntry", optional_fields))]
pub struct RqEntry {
    pub vcpu: u32,
    /// The policy's priority label (BOOST, UNDER, OVER, PARKED, L0, CON, ...): what the view shows.
    #[cfg_attr(test, ts(as = "String"))]
    pub pri: Cow<'static, str>,
    /// What the label means, whichever policy gave it: what the view styles it by.
    pub class: PriClass,
    /// Credit in the policy's units, when it has credits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit: Option<i64>,
}

/// What one pCPU runs and has queued, from `t_ns` until the next snapshot of that pCPU.
#[derive(Debug, Clone, Serialize, PartialEq)]
#[cfg_attr(test, derive(ts_rs::TS), ts(rename = "RunQueueSnap"))]
pub struct RqSnap {
    pub t_ns: u64,
    pub running: Option<RqEntry>,
    pub queued: Vec<RqEntry>,
}

/// A pCPU's run-queue snapshot in a list of changes across pCPUs.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RqChange {
    pub pcpu: u32,
    #[serde(flatten)]
    pub snap: RqSnap,
}

/// Most run-queue snapshots one pCPU keeps for one instant.
const SAME_INSTANT_SNAPS: usize = 4;

/// Default memory budget for trace detail (segments, decisions, run-queue snapshots) [bytes].
pub const DEFAULT_BUDGET_BYTES: usize = 160 << 20;
/// Finest bucket of the per-domain CPU aggregate kept for the whole run [ns].
const AGG_BUCKET_MIN_NS: u64 = 10_000_000;
/// Most (domain x bucket) cells of that aggregate; longer or larger runs get coarser buckets.
pub(crate) const AGG_MAX_CELLS: u64 = 4_000_000;

/// The records of a time-sorted list in `[from_ns, to_ns)`, at most `limit`.
fn window<T>(list: &[T], t: impl Fn(&T) -> u64, from_ns: u64, to_ns: u64, limit: usize) -> &[T] {
    let a = list.partition_point(|r| t(r) < from_ns);
    let b = list.partition_point(|r| t(r) < to_ns).min(a.saturating_add(limit));
    &list[a..b.max(a)]
}

/// `[from, to)` cut into `n` equal columns whose edges fall on whole nanoseconds (`from + (to - from) * k / n`).
struct Buckets {
    from: u64,
    span: u128,
    n: usize,
}

impl Buckets {
    fn new(from: u64, to: u64, n: usize) -> Self {
        Self { from, span: u128::from(to - from), n }
    }

    /// Start of column `k` [ns].
    fn edge(&self, k: usize) -> u64 {
        self.from + (self.span * k as u128 / self.n as u128) as u64
    }

    /// The column holding `t` (`from <= t < to`).
    fn of(&self, t: u64) -> usize {
        let k = (u128::from(t - self.from) * self.n as u128 / self.span) as usize;
        // The integer edges may put `t` one column early: step forward while the next edge is not after it.
        let mut k = k.min(self.n - 1);
        while k + 1 < self.n && self.edge(k + 1) <= t {
            k += 1;
        }
        k
    }

    /// Calls `f(column, ns, column length)` for each column `[start, end)` overlaps, with the overlap [ns].
    fn spread(&self, start: u64, end: u64, mut f: impl FnMut(usize, u64, u64)) {
        let to = self.edge(self.n);
        let (start, end) = (start.max(self.from), end.min(to));
        if end <= start {
            return;
        }
        let mut k = self.of(start);
        let mut t = start;
        while t < end && k < self.n {
            let (a, b) = (self.edge(k), self.edge(k + 1));
            let next = b.min(end);
            if next > t && b > a {
                f(k, next - t, b - a);
            }
            t = next;
            k += 1;
        }
    }
}

/// Bytes a push onto `v` allocates: nothing while it has room, its current capacity again when it doubles.
fn growth_bytes<T>(v: &Vec<T>) -> usize {
    growth_bytes_n(v, 1)
}

/// Bytes appending `n` items to `v` allocates, as `Vec` grows (to twice its capacity, or what is needed).
fn growth_bytes_n<T>(v: &Vec<T>, n: usize) -> usize {
    let need = v.len() + n;
    if need <= v.capacity() {
        return 0;
    }
    (need.max(v.capacity() * 2).max(4) - v.capacity()) * std::mem::size_of::<T>()
}

/// The trace keeps full detail until its memory budget is spent; from then on (`detail_until_ns`) it keeps only
/// the per-domain CPU aggregate, which always covers the whole run. Nothing is dropped without saying so.
pub struct Trace {
    segments: Vec<Segment>,
    /// Index into `segments` of the last segment of each pCPU, for merging contiguous equal stretches.
    last_of_pcpu: Vec<Option<usize>>,
    decisions: Vec<Decision>,
    /// Decision texts, back to back, in fixed-size chunks.
    text: Vec<String>,
    /// The kinds of decisions stored as facts.
    fact_kinds: Vec<FactKind>,
    /// Their arguments, each a signed LEB128 number (most are small: vCPU indices, priorities, credits).
    fact_bytes: Vec<u8>,
    /// Every vCPU's name, for wording facts.
    vcpu_name: Arc<[String]>,
    pub decisions_dropped: u64,
    io: Vec<IoCell>,
    task_states: Vec<TaskCell>,
    beliefs: Vec<BeliefRec>,
    boosts: Vec<BoostRec>,
    /// Run-queue snapshots per pCPU, recorded whenever one changes.
    runqueues: Vec<RqLane>,
    /// The labels the stored records name by index.
    labels: Labels,
    /// The priority labels run-queue cells name by index.
    pri_labels: PriLabels,
    /// Reused to turn a snapshot's entries into cells before comparing it with the last.
    rq_scratch: Vec<RqCell>,
    /// Spin stretches in the order they were charged (so by `end`).
    spins: Vec<SpinRec>,
    /// Longest spin stretch [ns]: how far past a window a stretch that overlaps it may end.
    max_spin_ns: u64,
    vcpu_dom: Vec<usize>,
    ndomains: usize,
    pcpus: usize,
    /// End of the run [ns].
    end: u64,
    budget_bytes: usize,
    used_bytes: usize,
    /// Detail stopped here because the budget was spent [ns].
    pub detail_until_ns: Option<u64>,
    /// CPU per domain per aggregate bucket [ns], row-major by bucket.
    agg: Vec<u64>,
    agg_bucket_ns: u64,
    /// Reused to format decisions before they are copied into the arena.
    scratch: String,
}

impl Trace {
    pub fn new(pcpus: usize, vcpu_dom: Vec<usize>, ndomains: usize, end: u64) -> Trace {
        Trace::with_budget(pcpus, vcpu_dom, ndomains, end, DEFAULT_BUDGET_BYTES)
    }

    pub fn with_budget(pcpus: usize, vcpu_dom: Vec<usize>, ndomains: usize, end: u64, budget_bytes: usize) -> Trace {
        let cells_per_bucket = ndomains.max(1) as u64;
        let min_bucket = end.div_ceil(AGG_MAX_CELLS / cells_per_bucket).max(1);
        let agg_bucket_ns = AGG_BUCKET_MIN_NS.max(min_bucket);
        let nb = end.div_ceil(agg_bucket_ns) as usize;
        Trace {
            segments: Vec::new(),
            last_of_pcpu: vec![None; pcpus],
            decisions: Vec::new(),
            text: Vec::new(),
            fact_kinds: Vec::new(),
            fact_bytes: Vec::new(),
            vcpu_name: Arc::from([]),
            io: Vec::new(),
            task_states: Vec::new(),
            beliefs: Vec::new(),
            boosts: Vec::new(),
            decisions_dropped: 0,
            runqueues: vec![RqLane::default(); pcpus],
            labels: Labels::default(),
            pri_labels: PriLabels::default(),
            rq_scratch: Vec::new(),
            spins: Vec::new(),
            max_spin_ns: 0,
            vcpu_dom,
            ndomains,
            pcpus,
            end,
            budget_bytes,
            used_bytes: 0,
            detail_until_ns: None,
            agg: vec![0; nb * ndomains],
            agg_bucket_ns,
            scratch: String::new(),
        }
    }

    /// Detail without a budget and without the whole-run aggregate: the trace of a replayed window (the window is
    /// short, and the run's own trace keeps the aggregate).
    pub fn detail_only(pcpus: usize, vcpu_dom: Vec<usize>, ndomains: usize) -> Trace {
        Trace::with_budget(pcpus, vcpu_dom, ndomains, 0, usize::MAX)
    }

    /// Moves the detail recorded so far into a trace of its own (like [`Trace::detail_only`]'s: no run end, no
    /// budget), leaving this one with the whole-run aggregate and no detail: a replay run's opening window.
    pub fn take_detail(&mut self) -> Trace {
        let mut d = Trace::detail_only(self.pcpus, self.vcpu_dom.clone(), self.ndomains);
        d.segments = std::mem::take(&mut self.segments);
        d.last_of_pcpu = std::mem::replace(&mut self.last_of_pcpu, vec![None; self.pcpus]);
        d.decisions = std::mem::take(&mut self.decisions);
        d.text = std::mem::take(&mut self.text);
        d.fact_kinds = std::mem::take(&mut self.fact_kinds);
        d.fact_bytes = std::mem::take(&mut self.fact_bytes);
        d.vcpu_name = self.vcpu_name.clone();
        d.decisions_dropped = std::mem::take(&mut self.decisions_dropped);
        d.io = std::mem::take(&mut self.io);
        d.task_states = std::mem::take(&mut self.task_states);
        d.beliefs = std::mem::take(&mut self.beliefs);
        d.boosts = std::mem::take(&mut self.boosts);
        d.runqueues = std::mem::replace(&mut self.runqueues, vec![RqLane::default(); self.pcpus]);
        // The stored records name labels by index; this trace keeps its own for what it records next.
        d.labels = self.labels.clone();
        d.pri_labels = self.pri_labels.clone();
        d.spins = std::mem::take(&mut self.spins);
        d.max_spin_ns = std::mem::take(&mut self.max_spin_ns);
        d.used_bytes = std::mem::take(&mut self.used_bytes);
        d
    }

    /// Charges `bytes` of detail against the budget; false once it is spent (detail stops for good).
    fn spend(&mut self, t_ns: u64, bytes: usize) -> bool {
        if self.detail_until_ns.is_some() {
            return false;
        }
        self.used_bytes += bytes;
        if self.used_bytes > self.budget_bytes {
            self.detail_until_ns = Some(t_ns);
            return false;
        }
        true
    }

    /// Bytes of detail recorded so far (an estimate of the heap it takes).
    pub fn used_bytes(&self) -> usize {
        self.used_bytes
    }

    /// Adds a stretch to the per-domain CPU aggregate only (what `push_segment` does past the budget).
    pub fn aggregate(&mut self, s: &Segment) {
        let d = self.vcpu_dom[s.vcpu as usize];
        let (nd, bucket) = (self.ndomains, self.agg_bucket_ns);
        let mut t = s.start;
        while t < s.end {
            let b = (t / bucket) as usize;
            let b_end = ((b as u64 + 1) * bucket).min(s.end);
            if let Some(cell) = self.agg.get_mut(b * nd + d) {
                *cell += b_end - t;
            }
            t = b_end;
        }
    }

    pub fn push_segment(&mut self, s: Segment) {
        if s.end <= s.start {
            return;
        }
        self.aggregate(&s);
        if let Some(i) = self.last_of_pcpu[s.pcpu as usize] {
            let last = &mut self.segments[i];
            if last.end == s.start && last.vcpu == s.vcpu && last.task == s.task {
                last.end = s.end;
                return;
            }
        }
        if !self.spend(s.start, growth_bytes(&self.segments)) {
            return;
        }
        self.last_of_pcpu[s.pcpu as usize] = Some(self.segments.len());
        self.segments.push(s);
    }

    /// Records a decision whose text is formatted here, through a reused buffer (no allocation per decision).
    pub fn push_decision_fmt(&mut self, t_ns: u64, pcpu: usize, text: std::fmt::Arguments<'_>) {
        use std::fmt::Write;
        let mut buf = std::mem::take(&mut self.scratch);
        buf.clear();
        // Writing to a String cannot fail.
        let _ = buf.write_fmt(text);
        self.push_decision(t_ns, pcpu, &buf);
        self.scratch = buf;
    }

    /// Names the vCPUs, for wording decisions stored as facts.
    pub fn set_vcpu_names(&mut self, names: Arc<[String]>) {
        self.vcpu_name = names;
    }

    /// Records a decision as its facts, worded (after `prefix` and ": ", when `prefix` is not empty) only when
    /// read. Charged against the budget as what it allocates, like a text.
    pub fn push_decision_facts(&mut self, t_ns: u64, pcpu: usize, prefix: &'static str, facts: Facts) {
        // At most 10 bytes per number in signed LEB128.
        let mut buf = [0u8; FACT_ARGS * 10];
        let mut rest = &mut buf[..];
        for a in facts.args {
            // Writing into a buffer sized for the worst case cannot fail.
            let _ = leb128::write::signed(&mut rest, a);
        }
        let len = FACT_ARGS * 10 - rest.len();
        let bytes = growth_bytes(&self.decisions) + growth_bytes_n(&self.fact_bytes, len);
        if !self.spend(t_ns, bytes) {
            self.decisions_dropped += 1;
            return;
        }
        let kind = match self.fact_kinds.iter().position(|k| k.same(prefix, &facts)) {
            Some(k) => k,
            None => {
                self.fact_kinds.push(FactKind { prefix, write: facts.write, word: facts.word });
                self.fact_kinds.len() - 1
            }
        };
        let start = self.fact_bytes.len() as u32;
        self.fact_bytes.extend_from_slice(&buf[..len]);
        self.decisions.push(Decision { t_ns, pcpu: pcpu as u32, chunk: FACTS, start, len: kind as u32 });
    }

    pub fn push_decision(&mut self, t_ns: u64, pcpu: usize, text: &str) {
        // Budget by what is allocated: the record, its text, and a new arena chunk when one is started.
        let need_chunk = self.text.last().is_none_or(|c| c.len() + text.len() > c.capacity());
        let bytes = growth_bytes(&self.decisions) + if need_chunk { TEXT_CHUNK.max(text.len()) } else { 0 };
        if !self.spend(t_ns, bytes) {
            self.decisions_dropped += 1;
            return;
        }
        if need_chunk {
            self.text.push(String::with_capacity(TEXT_CHUNK.max(text.len())));
        }
        let chunk = self.text.len() - 1;
        let buf = &mut self.text[chunk];
        let start = buf.len();
        buf.push_str(text);
        self.decisions.push(Decision {
            t_ns,
            pcpu: pcpu as u32,
            chunk: chunk as u32,
            start: start as u32,
            len: text.len() as u32,
        });
    }

    pub fn push_io(&mut self, rec: IoRec) {
        if self.spend(rec.t_ns, growth_bytes(&self.io)) {
            let (kind, phase) = (self.labels.id(rec.kind), self.labels.id(rec.phase));
            self.io.push(IoCell { t_ns: rec.t_ns, wait_ns: rec.wait_ns, vcpu: rec.vcpu, kind, phase });
        }
    }

    /// Belief records are few (one per task switch at most) and the UI needs them whole: kept outside the
    /// detail budget's cut-off, but still counted.
    pub fn push_belief(&mut self, rec: BeliefRec) {
        self.used_bytes += growth_bytes(&self.beliefs);
        self.beliefs.push(rec);
    }

    /// Belief changes of one task (all tasks when `task` is None).
    pub fn beliefs(&self, task: Option<u32>) -> Vec<BeliefRec> {
        self.beliefs.iter().filter(|r| task.is_none_or(|t| r.task == t)).copied().collect()
    }

    /// Partial-boost marks, like beliefs, are few (at most one per pending event) and kept for the whole run.
    pub fn push_boost(&mut self, rec: BoostRec) {
        self.used_bytes += growth_bytes(&self.boosts);
        self.boosts.push(rec);
    }

    /// Every partial boost given or revoked, in time order.
    pub fn boosts(&self) -> &[BoostRec] {
        &self.boosts
    }

    pub fn push_task_state(&mut self, rec: TaskRec) {
        if self.spend(rec.t_ns, growth_bytes(&self.task_states)) {
            let state = self.labels.id(rec.state);
            self.task_states.push(TaskCell { t_ns: rec.t_ns, task: rec.task, state });
        }
    }

    /// Notifications with `from_ns <= t < to_ns`, at most `limit`.
    pub fn io_events(&self, from_ns: u64, to_ns: u64, limit: usize) -> Vec<IoRec> {
        let cells = window(&self.io, |r| r.t_ns, from_ns, to_ns, limit);
        let l = &self.labels;
        let rec = |c: &IoCell| IoRec {
            t_ns: c.t_ns,
            vcpu: c.vcpu,
            kind: l.get(c.kind),
            phase: l.get(c.phase),
            wait_ns: c.wait_ns,
        };
        cells.iter().map(rec).collect()
    }

    /// Guest task state changes with `from_ns <= t < to_ns`, at most `limit`.
    pub fn task_states(&self, from_ns: u64, to_ns: u64, limit: usize) -> Vec<TaskRec> {
        let cells = window(&self.task_states, |r| r.t_ns, from_ns, to_ns, limit);
        cells.iter().map(|c| TaskRec { t_ns: c.t_ns, task: c.task, state: self.labels.get(c.state) }).collect()
    }

    /// Records pCPU `p`'s run queue unless it is unchanged since its last snapshot.
    /// `queued` is copied only when it is kept, so the caller can build it in a reused buffer.
    pub fn push_runqueue(&mut self, p: usize, t_ns: u64, running: Option<RqEntry>, queued: &[RqEntry]) {
        if self.detail_until_ns.is_some() {
            return;
        }
        let mut cells = std::mem::take(&mut self.rq_scratch);
        cells.clear();
        let idle = RqCell { credit: 0, vcpu: NO_VCPU, pri: 0, class: PriClass::Other, has_credit: false };
        let labels = &mut self.pri_labels;
        let mut cell = |e: &RqEntry| RqCell {
            credit: e.credit.unwrap_or(0),
            vcpu: e.vcpu,
            pri: labels.id(&e.pri),
            class: e.class,
            has_credit: e.credit.is_some(),
        };
        cells.push(running.as_ref().map_or(idle, &mut cell));
        cells.extend(queued.iter().map(cell));
        self.push_rq_cells(p, t_ns, &cells);
        self.rq_scratch = cells;
    }

    /// `push_runqueue` once the entries are cells: what runs first, then what waits.
    fn push_rq_cells(&mut self, p: usize, t_ns: u64, cells: &[RqCell]) {
        let bytes = growth_bytes(&self.runqueues[p].recs) + growth_bytes_n(&self.runqueues[p].cells, cells.len());
        let lane = &mut self.runqueues[p];
        if let Some(last) = lane.recs.last() {
            if lane.cells[last.at as usize..] == *cells {
                return;
            }
        }
        // Several changes within one instant are kept one after another (a BOOSTed vCPU queued at the head, then
        // dispatched: the page shows each as a step), up to a few; past them only the last state of the instant.
        let n = lane.recs.len();
        if n >= SAME_INSTANT_SNAPS && lane.recs[n - SAME_INSTANT_SNAPS].t_ns == t_ns {
            if let Some(last) = lane.recs.last_mut() {
                // The last snapshot's cells end the arena: replace them.
                lane.cells.truncate(last.at as usize);
                lane.cells.extend_from_slice(cells);
                last.queued = (cells.len() - 1) as u32;
                return;
            }
        }
        if self.spend(t_ns, bytes) {
            let lane = &mut self.runqueues[p];
            lane.recs.push(RqRec { t_ns, at: lane.cells.len() as u32, queued: (cells.len() - 1) as u32 });
            lane.cells.extend_from_slice(cells);
        }
    }

    /// Snapshot `i` of pCPU `p`, as handed out.
    fn rq_snap(&self, p: usize, i: usize) -> RqSnap {
        let lane = &self.runqueues[p];
        let entry = |c: &RqCell| RqEntry {
            vcpu: c.vcpu,
            pri: self.pri_labels.get(c.pri),
            class: c.class,
            credit: c.has_credit.then_some(c.credit),
        };
        let (running, queued) = lane.entries(i);
        RqSnap { t_ns: lane.recs[i].t_ns, running: running.map(entry), queued: queued.iter().map(entry).collect() }
    }

    /// Records CPU charged as spinning; stretches must come in the order they end.
    pub fn push_spin(&mut self, rec: SpinRec) {
        if rec.end > rec.start && self.spend(rec.start, growth_bytes(&self.spins)) {
            self.max_spin_ns = self.max_spin_ns.max(rec.end - rec.start);
            self.spins.push(rec);
        }
    }

    /// Every vCPU's state over `[from_ns, to_ns)`, by vCPU and then time, at most `limit` spans: running or
    /// queued as the run-queue snapshots say (the scheduler's view), blocked otherwise, and spinning where running
    /// CPU was charged as spin. Contiguous spans in one state are one span. Nothing past the trace's detail.
    pub fn vcpu_states(&self, from_ns: u64, to_ns: u64, limit: usize) -> Vec<VcpuSpan> {
        // A replay window's trace (`detail_only`) has no run end (0): its window bounds the question.
        let end = if self.end == 0 { u64::MAX } else { self.end };
        let to_ns = to_ns.min(end).min(self.detail_until_ns.unwrap_or(u64::MAX));
        let nv = self.vcpu_dom.len();
        if from_ns >= to_ns || nv == 0 {
            return Vec::new();
        }
        // How many pCPUs run and queue each vCPU now (a snapshot adds to them, the next one on its pCPU undoes it).
        let mut counts = (vec![0u32; nv], vec![0u32; nv]);
        let touch = |(running, queued): &mut (Vec<u32>, Vec<u32>),
                     (run, wait): (Option<&RqCell>, &[RqCell]),
                     d: i32,
                     touched: &mut Vec<usize>| {
            let entries = run.into_iter().map(|e| (e, true)).chain(wait.iter().map(|e| (e, false)));
            for (e, is_running) in entries {
                let v = e.vcpu as usize;
                if v < nv {
                    let count = if is_running { &mut running[v] } else { &mut queued[v] };
                    *count = count.wrapping_add_signed(d);
                    touched.push(v);
                }
            }
        };
        let mut touched = Vec::new();
        // Each pCPU's snapshot at `from_ns`, and a cursor over its later ones in the window (merged in time order
        // as they are read: a wide window is never copied, and reading stops at the limit).
        let mut current: Vec<Option<usize>> = Vec::with_capacity(self.pcpus);
        let mut cursor: Vec<(usize, usize)> = Vec::with_capacity(self.pcpus);
        for lane in &self.runqueues {
            let i = lane.recs.partition_point(|s| s.t_ns <= from_ns);
            let at = i.checked_sub(1);
            if let Some(k) = at {
                touch(&mut counts, lane.entries(k), 1, &mut touched);
            }
            current.push(at);
            cursor.push((i, lane.recs.partition_point(|s| s.t_ns < to_ns)));
        }
        // The pCPU whose next snapshot comes first (the lowest pCPU on a tie), and its time.
        let next = |cursor: &[(usize, usize)]| {
            let lanes = self.runqueues.iter().zip(cursor).enumerate();
            lanes.filter(|(_, (_, &(i, end)))| i < end).map(|(p, (l, &(i, _)))| (l.recs[i].t_ns, p)).min()
        };
        let state_of = |(running, queued): &(Vec<u32>, Vec<u32>), v: usize| {
            if running[v] > 0 {
                VcpuState::Running
            } else if queued[v] > 0 {
                VcpuState::Runnable
            } else {
                VcpuState::Blocked
            }
        };
        let mut open: Vec<(u64, VcpuState)> = (0..nv).map(|v| (from_ns, state_of(&counts, v))).collect();
        let mut by_vcpu: Vec<Vec<VcpuSpan>> = vec![Vec::new(); nv];
        let mut count = 0;
        while let Some((t, _)) = next(&cursor).filter(|_| count <= limit) {
            touched.clear();
            // Every snapshot of this instant, then the states it leaves.
            while let Some((_, p)) = next(&cursor).filter(|&(tn, _)| tn == t) {
                let lane = &self.runqueues[p];
                if let Some(old) = current[p] {
                    touch(&mut counts, lane.entries(old), -1, &mut touched);
                }
                touch(&mut counts, lane.entries(cursor[p].0), 1, &mut touched);
                current[p] = Some(cursor[p].0);
                cursor[p].0 += 1;
            }
            for &v in &touched {
                let s = state_of(&counts, v);
                let (start, was) = open[v];
                if s != was {
                    if t > start {
                        by_vcpu[v].push(VcpuSpan { vcpu: v as u32, start, end: t, state: was });
                        count += 1;
                    }
                    open[v] = (t, s);
                }
            }
        }
        for (v, &(start, state)) in open.iter().enumerate() {
            if to_ns > start {
                by_vcpu[v].push(VcpuSpan { vcpu: v as u32, start, end: to_ns, state });
            }
        }
        // Spin stretches that overlap the window, per vCPU in time order (stretches end in order and are at most
        // `max_spin_ns` long).
        let mut spins: Vec<Vec<(u64, u64)>> = vec![Vec::new(); nv];
        let first = self.spins.partition_point(|s| s.end <= from_ns);
        for s in self.spins[first..].iter().take_while(|s| s.end < to_ns.saturating_add(self.max_spin_ns)) {
            if s.start < to_ns && (s.vcpu as usize) < nv {
                spins[s.vcpu as usize].push((s.start.max(from_ns), s.end.min(to_ns)));
            }
        }
        let mut out = Vec::new();
        for (spans, spins) in by_vcpu.iter().zip(&spins) {
            let mut j = 0;
            for span in spans {
                if span.state != VcpuState::Running {
                    push_merged(&mut out, *span);
                    continue;
                }
                let mut t = span.start;
                while j < spins.len() && spins[j].0 < span.end {
                    let (a, b) = (spins[j].0.max(t), spins[j].1.min(span.end));
                    if b > a {
                        push_merged(&mut out, VcpuSpan { start: t, end: a, ..*span });
                        push_merged(&mut out, VcpuSpan { start: a, end: b, state: VcpuState::Spinning, ..*span });
                        t = b;
                    }
                    if spins[j].1 > span.end {
                        break;
                    }
                    j += 1;
                }
                push_merged(&mut out, VcpuSpan { start: t, ..*span });
            }
        }
        out.truncate(limit);
        out
    }

    /// Rows of 4 numbers: vcpu, start_ns, end_ns, state code (see [`VcpuState`]); as `vcpu_states`, but only
    /// within `held` (as for [`Trace::vcpu_state_shares`]), so no state is drawn past the detail a run holds.
    pub fn vcpu_states_flat(&self, from_ns: u64, to_ns: u64, limit: usize, held: (u64, u64)) -> Vec<f64> {
        self.vcpu_states(from_ns.max(held.0), to_ns.min(held.1), limit)
            .iter()
            .flat_map(|s| [f64::from(s.vcpu), s.start as f64, s.end as f64, f64::from(s.state as u8)])
            .collect()
    }

    /// The state lanes at a zoom too dense for spans (issue: dense windows): `[from_ns, to_ns)` cut into `buckets`
    /// equal columns (edges at whole ns), and for each vCPU, column and state (`VcpuState` code) the share of the
    /// column's time the vCPU spent in it [0, 1], at `(vcpu * buckets + column) * 4 + state`. Only the detail in
    /// `held` (a replay run's focused window; `(0, u64::MAX)` for a whole trace) counts: shares of a column sum
    /// to less than 1 where the trace holds no detail. Its size is `vcpus * buckets * 4`, whatever the window
    /// holds; the spans it sums are the trace's detail in the window (bounded by its memory budget).
    pub fn vcpu_state_shares(&self, from_ns: u64, to_ns: u64, buckets: usize, held: (u64, u64)) -> Vec<f64> {
        let nv = self.vcpu_dom.len();
        let mut out = vec![0.0; nv * buckets * 4];
        if buckets == 0 || to_ns <= from_ns {
            return out;
        }
        let edges = Buckets::new(from_ns, to_ns, buckets);
        for span in self.vcpu_states(from_ns.max(held.0), to_ns.min(held.1), usize::MAX) {
            let base = span.vcpu as usize * buckets;
            edges.spread(span.start, span.end, |b, ns, len| {
                out[(base + b) * 4 + span.state as usize] += ns as f64 / len as f64;
            });
        }
        out
    }

    /// Wake-to-run latency per domain over time (the heat map view): `[from_ns, to_ns)` cut into `buckets` equal
    /// columns, and for each domain and column the wake-ups whose vCPU woke there (blocked, then runnable or at
    /// once running or spinning, as the state lanes show them), as three numbers at `(domain * buckets + column)
    /// * 3`: how many, their summed latency [ns] and the longest [ns]. A wake-up counts once its dispatch is in
    /// the detail held (`held`, as for [`Trace::vcpu_state_shares`]); its size is `domains * buckets * 3`.
    pub fn wake_latency_map(&self, from_ns: u64, to_ns: u64, buckets: usize, held: (u64, u64)) -> Vec<f64> {
        let mut out = vec![0.0; self.ndomains * buckets * 3];
        if buckets == 0 || to_ns <= from_ns {
            return out;
        }
        let edges = Buckets::new(from_ns, to_ns, buckets);
        // From the held window's start, not the map's: a wake in the map may follow a block before it.
        let spans = self.vcpu_states(held.0, to_ns.min(held.1), usize::MAX);
        let on_cpu = |s: &VcpuSpan| matches!(s.state, VcpuState::Running | VcpuState::Spinning);
        for (i, pair) in spans.windows(2).enumerate() {
            let [a, b] = [&pair[0], &pair[1]];
            if a.vcpu != b.vcpu || a.state != VcpuState::Blocked || !(from_ns..to_ns).contains(&b.start) {
                continue;
            }
            let next = spans.get(i + 2).filter(|c| c.vcpu == b.vcpu);
            let latency = match b.state {
                _ if on_cpu(b) => 0,
                VcpuState::Runnable if next.is_some_and(on_cpu) => b.end - b.start,
                _ => continue,
            };
            let Some(&d) = self.vcpu_dom.get(b.vcpu as usize) else { continue };
            let cell = (d * buckets + edges.of(b.start)) * 3;
            out[cell] += 1.0;
            out[cell + 1] += latency as f64;
            out[cell + 2] = out[cell + 2].max(latency as f64);
        }
        out
    }

    /// Delivered notifications per column of `[from_ns, to_ns)` cut into `buckets` equal columns (by delivery
    /// time): the I/O strip at a zoom too dense for one bar per notification. Only deliveries in `held` count (as
    /// for [`Trace::vcpu_state_shares`]).
    pub fn io_delivery_counts(&self, from_ns: u64, to_ns: u64, buckets: usize, held: (u64, u64)) -> Vec<u32> {
        let mut out = vec![0; buckets];
        if buckets == 0 || to_ns <= from_ns {
            return out;
        }
        let edges = Buckets::new(from_ns, to_ns, buckets);
        // Compared by label index: no string comparison per notification.
        let Some(delivered) = self.labels.find("delivered") else { return out };
        for r in window(&self.io, |r| r.t_ns, from_ns.max(held.0), to_ns.min(held.1), usize::MAX) {
            if r.phase == delivered {
                out[edges.of(r.t_ns)] += 1;
            }
        }
        out
    }

    /// The run-queue snapshots of every pCPU with `from_ns < t <= to_ns`, in time order (pCPU by pCPU within an
    /// instant, each pCPU's in the order they were taken); `None` when there are more than `limit`.
    pub fn runqueue_changes(&self, from_ns: u64, to_ns: u64, limit: usize) -> Option<Vec<RqChange>> {
        let mut out = Vec::new();
        for (p, lane) in self.runqueues.iter().enumerate() {
            let a = lane.recs.partition_point(|s| s.t_ns <= from_ns);
            let b = lane.recs.partition_point(|s| s.t_ns <= to_ns);
            if out.len() + b.saturating_sub(a) > limit {
                return None;
            }
            out.extend((a..b.max(a)).map(|i| RqChange { pcpu: p as u32, snap: self.rq_snap(p, i) }));
        }
        // Stable: within an instant and a pCPU, the order they were taken.
        out.sort_by_key(|c| (c.snap.t_ns, c.pcpu));
        Some(out)
    }

    /// Every pCPU's run queue as it was at `t_ns` (`None` before its first snapshot).
    pub fn runqueues_at(&self, t_ns: u64) -> Vec<Option<RqSnap>> {
        let at = |(p, l): (usize, &RqLane)| {
            l.recs.partition_point(|s| s.t_ns <= t_ns).checked_sub(1).map(|i| self.rq_snap(p, i))
        };
        self.runqueues.iter().enumerate().map(at).collect()
    }

    /// All snapshots of one pCPU.
    pub fn runqueue_history(&self, p: usize) -> Vec<RqSnap> {
        (0..self.runqueues[p].recs.len()).map(|i| self.rq_snap(p, i)).collect()
    }

    pub fn segments(&self) -> &[Segment] {
        &self.segments
    }

    /// Rows of 5 numbers: pcpu, start_ns, end_ns, vcpu, task (exact in f64 up to 2^53 ns, about 104 days).
    pub fn segments_flat(&self) -> Vec<f64> {
        let mut out = Vec::with_capacity(self.segments.len() * 5);
        for s in &self.segments {
            out.extend_from_slice(&[
                f64::from(s.pcpu),
                s.start as f64,
                s.end as f64,
                f64::from(s.vcpu),
                f64::from(s.task),
            ]);
        }
        out
    }

    /// CPU share of the host per domain in consecutive buckets of `bucket_ns`: row-major, one row per bucket.
    pub fn share_series(&self, bucket_ns: u64) -> Vec<f64> {
        let bucket = bucket_ns.max(1);
        if self.detail_until_ns.is_some() || bucket >= self.agg_bucket_ns {
            return self.share_series_from_aggregate(bucket);
        }
        let nb = self.end.div_ceil(bucket) as usize;
        let nd = self.ndomains;
        let mut busy = vec![0u64; nb * nd];
        for s in &self.segments {
            let d = self.vcpu_dom[s.vcpu as usize];
            let mut t = s.start;
            while t < s.end {
                let b = (t / bucket) as usize;
                let b_end = ((b as u64 + 1) * bucket).min(s.end);
                if b < nb {
                    busy[b * nd + d] += b_end - t;
                }
                t = b_end;
            }
        }
        busy.iter()
            .enumerate()
            .map(|(i, &ns)| {
                let b = (i / nd) as u64;
                let len = ((b + 1) * bucket).min(self.end) - b * bucket;
                ns as f64 / (len as f64 * self.pcpus as f64)
            })
            .collect()
    }

    /// The same from the aggregate (resolution: its bucket; the requested bucket is rounded up to a multiple).
    fn share_series_from_aggregate(&self, bucket_ns: u64) -> Vec<f64> {
        let k = bucket_ns.div_ceil(self.agg_bucket_ns).max(1) as usize;
        let bucket = self.agg_bucket_ns * k as u64;
        let nd = self.ndomains;
        let nb_agg = self.agg.len() / nd.max(1);
        let nb = nb_agg.div_ceil(k);
        let mut out = vec![0.0; nb * nd];
        for b in 0..nb {
            let start = b as u64 * bucket;
            let len = (start + bucket).min(self.end) - start;
            for d in 0..nd {
                let ns: u64 = (b * k..((b + 1) * k).min(nb_agg)).map(|a| self.agg[a * nd + d]).sum();
                out[b * nd + d] = ns as f64 / (len as f64 * self.pcpus as f64);
            }
        }
        out
    }

    /// Decisions with `from_ns <= t < to_ns`, at most `limit`.
    pub fn decisions(&self, from_ns: u64, to_ns: u64, limit: usize) -> Vec<DecisionRec<'_>> {
        let start = self.decisions.partition_point(|d| d.t_ns < from_ns);
        self.decisions[start..]
            .iter()
            .take_while(|d| d.t_ns < to_ns)
            .take(limit)
            .map(|d| DecisionRec { t_ns: d.t_ns, pcpu: d.pcpu, text: self.decision_text(d) })
            .collect()
    }

    fn decision_text(&self, d: &Decision) -> Cow<'_, str> {
        if d.chunk != FACTS {
            return Cow::Borrowed(&self.text[d.chunk as usize][d.start as usize..(d.start + d.len) as usize]);
        }
        let kind = &self.fact_kinds[d.len as usize];
        let mut args = [0; FACT_ARGS];
        let mut bytes = &self.fact_bytes[d.start as usize..];
        for a in &mut args {
            // The bytes are those `push_decision_facts` wrote: FACT_ARGS numbers from `start`.
            *a = leb128::read::signed(&mut bytes).unwrap_or_default();
        }
        let f = Facts { write: kind.write, args, word: kind.word };
        let mut s = String::with_capacity(96);
        if !kind.prefix.is_empty() {
            s.push_str(kind.prefix);
            s.push_str(": ");
        }
        (f.write)(&f, &self.vcpu_name, &mut s);
        Cow::Owned(s)
    }

    pub fn decision_count(&self) -> usize {
        self.decisions.len()
    }
}

/// Appends `span` to `out`, extending the last span instead when it is the same vCPU's, in the same state and
/// contiguous; empty spans are dropped.
fn push_merged(out: &mut Vec<VcpuSpan>, span: VcpuSpan) {
    if span.end <= span.start {
        return;
    }
    if let Some(last) = out.last_mut() {
        if last.vcpu == span.vcpu && last.state == span.state && last.end == span.start {
            last.end = span.end;
            return;
        }
    }
    out.push(span);
}

/// Finest bucket of the per-vCPU CPU record behind Lag [ns].
const USAGE_BUCKET_MIN_NS: u64 = 1_000_000;
/// Most (vCPU x bucket) cells of that record; longer or larger runs get coarser buckets.
pub(crate) const USAGE_MAX_CELLS: u64 = 4_000_000;

/// CPU time each vCPU received, in fixed buckets over the whole run. Kept whether or not detail is recorded,
/// because the report's Lag (paper 001, equation 1) is computed from it.
pub struct VcpuUsage {
    bucket_ns: u64,
    nb: usize,
    nv: usize,
    /// CPU per bucket per vCPU [ns], row-major by vCPU.
    cells: Vec<u64>,
}

/// Every vCPU's Lag over time: `t_ns` are bucket boundaries, `lag_ns[v][k]` the Lag of vCPU `v` at `t_ns[k]`.
#[derive(Debug, Clone, PartialEq)]
pub struct LagSeries {
    pub t_ns: Vec<u64>,
    pub lag_ns: Vec<Vec<i64>>,
}

impl VcpuUsage {
    pub fn new(nv: usize, end: u64) -> VcpuUsage {
        let min_bucket = end.div_ceil(USAGE_MAX_CELLS / nv.max(1) as u64).max(1);
        let bucket_ns = USAGE_BUCKET_MIN_NS.max(min_bucket);
        let nb = end.div_ceil(bucket_ns) as usize;
        VcpuUsage { bucket_ns, nb, nv, cells: vec![0; nb * nv] }
    }

    /// Width of a bucket [ns].
    pub fn bucket_ns(&self) -> u64 {
        self.bucket_ns
    }

    /// Records that vCPU `v` ran during `[start, end)` [ns].
    pub fn add(&mut self, v: usize, start: u64, end: u64) {
        let mut t = start;
        while t < end {
            let b = (t / self.bucket_ns) as usize;
            let b_end = ((b as u64 + 1) * self.bucket_ns).min(end);
            if b < self.nb {
                self.cells[v * self.nb + b] += b_end - t;
            }
            t = b_end;
        }
    }

    /// Lag(t, v) = (t - t0) x rate_v - Received(v, t0, t) (equation 1 of paper 001, from `t0` rather than 0) at
    /// every bucket boundary from the first one at or after `from` up to `until`. `rate_v` is the vCPU's
    /// entitlement in pCPUs: |P| x w(V_i) / |V_i|. Positive Lag: the vCPU is behind its share.
    pub fn lag(&self, rates: &[f64], from: u64, until: u64) -> LagSeries {
        let b0 = from.div_ceil(self.bucket_ns) as usize;
        let b1 = ((until / self.bucket_ns) as usize).min(self.nb);
        let t0 = b0 as u64 * self.bucket_ns;
        let t_ns: Vec<u64> = (b0..=b1.max(b0)).map(|b| (b as u64 * self.bucket_ns).min(until.max(t0))).collect();
        let lag_ns = (0..self.nv)
            .map(|v| {
                let mut received = 0u64;
                let mut out = Vec::with_capacity(t_ns.len());
                for (k, &t) in t_ns.iter().enumerate() {
                    if k > 0 {
                        received += self.cells[v * self.nb + b0 + k - 1];
                    }
                    let entitled = (t - t0) as f64 * rates.get(v).copied().unwrap_or(0.0);
                    out.push((entitled - received as f64).round() as i64);
                }
                out
            })
            .collect();
        LagSeries { t_ns, lag_ns }
    }
}

impl Trace {
    /// What each kind of record holds on the heap [bytes], largest first: where a window's memory goes.
    pub fn breakdown(&self) -> Vec<(&'static str, usize)> {
        use crate::size::HeapSize;
        let mut parts = vec![
            ("segments", self.segments.heap_size()),
            ("decisions", self.decisions.heap_size()),
            ("decision text", self.text.heap_size()),
            ("decision facts", self.fact_kinds.heap_size() + self.fact_bytes.heap_size()),
            ("io events", self.io.heap_size()),
            ("task states", self.task_states.heap_size()),
            ("beliefs and boosts", self.beliefs.heap_size() + self.boosts.heap_size()),
            ("run queues", self.runqueues.heap_size()),
            ("aggregates", self.agg.heap_size()),
        ];
        parts.sort_by_key(|p| std::cmp::Reverse(p.1));
        parts
    }
}

crate::size::no_heap!(Segment, Decision, Facts, IoRec, TaskRec, BeliefRec, BoostRec);

impl crate::size::HeapSize for RqEntry {
    fn heap_size(&self) -> usize {
        match &self.pri {
            Cow::Borrowed(_) => 0,
            Cow::Owned(s) => s.capacity(),
        }
    }
}
crate::size::no_heap!(FactKind, IoCell, TaskCell, RqCell, RqRec);
crate::size::heap_size!(RqSnap { queued });
crate::size::heap_size!(RqLane { recs, cells });
crate::size::heap_size!(Trace {
    segments,
    last_of_pcpu,
    decisions,
    text,
    fact_kinds,
    fact_bytes,
    io,
    task_states,
    beliefs,
    boosts,
    runqueues,
    vcpu_dom,
    agg,
    scratch,
});
crate::size::heap_size!(VcpuUsage { cells });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::policy::Pri;

    #[test]
    fn contiguous_equal_segments_merge() {
        let mut t = Trace::new(1, vec![0], 1, 100);
        t.push_segment(Segment { pcpu: 0, start: 0, end: 10, vcpu: 0, task: 0 });
        t.push_segment(Segment { pcpu: 0, start: 10, end: 20, vcpu: 0, task: 0 });
        t.push_segment(Segment { pcpu: 0, start: 20, end: 20, vcpu: 0, task: 1 });
        t.push_segment(Segment { pcpu: 0, start: 20, end: 30, vcpu: 0, task: 1 });
        assert_eq!(t.segments().len(), 2);
        assert_eq!(t.segments()[0].end, 20);
    }

    /// A window query with no limit (`usize::MAX`) past its first record returns the records, not an empty
    /// slice from an overflowed end.
    #[test]
    fn window_without_limit() {
        let mut t = Trace::new(1, vec![0], 1, 100);
        for t_ns in [5, 10, 10, 20] {
            t.push_task_state(TaskRec { t_ns, task: 0, state: "runnable" });
        }
        assert_eq!(t.task_states(10, 11, usize::MAX).len(), 2);
        assert_eq!(t.task_states(6, 100, 1).len(), 1);
    }

    #[test]
    fn detail_stops_at_the_budget_but_shares_stay_complete() {
        let seg = std::mem::size_of::<Segment>();
        // Room for the first allocation of 4 segments only.
        let mut t = Trace::with_budget(1, vec![0, 1], 2, 100_000_000, 4 * seg);
        for i in 0..10u64 {
            let s = i * 10_000_000;
            t.push_segment(Segment { pcpu: 0, start: s, end: s + 10_000_000, vcpu: (i % 2) as u32, task: 0 });
        }
        assert_eq!(t.segments().len(), 4);
        assert_eq!(t.detail_until_ns, Some(40_000_000));
        let shares = t.share_series(50_000_000);
        // Two 50 ms buckets of alternating 10 ms stretches, complete although detail stopped at 30 ms.
        assert_eq!(shares, vec![0.6, 0.4, 0.4, 0.6]);
    }

    #[test]
    fn share_series_splits_segments_across_buckets() {
        let mut t = Trace::new(2, vec![0, 1], 2, 100);
        t.push_segment(Segment { pcpu: 0, start: 0, end: 75, vcpu: 0, task: 0 });
        t.push_segment(Segment { pcpu: 1, start: 25, end: 100, vcpu: 1, task: 1 });
        let s = t.share_series(50);
        // bucket 0: dom0 50/100, dom1 25/100; bucket 1: dom0 25/100, dom1 50/100
        assert_eq!(s, vec![0.5, 0.25, 0.25, 0.5]);
    }

    /// One vCPU entitled to half a pCPU that runs the first 2 ms of every 4 ms: Lag swings between -1 and +1 ms.
    #[test]
    fn lag_follows_equation_1() {
        let mut u = VcpuUsage::new(1, 8_000_000);
        for k in 0..2u64 {
            u.add(0, k * 4_000_000, k * 4_000_000 + 2_000_000);
        }
        let l = u.lag(&[0.5], 0, 8_000_000);
        assert_eq!(l.t_ns, (0..=8).map(|k| k * 1_000_000).collect::<Vec<_>>());
        assert_eq!(l.lag_ns[0], vec![0, -500_000, -1_000_000, -500_000, 0, -500_000, -1_000_000, -500_000, 0]);
    }

    /// Two vCPUs on one pCPU over 100 ns: v0 runs, then queues behind v1, which spins 35-60; both block at the end.
    fn two_vcpus_one_pcpu() -> Trace {
        let e = |vcpu| RqEntry { vcpu, pri: "UNDER".into(), class: PriClass::Under, credit: None };
        let mut t = Trace::new(1, vec![0, 0], 1, 100);
        t.push_runqueue(0, 0, Some(e(0)), &[]);
        t.push_runqueue(0, 10, Some(e(0)), &[e(1)]);
        t.push_runqueue(0, 30, Some(e(1)), &[e(0)]);
        t.push_runqueue(0, 50, Some(e(1)), &[]);
        t.push_runqueue(0, 70, None, &[]);
        t.push_spin(SpinRec { vcpu: 1, start: 35, end: 45 });
        t.push_spin(SpinRec { vcpu: 1, start: 45, end: 60 });
        t
    }

    /// The state lanes: running and queued from the run-queue snapshots, blocked in between, spinning where
    /// running CPU was charged as spin, contiguous equal spans merged and the window cut at its ends.
    #[test]
    fn vcpu_states_from_snapshots_and_spins() {
        use VcpuState::*;
        let t = two_vcpus_one_pcpu();
        let span = |vcpu, start, end, state| VcpuSpan { vcpu, start, end, state };
        assert_eq!(
            t.vcpu_states(0, 100, usize::MAX),
            vec![
                span(0, 0, 30, Running),
                span(0, 30, 50, Runnable),
                span(0, 50, 100, Blocked),
                span(1, 0, 10, Blocked),
                span(1, 10, 30, Runnable),
                span(1, 30, 35, Running),
                span(1, 35, 60, Spinning),
                span(1, 60, 70, Running),
                span(1, 70, 100, Blocked),
            ]
        );
        // A window starts in the state its first snapshot before it says, and spins are cut to it.
        assert_eq!(
            t.vcpu_states(40, 55, usize::MAX),
            vec![span(0, 40, 50, Runnable), span(0, 50, 55, Blocked), span(1, 40, 55, Spinning)]
        );
        assert_eq!(t.vcpu_states(40, 55, 2).len(), 2);
        assert_eq!(t.vcpu_states_flat(40, 50, 1, (0, u64::MAX)), vec![0.0, 40.0, 50.0, 2.0]);
        // Held detail bounds the answer, whatever is asked.
        assert_eq!(t.vcpu_states_flat(0, 100, 1, (40, 50)), vec![0.0, 40.0, 50.0, 2.0]);
    }

    /// The dense-window aggregate: each column's share of time per state is exact (the spans of the test above,
    /// in columns of 25 ns), a span crossing columns is split at their edges, and only deliveries are counted.
    #[test]
    fn state_shares_and_io_counts_per_column() {
        let mut t = two_vcpus_one_pcpu();
        const ALL: (u64, u64) = (0, u64::MAX);
        let s = t.vcpu_state_shares(0, 100, 4, ALL);
        assert_eq!(s.len(), 2 * 4 * 4);
        // Rows: vCPU 0 columns 0..4, then vCPU 1; each [running, spinning, runnable, blocked].
        let col = |v: usize, k: usize| s[(v * 4 + k) * 4..(v * 4 + k) * 4 + 4].to_vec();
        assert_eq!(col(0, 0), vec![1.0, 0.0, 0.0, 0.0]);
        assert_eq!(col(0, 1), vec![0.2, 0.0, 0.8, 0.0]);
        assert_eq!(col(0, 2), vec![0.0, 0.0, 0.0, 1.0]);
        assert_eq!(col(1, 0), vec![0.0, 0.0, 0.6, 0.4]);
        assert_eq!(col(1, 1), vec![0.2, 0.6, 0.2, 0.0]);
        assert_eq!(col(1, 2), vec![0.4, 0.4, 0.0, 0.2]);
        assert_eq!(col(1, 3), vec![0.0, 0.0, 0.0, 1.0]);
        // Uneven columns (100 ns in 3: edges 0, 33, 66, 100) still cover the window once.
        let s = t.vcpu_state_shares(0, 100, 3, ALL);
        let covered: f64 =
            (0..3).map(|k| s[(3 + k) * 4..(3 + k) * 4 + 4].iter().sum::<f64>() * [33.0, 33.0, 34.0][k]).sum();
        assert!((covered - 100.0).abs() < 1e-9, "{covered}");
        for (t_ns, phase) in [(5, "pending"), (5, "delivered"), (24, "delivered"), (25, "delivered"), (99, "delivered")]
        {
            t.push_io(IoRec { t_ns, vcpu: 0, kind: "packet", phase, wait_ns: 0 });
        }
        assert_eq!(t.io_delivery_counts(0, 100, 4, ALL), vec![2, 1, 0, 1]);
        assert_eq!(t.io_delivery_counts(0, 100, 3, ALL), vec![3, 0, 1]);
        assert_eq!(t.io_delivery_counts(20, 30, 0, ALL), Vec::<u32>::new());
        // Outside the detail held (a replay run's window, here [10, 40)) nothing is claimed: no time, no count.
        let s = t.vcpu_state_shares(0, 100, 4, (10, 40));
        assert_eq!(s[0..4].to_vec(), vec![0.6, 0.0, 0.0, 0.0]);
        assert_eq!(s[8..16].to_vec(), vec![0.0; 8]);
        assert_eq!(t.io_delivery_counts(0, 100, 4, (10, 40)), vec![1, 1, 0, 0]);
    }

    /// A snapshot keeps each entry's label and class in a 16-byte cell, run-time labels too; a policy making
    /// ever new labels (a script) has the ones past the table's size stored as one overflow label.
    #[test]
    fn runqueue_cells_keep_label_and_class() {
        assert_eq!(std::mem::size_of::<RqCell>(), 16);
        let mut t = Trace::new(1, vec![0; 300], 1, 100);
        let made = |vcpu: u32, label: String| {
            let p = Pri::from_label(label);
            RqEntry { vcpu, pri: p.label, class: p.class, credit: Some(-3) }
        };
        let boost = RqEntry { vcpu: 1, pri: "WARP".into(), class: PriClass::Boost, credit: None };
        t.push_runqueue(0, 0, Some(made(0, "mine".into())), &[boost.clone(), made(2, "over".into())]);
        let s = t.runqueues_at(0)[0].clone().unwrap();
        assert_eq!(s.running, Some(made(0, "mine".into())));
        assert_eq!(s.running.as_ref().unwrap().class, PriClass::Other);
        assert_eq!(s.queued, vec![boost, made(2, "over".into())]);
        assert_eq!(s.queued[1].class, PriClass::Over);
        let json = serde_json::to_value(&s.queued[0]).unwrap();
        assert_eq!(json, serde_json::json!({ "vcpu": 1, "pri": "WARP", "class": "boost" }));
        let many: Vec<RqEntry> = (0..300).map(|i| made(i, format!("L{i}"))).collect();
        t.push_runqueue(0, 10, None, &many);
        let s = t.runqueues_at(10)[0].clone().unwrap();
        assert_eq!(s.queued[200].pri, "L200");
        assert_eq!(s.queued[299].pri, PriLabels::OVERFLOW);
    }

    /// Changes within one instant are kept as steps (up to a few), and a window lists every pCPU's in time order.
    #[test]
    fn runqueue_changes_keep_the_steps_of_an_instant() {
        let e =
            |vcpu, pri: &'static str| RqEntry { vcpu, pri: pri.into(), class: PriClass::of_label(pri), credit: None };
        let mut t = Trace::new(2, vec![0, 0, 0], 1, 100);
        t.push_runqueue(0, 0, Some(e(0, "UNDER")), &[e(1, "UNDER")]);
        t.push_runqueue(1, 5, None, &[]);
        // At 10 vCPU 2 wakes with BOOST at the head of the queue, then is dispatched.
        t.push_runqueue(0, 10, Some(e(0, "UNDER")), &[e(2, "BOOST"), e(1, "UNDER")]);
        t.push_runqueue(0, 10, Some(e(2, "BOOST")), &[e(0, "UNDER"), e(1, "UNDER")]);
        t.push_runqueue(1, 10, Some(e(1, "UNDER")), &[]);
        let changes = t.runqueue_changes(0, 10, usize::MAX).unwrap();
        let order: Vec<(u64, u32, Option<u32>)> =
            changes.iter().map(|c| (c.snap.t_ns, c.pcpu, c.snap.running.as_ref().map(|r| r.vcpu))).collect();
        assert_eq!(order, vec![(5, 1, None), (10, 0, Some(0)), (10, 0, Some(2)), (10, 1, Some(1))]);
        assert_eq!(changes[1].snap.queued[0].pri, "BOOST");
        // The state at an instant is its last step.
        assert_eq!(t.runqueues_at(10)[0].as_ref().unwrap().running.as_ref().unwrap().vcpu, 2);
        assert!(t.runqueue_changes(0, 10, 3).is_none());
        // Past a few steps in one instant only the last state is kept.
        for k in 0..10 {
            t.push_runqueue(1, 20, Some(e(k % 3, "UNDER")), &[]);
        }
        assert_eq!(t.runqueue_changes(10, 20, usize::MAX).unwrap().len(), SAME_INSTANT_SNAPS);
    }

    /// A window's detail is stored compactly (issue 19's memory bound): a run-queue snapshot costs 16 bytes per
    /// entry plus 16, a decision kept as facts its 24-byte record and a byte or two per small number, and both
    /// read back exactly as pushed. Bounds allow for `Vec`'s doubling.
    #[test]
    fn detail_is_stored_compactly_and_reads_back_as_pushed() {
        use crate::size::HeapSize;
        fn write(f: &Facts, names: &[String], out: &mut String) {
            use std::fmt::Write;
            let _ = write!(out, "{} {} {:?} {}", names[f.args[0] as usize], f.word, &f.args[1..9], f.args[9]);
        }
        const N: usize = 10_000;
        let mut t = Trace::detail_only(1, vec![0; 4], 1);
        t.set_vcpu_names(Arc::from(vec!["a".to_string(), "b".into(), "c".into(), "d".into()]));
        let e = |vcpu, credit| {
            let pri = if credit > 0 { Pri::new(PriClass::Under, "UNDER") } else { Pri::new(PriClass::Over, "OVER") };
            RqEntry { vcpu, pri: pri.label, class: pri.class, credit: Some(credit) }
        };
        for k in 0..N as u64 {
            let c = k as i64 % 600 - 300;
            t.push_runqueue(0, k, Some(e(k as u32 % 4, c)), &[e(1, c + 1), e(2, -c), e(3, 7)]);
            let args = [k as i64 % 4, -1, 2, c, 300, 0, 1, -c, 5, i64::from(k as u32)];
            t.push_decision_facts(k, 0, if k % 2 == 0 { "tick" } else { "" }, Facts { write, args, word: "wake" });
        }
        let rq = t.runqueues.heap_size();
        assert!(rq <= 2 * N * (16 + 4 * 16), "run queues: {rq} bytes for {N} snapshots of 4 entries");
        let facts = t.decisions.heap_size() + t.fact_bytes.heap_size();
        assert!(facts <= 2 * N * (24 + 16), "decisions: {facts} bytes for {N}");
        let snap = &t.runqueue_changes(4_999, 5_000, 1).unwrap()[0].snap;
        assert_eq!(
            (snap.running.clone(), snap.queued.clone()),
            (Some(e(0, -100)), vec![e(1, -99), e(2, 100), e(3, 7)])
        );
        assert_eq!(t.decisions(5_000, 5_001, 1)[0].text, "tick: a wake [-1, 2, -100, 300, 0, 1, 100, 5] 5000");
        assert_eq!(t.decisions(5_001, 5_002, 1)[0].text, "b wake [-1, 2, -99, 300, 0, 1, 99, 5] 5001");
    }
}
