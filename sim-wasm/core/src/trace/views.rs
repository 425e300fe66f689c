//! What the page's lanes and heat maps draw from a window of the trace: vCPU state spans and their shares,
//! wake-up latency and notification deliveries per column.

use super::*;

/// Appends `span` to `out`, extending the last span instead when it is the same vCPU's, in the same state and
/// contiguous; empty spans are dropped.
pub(super) fn push_merged(out: &mut Vec<VcpuSpan>, span: VcpuSpan) {
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

impl Trace {
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
    /// The state lanes at a zoom too dense for spans (dense windows): `[from_ns, to_ns)` cut into `buckets`
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
}
