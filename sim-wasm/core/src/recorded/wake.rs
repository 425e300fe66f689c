//! Wake-to-run latency per domain, from vCPU state changes: each blocked -> running transition (0) and each
//! blocked -> runnable -> running one (the time runnable), as the page's state lanes mark them. One accumulator
//! for simulated runs (fed from their trace's state lanes) and recorded ones (fed as the replay goes), so the
//! two are measured alike.

use crate::metrics::{Samples, Summary};
use crate::trace::{Trace, VcpuState};

/// The accumulator.
#[derive(Debug, Clone)]
pub struct WakeToRun {
    /// Each vCPU's state and, while it waits after a wake-up, when it woke [ns].
    state: Vec<(Option<VcpuState>, Option<u64>)>,
    vcpu_dom: Vec<usize>,
    /// Latencies per domain [ns].
    pub per_dom: Vec<Samples>,
}

impl WakeToRun {
    pub fn new(vcpu_dom: Vec<usize>, ndom: usize) -> WakeToRun {
        WakeToRun {
            state: vec![(None, None); vcpu_dom.len()],
            vcpu_dom,
            per_dom: (0..ndom).map(|_| Samples::default()).collect(),
        }
    }

    /// vCPU `v` is in `state` from `t_ns` on (calls for one vCPU in time order).
    pub fn enter(&mut self, v: usize, state: VcpuState, t_ns: u64) {
        let Some(slot) = self.state.get_mut(v) else { return };
        let (was, woke) = *slot;
        if was == Some(state) {
            return;
        }
        let running = matches!(state, VcpuState::Running | VcpuState::Spinning);
        *slot = match (was, state) {
            (Some(VcpuState::Blocked), VcpuState::Runnable) => (Some(state), Some(t_ns)),
            (Some(VcpuState::Blocked), _) if running => {
                self.per_dom[self.vcpu_dom[v]].push(0);
                (Some(state), None)
            }
            (Some(VcpuState::Runnable), _) if running => {
                if let Some(w) = woke {
                    self.per_dom[self.vcpu_dom[v]].push(t_ns.saturating_sub(w));
                }
                (Some(state), None)
            }
            _ => (Some(state), None),
        };
    }

    /// The latencies of a simulated run, from its trace's state lanes over `[0, end_ns)`.
    pub fn of_trace(trace: &Trace, end_ns: u64, vcpu_dom: Vec<usize>, ndom: usize) -> WakeToRun {
        let mut w = WakeToRun::new(vcpu_dom, ndom);
        for span in trace.vcpu_states(0, end_ns, usize::MAX) {
            w.enter(span.vcpu as usize, span.state, span.start);
        }
        w
    }

    /// Each domain's summary [ms] (`None` where it never woke).
    pub fn summaries(&self) -> Vec<Option<Summary>> {
        self.per_dom.iter().map(Summary::of).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wakes_are_measured_from_blocked_only() {
        let mut w = WakeToRun::new(vec![0, 1], 2);
        use VcpuState::*;
        // vCPU 0: unknown start (runnable: not a wake), runs, blocks, wakes at 100, runs at 150; preempted, runs.
        for (s, t) in [
            (Runnable, 0),
            (Running, 10),
            (Blocked, 50),
            (Runnable, 100),
            (Running, 150),
            (Runnable, 200),
            (Running, 300),
        ] {
            w.enter(0, s, t);
        }
        // vCPU 1: blocked, then straight to running.
        w.enter(1, Blocked, 0);
        w.enter(1, Running, 40);
        assert_eq!(w.per_dom[0].points(), vec![(50, 1)]);
        assert_eq!(w.per_dom[1].points(), vec![(0, 1)]);
    }

    /// A simulated run's wake-ups counted here and by the trace's heat-map function agree (count, summed and
    /// longest latency): one definition, two readers.
    #[test]
    fn agrees_with_the_trace_heat_map() {
        let text = std::fs::read_to_string(format!("{}/../../scenarios/credit-boost.json", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
        let sc = crate::scenario::Scenario::from_json(&text).unwrap();
        let id = sc.policies[0].id.clone();
        let mut sim = crate::sim::Simulation::new(&sc, &id).unwrap();
        sim.run().unwrap();
        let meta = sim.meta();
        let vcpu_dom: Vec<usize> = meta.vcpus.iter().map(|v| v.domain).collect();
        let nd = meta.domains.len();
        let w = WakeToRun::of_trace(sim.trace(), meta.duration_ns, vcpu_dom, nd);
        let map = sim.trace().wake_latency_map(0, meta.duration_ns, 1, (0, u64::MAX));
        let mut woke = 0;
        for d in 0..nd {
            let pts = w.per_dom[d].points();
            let n: u64 = pts.iter().map(|p| p.1).sum();
            let sum: u64 = pts.iter().map(|p| p.0 * p.1).sum();
            let max = pts.last().map_or(0, |p| p.0);
            assert_eq!((n as f64, sum as f64, max as f64), (map[d * 3], map[d * 3 + 1], map[d * 3 + 2]), "domain {d}");
            woke += n;
        }
        assert!(woke > 0);
    }
}
