//! The whole-run series of a policy's task inference: degree-of-belief changes and partial-boost marks
//! in fixed time buckets. A replay run keeps no trace, yet the belief chart draws the whole run; these buckets
//! answer it in memory bounded whatever the run's length, and a full run's trace gives the same buckets.
//!
//! Resolution: the run in [`BUCKETS`] equal buckets (fewer when there are many tasks, see [`MAX_CELLS`]). The
//! chart spans the whole run across one column, at most about 1,300 CSS pixels (2,600 device pixels at twice
//! the density), so a bucket is narrower than a device pixel: the step line drawn from each bucket's first value,
//! range and last value covers the pixels the exact series covers. Within a bucket that saw more than two changes
//! the times of the ones between the first and the last are not kept.

use crate::trace::{BeliefRec, BoostRec};
use serde::Serialize;

/// Buckets over the run (see the module documentation for why this many).
pub const BUCKETS: u64 = 4096;
/// Most (series x bucket) cells, one series per task and one per partial-boost kind: a run with very many tasks
/// gets coarser buckets, so the overview stays within about `MAX_CELLS` records (~15 MB).
pub const MAX_CELLS: u64 = 1 << 18;

/// One task's belief changes within one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BeliefBucket {
    pub task: u32,
    /// Times of the bucket's first and last change [ns].
    pub first_ns: u64,
    pub last_ns: u64,
    /// Degree of belief after the first and the last change, and the least and greatest in between.
    pub first: i64,
    pub last: i64,
    pub min: i64,
    pub max: i64,
    /// Changes in the bucket.
    pub changes: u32,
}

/// Partial boosts of one kind given (or revoked) within one bucket.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct BoostBucket {
    /// The bucket's first mark [ns].
    pub t_ns: u64,
    /// The vCPU of the bucket's first mark.
    pub vcpu: u32,
    /// "boost" or "revoke".
    #[cfg_attr(test, ts(type = r#""boost" | "revoke""#))]
    pub kind: &'static str,
    /// Marks of this kind in the bucket.
    pub count: u32,
}

/// What the page's belief chart reads: belief changes as points of a step line per task (in time order) and
/// partial boosts per bucket.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(test, derive(ts_rs::TS))]
pub struct InferenceSeries {
    /// Width of a bucket [ns].
    pub bucket_ns: u64,
    /// Per task and bucket: the first change at its time; with more than two changes, then the greatest and
    /// least at the same time (the line's vertical stroke covers the bucket's range); with more than one, the last
    /// at its time.
    pub beliefs: Vec<BeliefRec>,
    pub boosts: Vec<BoostBucket>,
}

/// Beliefs and partial boosts of a run in fixed time buckets, filled as they happen.
#[derive(Debug, Clone, PartialEq)]
pub struct InferenceBuckets {
    /// [ns]
    bucket_ns: u64,
    /// In order of each entry's first change (so by time).
    beliefs: Vec<BeliefBucket>,
    /// Index into `beliefs` of each task's latest entry.
    open: Vec<Option<usize>>,
    boosts: Vec<BoostBucket>,
    /// Index into `boosts` of the latest entry of each kind (boost, revoke).
    open_boost: [Option<usize>; 2],
}

impl InferenceBuckets {
    /// Empty buckets for a run of `end_ns` with `ntasks` tasks.
    pub fn new(end_ns: u64, ntasks: usize) -> InferenceBuckets {
        let buckets = BUCKETS.min(MAX_CELLS / (ntasks as u64 + 2)).max(1);
        InferenceBuckets {
            bucket_ns: end_ns.div_ceil(buckets).max(1),
            beliefs: Vec::new(),
            open: Vec::new(),
            boosts: Vec::new(),
            open_boost: [None; 2],
        }
    }

    /// The same buckets filled from a trace's records (time order): what a replay run's overview must equal.
    pub fn from_records(end_ns: u64, ntasks: usize, beliefs: &[BeliefRec], boosts: &[BoostRec]) -> InferenceBuckets {
        let mut b = InferenceBuckets::new(end_ns, ntasks);
        for r in beliefs {
            b.belief(*r);
        }
        for r in boosts {
            b.boost(*r);
        }
        b
    }

    /// Width of a bucket [ns].
    pub fn bucket_ns(&self) -> u64 {
        self.bucket_ns
    }

    pub fn belief(&mut self, r: BeliefRec) {
        let bucket = r.t_ns / self.bucket_ns;
        let task = r.task as usize;
        if self.open.len() <= task {
            self.open.resize(task + 1, None);
        }
        if let Some(e) = self.open[task].map(|i| &mut self.beliefs[i]) {
            if e.first_ns / self.bucket_ns == bucket {
                e.last_ns = r.t_ns;
                e.last = r.belief;
                e.min = e.min.min(r.belief);
                e.max = e.max.max(r.belief);
                e.changes += 1;
                return;
            }
        }
        self.open[task] = Some(self.beliefs.len());
        let (t, b) = (r.t_ns, r.belief);
        self.beliefs.push(BeliefBucket {
            task: r.task,
            first_ns: t,
            last_ns: t,
            first: b,
            last: b,
            min: b,
            max: b,
            changes: 1,
        });
    }

    pub fn boost(&mut self, r: BoostRec) {
        let k = usize::from(r.kind != "boost");
        if let Some(e) = self.open_boost[k].map(|i| &mut self.boosts[i]) {
            if e.t_ns / self.bucket_ns == r.t_ns / self.bucket_ns {
                e.count += 1;
                return;
            }
        }
        self.open_boost[k] = Some(self.boosts.len());
        self.boosts.push(BoostBucket { t_ns: r.t_ns, vcpu: r.vcpu, kind: r.kind, count: 1 });
    }

    /// The buckets of belief changes, in order of their first change.
    pub fn belief_buckets(&self) -> &[BeliefBucket] {
        &self.beliefs
    }

    pub fn boost_buckets(&self) -> &[BoostBucket] {
        &self.boosts
    }

    /// The series the page draws (see [`InferenceSeries`]).
    pub fn series(&self) -> InferenceSeries {
        let mut beliefs = Vec::with_capacity(self.beliefs.len() * 2);
        for e in &self.beliefs {
            let at = |t_ns, belief| BeliefRec { t_ns, task: e.task, belief };
            if e.changes > 2 {
                beliefs.extend([at(e.first_ns, e.max), at(e.first_ns, e.min)]);
            }
            beliefs.push(at(e.first_ns, e.first));
            if e.changes > 1 {
                beliefs.push(at(e.last_ns, e.last));
            }
        }
        // A task's last point in a bucket may come after another task's first point in a later entry: time order.
        beliefs.sort_by_key(|b| b.t_ns);
        InferenceSeries { bucket_ns: self.bucket_ns, beliefs, boosts: self.boosts.clone() }
    }

    /// Heap size [bytes].
    pub fn heap_bytes(&self) -> usize {
        use std::mem::size_of;
        self.beliefs.capacity() * size_of::<BeliefBucket>()
            + self.open.capacity() * size_of::<Option<usize>>()
            + self.boosts.capacity() * size_of::<BoostBucket>()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn b(t_ns: u64, task: u32, belief: i64) -> BeliefRec {
        BeliefRec { t_ns, task, belief }
    }

    /// A bucket keeps its first and last change exactly and draws its range between them; one or two changes are
    /// kept as they were.
    #[test]
    fn buckets_keep_first_last_and_range() {
        // 40,960 ns in 4096 buckets of 10 ns.
        let mut o = InferenceBuckets::new(40_960, 2);
        assert_eq!(o.bucket_ns(), 10);
        for r in [b(1, 0, 1), b(3, 0, 5), b(4, 0, -2), b(8, 0, 2), b(9, 1, 7), b(12, 0, 3), b(15, 0, 4)] {
            o.belief(r);
        }
        let s = o.series();
        let pts: Vec<_> = s.beliefs.iter().map(|r| (r.t_ns, r.task, r.belief)).collect();
        assert_eq!(
            pts,
            [(1, 0, 5), (1, 0, -2), (1, 0, 1), (8, 0, 2), (9, 1, 7), (12, 0, 3), (15, 0, 4)],
            "bucket 0 of task 0: range 5..-2 at its first change, then its last; bucket 1: both changes"
        );
        assert_eq!(o.belief_buckets()[0].changes, 4);
    }

    /// Boosts count per bucket and kind, each bucket at its first mark; revocations do not split boost buckets.
    #[test]
    fn boosts_count_per_bucket_and_kind() {
        let mark = |t_ns, vcpu, kind| BoostRec { t_ns, vcpu, kind };
        let recs = [mark(1, 3, "boost"), mark(2, 4, "revoke"), mark(5, 5, "boost"), mark(11, 6, "boost")];
        let o = InferenceBuckets::from_records(40_960, 2, &[], &recs);
        let got: Vec<_> = o.boost_buckets().iter().map(|x| (x.t_ns, x.vcpu, x.kind, x.count)).collect();
        assert_eq!(got, [(1, 3, "boost", 2), (2, 4, "revoke", 1), (11, 6, "boost", 1)]);
    }

    /// Many tasks coarsen the buckets so the cells stay within their cap.
    #[test]
    fn many_tasks_coarsen_the_buckets() {
        let end = 1_000_000_000;
        assert_eq!(InferenceBuckets::new(end, 10).bucket_ns(), end.div_ceil(BUCKETS));
        let many = InferenceBuckets::new(end, 4094);
        assert_eq!(many.bucket_ns(), end.div_ceil(MAX_CELLS / 4096));
    }
}
