//! The recorded trace the UI replays: per-pCPU schedule segments (vCPU and guest task) and every scheduling
//! decision with its one-line reason. Views derive what they draw (share over time, Gantt lanes) from it.

use serde::Serialize;

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

/// A scheduling decision or policy note, with its reason.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct DecisionRec {
    /// [ns]
    pub t_ns: u64,
    pub pcpu: u32,
    pub text: String,
}

/// A vCPU in a run-queue snapshot, as the policy sees it.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RqEntry {
    pub vcpu: u32,
    /// Priority class label (BOOST, UNDER, OVER, PARKED, ...).
    pub pri: &'static str,
    /// Credit in the policy's units, when it has credits.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub credit: Option<i64>,
}

/// What one pCPU runs and has queued, from `t_ns` until the next snapshot of that pCPU.
#[derive(Debug, Clone, Serialize, PartialEq)]
pub struct RqSnap {
    pub t_ns: u64,
    pub running: Option<RqEntry>,
    pub queued: Vec<RqEntry>,
}

/// Most decisions kept; past it, later ones are counted in `decisions_dropped` (reported, never silent).
pub const MAX_DECISIONS: usize = 1_000_000;

pub struct Trace {
    segments: Vec<Segment>,
    /// Index into `segments` of the last segment of each pCPU, for merging contiguous equal stretches.
    last_of_pcpu: Vec<Option<usize>>,
    decisions: Vec<DecisionRec>,
    pub decisions_dropped: u64,
    /// Run-queue snapshots per pCPU, recorded whenever one changes.
    runqueues: Vec<Vec<RqSnap>>,
    vcpu_dom: Vec<usize>,
    ndomains: usize,
    pcpus: usize,
    /// End of the run [ns].
    end: u64,
}

impl Trace {
    pub fn new(pcpus: usize, vcpu_dom: Vec<usize>, ndomains: usize, end: u64) -> Trace {
        Trace {
            segments: Vec::new(),
            last_of_pcpu: vec![None; pcpus],
            decisions: Vec::new(),
            decisions_dropped: 0,
            runqueues: vec![Vec::new(); pcpus],
            vcpu_dom,
            ndomains,
            pcpus,
            end,
        }
    }

    pub fn push_segment(&mut self, s: Segment) {
        if s.end <= s.start {
            return;
        }
        if let Some(i) = self.last_of_pcpu[s.pcpu as usize] {
            let last = &mut self.segments[i];
            if last.end == s.start && last.vcpu == s.vcpu && last.task == s.task {
                last.end = s.end;
                return;
            }
        }
        self.last_of_pcpu[s.pcpu as usize] = Some(self.segments.len());
        self.segments.push(s);
    }

    pub fn push_decision(&mut self, t_ns: u64, pcpu: usize, text: String) {
        if self.decisions.len() >= MAX_DECISIONS {
            self.decisions_dropped += 1;
            return;
        }
        self.decisions.push(DecisionRec { t_ns, pcpu: pcpu as u32, text });
    }

    /// Records pCPU `p`'s run queue unless it is unchanged since its last snapshot.
    pub fn push_runqueue(&mut self, p: usize, t_ns: u64, running: Option<RqEntry>, queued: Vec<RqEntry>) {
        let list = &mut self.runqueues[p];
        if let Some(last) = list.last_mut() {
            if last.running == running && last.queued == queued {
                return;
            }
            if last.t_ns == t_ns {
                // Several changes within one instant: keep the last state only.
                last.running = running;
                last.queued = queued;
                return;
            }
        }
        list.push(RqSnap { t_ns, running, queued });
    }

    /// Every pCPU's run queue as it was at `t_ns` (`None` before its first snapshot).
    pub fn runqueues_at(&self, t_ns: u64) -> Vec<Option<&RqSnap>> {
        self.runqueues
            .iter()
            .map(|l| {
                let i = l.partition_point(|s| s.t_ns <= t_ns);
                if i == 0 {
                    None
                } else {
                    Some(&l[i - 1])
                }
            })
            .collect()
    }

    /// All snapshots of one pCPU.
    pub fn runqueue_history(&self, p: usize) -> &[RqSnap] {
        &self.runqueues[p]
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

    /// Decisions with `from_ns <= t < to_ns`, at most `limit`.
    pub fn decisions(&self, from_ns: u64, to_ns: u64, limit: usize) -> Vec<&DecisionRec> {
        let start = self.decisions.partition_point(|d| d.t_ns < from_ns);
        self.decisions[start..].iter().take_while(|d| d.t_ns < to_ns).take(limit).collect()
    }

    pub fn decision_count(&self) -> usize {
        self.decisions.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

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

    #[test]
    fn share_series_splits_segments_across_buckets() {
        let mut t = Trace::new(2, vec![0, 1], 2, 100);
        t.push_segment(Segment { pcpu: 0, start: 0, end: 75, vcpu: 0, task: 0 });
        t.push_segment(Segment { pcpu: 1, start: 25, end: 100, vcpu: 1, task: 1 });
        let s = t.share_series(50);
        // bucket 0: dom0 50/100, dom1 25/100; bucket 1: dom0 25/100, dom1 50/100
        assert_eq!(s, vec![0.5, 0.25, 0.25, 0.5]);
    }
}
