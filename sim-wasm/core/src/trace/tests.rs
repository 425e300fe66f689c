//! Trace tests: merging, windows, the memory budget, run-queue snapshots, state lanes and aggregates.

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
    for (t_ns, phase) in [(5, "pending"), (5, "delivered"), (24, "delivered"), (25, "delivered"), (99, "delivered")] {
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
    let e = |vcpu, pri: &'static str| RqEntry { vcpu, pri: pri.into(), class: PriClass::of_label(pri), credit: None };
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

/// A window's detail is stored compactly (so replay stays within its memory bound): a run-queue snapshot costs 16 bytes per
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
    assert_eq!((snap.running.clone(), snap.queued.clone()), (Some(e(0, -100)), vec![e(1, -99), e(2, 100), e(3, 7)]));
    assert_eq!(t.decisions(5_000, 5_001, 1)[0].text, "tick: a wake [-1, 2, -100, 300, 0, 1, 100, 5] 5000");
    assert_eq!(t.decisions(5_001, 5_002, 1)[0].text, "b wake [-1, 2, -99, 300, 0, 1, 99, 5] 5001");
}
