//! Run-queue snapshots per pCPU, recorded whenever one changes and stored as interned cells.

use super::*;

/// Interned priority labels, like [`Labels`] but owning the ones made at run time (a script policy's words). A
/// script could make a new word at every call: past [`PriLabels::MAX`] distinct ones, the rest are stored as
/// [`PriLabels::OVERFLOW`] rather than growing without bound.
#[derive(Debug, Clone, Default)]
pub(super) struct PriLabels(Vec<Cow<'static, str>>);

impl PriLabels {
    /// Most distinct labels kept (one index is the overflow's).
    pub(super) const MAX: usize = u8::MAX as usize;
    /// What a label past the first `MAX` is stored as.
    pub(super) const OVERFLOW: &'static str = "…";

    // The Cow, not a &str: a new static label is kept borrowed, with no copy.
    #[allow(clippy::ptr_arg)]
    pub(super) fn id(&mut self, label: &Cow<'static, str>) -> u8 {
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

    pub(super) fn get(&self, id: u8) -> Cow<'static, str> {
        self.0[id as usize].clone()
    }
}
/// An [`RqEntry`] as stored (16 bytes instead of 48); `vcpu` is [`NO_VCPU`] in the running slot of an idle pCPU.
/// The label is interned in the trace's priority labels; the class is kept beside it (it fits the padding).
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct RqCell {
    pub(super) credit: i64,
    pub(super) vcpu: u32,
    pub(super) pri: u8,
    pub(super) class: PriClass,
    pub(super) has_credit: bool,
}

pub(super) const NO_VCPU: u32 = u32::MAX;

/// A run-queue snapshot as stored: `cells[at]` is what runs, the next `queued` cells what waits, in its lane's
/// cell arena (no allocation per snapshot).
#[derive(Debug, Clone, Copy)]
pub(super) struct RqRec {
    pub(super) t_ns: u64,
    pub(super) at: u32,
    pub(super) queued: u32,
}

/// One pCPU's run-queue snapshots.
#[derive(Debug, Clone, Default)]
pub(super) struct RqLane {
    pub(super) recs: Vec<RqRec>,
    pub(super) cells: Vec<RqCell>,
}

impl RqLane {
    /// What snapshot `i` runs and has queued.
    pub(super) fn entries(&self, i: usize) -> (Option<&RqCell>, &[RqCell]) {
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
pub(super) const SAME_INSTANT_SNAPS: usize = 4;

impl Trace {
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
    pub(super) fn push_rq_cells(&mut self, p: usize, t_ns: u64, cells: &[RqCell]) {
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
    pub(super) fn rq_snap(&self, p: usize, i: usize) -> RqSnap {
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
}

crate::size::no_heap!(RqCell, RqRec);
crate::size::heap_size!(RqSnap { queued });
crate::size::heap_size!(RqLane { recs, cells });
