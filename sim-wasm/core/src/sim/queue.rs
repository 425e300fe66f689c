//! The engine's future-event list, in (time, insertion) order.
//!
//! A binary heap of small keys (the events wait in a slab) plus a FIFO for events at the present instant.
//! Measured against alternatives with callgrind on 5 s of bench-large (instructions, trace off): this design
//! 930 M, a radix heap 957 M, a 4-ary heap with packed u128 keys 1094 M; it stays.

use crate::time::Nanos;
use std::cmp::Reverse;
use std::collections::{BinaryHeap, VecDeque};

/// A queued event's key, ordered by (time, seq) only, so ties break by insertion order; the event itself waits
/// in a slab so the heap moves small keys only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Entry {
    at: Nanos,
    seq: u64,
    slot: u32,
}

/// Future events of type `E`, taken out in (time, insertion) order.
pub struct EventQueue<E> {
    heap: BinaryHeap<Reverse<Entry>>,
    /// Events queued for the present instant (reschedules, zero-length bursts: a third of all events) skip the
    /// heap; taking out merges the two by (time, seq), so the order is exactly the heap's.
    now_queue: VecDeque<Entry>,
    /// Time of the event last taken out.
    now: Nanos,
    seq: u64,
    slab: Vec<E>,
    free: Vec<u32>,
}

impl<E: Copy> Default for EventQueue<E> {
    fn default() -> Self {
        EventQueue {
            heap: BinaryHeap::new(),
            now_queue: VecDeque::new(),
            now: Nanos::ZERO,
            seq: 0,
            slab: Vec::new(),
            free: Vec::new(),
        }
    }
}

impl<E: Copy> EventQueue<E> {
    /// Queues `ev` at `at`. An event is never queued before the one last taken out (the engine's present); if a
    /// caller tries, it is queued at that time instead, so the order stays well defined.
    pub fn push(&mut self, at: Nanos, ev: E) {
        debug_assert!(at >= self.now, "event queued in the past: {} < {}", at.0, self.now.0);
        let at = at.max(self.now);
        self.seq += 1;
        let slot = match self.free.pop() {
            Some(s) => {
                self.slab[s as usize] = ev;
                s
            }
            None => {
                self.slab.push(ev);
                (self.slab.len() - 1) as u32
            }
        };
        let e = Entry { at, seq: self.seq, slot };
        if at == self.now {
            self.now_queue.push_back(e);
        } else {
            self.heap.push(Reverse(e));
        }
    }

    /// The earliest entry, and whether it is in the present-instant queue.
    fn first(&self) -> Option<(Entry, bool)> {
        match (self.now_queue.front(), self.heap.peek()) {
            (Some(a), Some(Reverse(b))) if a < b => Some((*a, true)),
            (_, Some(Reverse(b))) => Some((*b, false)),
            (Some(a), None) => Some((*a, true)),
            (None, None) => None,
        }
    }

    /// Takes out the earliest event if it is before `limit`; otherwise leaves the queue as it was.
    pub fn pop_before(&mut self, limit: Nanos) -> Option<(Nanos, E)> {
        let (e, present) = self.first().filter(|(e, _)| e.at < limit)?;
        if present {
            self.now_queue.pop_front();
        } else {
            self.heap.pop();
        }
        self.now = e.at;
        self.free.push(e.slot);
        Some((e.at, self.slab[e.slot as usize]))
    }

    /// Whether no event remains before `limit`.
    pub fn is_done_before(&self, limit: Nanos) -> bool {
        self.first().is_none_or(|(e, _)| e.at >= limit)
    }

    /// Queued events, in no particular order (for diagnostics).
    pub fn iter(&self) -> impl Iterator<Item = (Nanos, &E)> + '_ {
        let entries = self.heap.iter().map(|Reverse(e)| e).chain(self.now_queue.iter());
        entries.map(|e| (e.at, &self.slab[e.slot as usize]))
    }

    pub fn len(&self) -> usize {
        self.heap.len() + self.now_queue.len()
    }

    /// Slots ever allocated (the most events queued at once).
    pub fn slab_len(&self) -> usize {
        self.slab.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::collections::BinaryHeap;

    /// (time, event id) in the order taken out.
    type Order = Vec<(u64, u32)>;

    /// Drains with the same interleaving of pushes and pops as a plain binary heap keyed by (time, seq).
    fn run_both(ops: &[(bool, u64)]) -> (Order, Order) {
        let mut q = EventQueue::default();
        let mut h = BinaryHeap::new();
        let (mut now, mut seq, mut id) = (0u64, 0u64, 0u32);
        let (mut a, mut b) = (Vec::new(), Vec::new());
        for &(is_push, delta) in ops {
            if is_push {
                id += 1;
                seq += 1;
                q.push(Nanos(now + delta), id);
                h.push(std::cmp::Reverse((now + delta, seq, id)));
            } else {
                let x = q.pop_before(Nanos(u64::MAX));
                let y = h.pop().map(|std::cmp::Reverse((t, _, i))| (t, i));
                if let Some((t, _)) = y {
                    now = t;
                }
                a.extend(x.map(|(t, i)| (t.0, i)));
                b.extend(y);
            }
        }
        while let Some((t, i)) = q.pop_before(Nanos(u64::MAX)) {
            a.push((t.0, i));
        }
        while let Some(std::cmp::Reverse((t, _, i))) = h.pop() {
            b.push((t, i));
        }
        (a, b)
    }

    proptest! {
        #[test]
        fn same_order_as_a_binary_heap(ops in proptest::collection::vec((any::<bool>(), 0u64..50), 0..400)) {
            let (a, b) = run_both(&ops);
            prop_assert_eq!(a, b);
        }

        #[test]
        fn same_order_with_far_future_events(
            ops in proptest::collection::vec((any::<bool>(), prop_oneof![0u64..3, 0u64..u64::MAX / 1024]), 0..300)
        ) {
            let (a, b) = run_both(&ops);
            prop_assert_eq!(a, b);
        }
    }

    #[test]
    fn ties_break_by_insertion_and_limit_leaves_queue_intact() {
        let mut q = EventQueue::default();
        q.push(Nanos(10), 'a');
        q.push(Nanos(5), 'b');
        q.push(Nanos(10), 'c');
        assert_eq!(q.pop_before(Nanos(100)), Some((Nanos(5), 'b')));
        // Nothing before 10: the queue must be unchanged, and an event at 7 may still be queued.
        assert_eq!(q.pop_before(Nanos(10)), None);
        q.push(Nanos(7), 'd');
        let rest: Vec<_> = std::iter::from_fn(|| q.pop_before(Nanos(100))).collect();
        assert_eq!(rest, vec![(Nanos(7), 'd'), (Nanos(10), 'a'), (Nanos(10), 'c')]);
        assert_eq!(q.len(), 0);
    }
}
