//! The recorded trace the UI replays: per-pCPU schedule segments (vCPU and guest task) and every scheduling
//! decision with its one-line reason. Views derive what they draw (share over time, Gantt lanes) from it.

use crate::model::PriClass;
use serde::Serialize;
use std::borrow::Cow;
use std::sync::Arc;

mod decisions;
mod records;
mod runqueue;
mod usage;
mod views;

use decisions::*;
pub use records::*;
use runqueue::*;
pub use runqueue::{RqChange, RqEntry, RqSnap};
pub use usage::*;

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
    decisions: Vec<DecisionCell>,
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

crate::size::no_heap!(IoCell, TaskCell);

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

#[cfg(test)]
mod tests;
