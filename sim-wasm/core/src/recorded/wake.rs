//! Wake-to-run latency per domain, from vCPU state changes: each blocked -> running transition (0) and each
//! blocked -> runnable -> running one (the time runnable), as the page's state lanes mark them. One accumulator
//! for simulated runs (fed from their trace's state lanes) and recorded ones (fed as the replay goes), so the
//! two are measured alike.

use crate::metrics::{Samples, Summary};
use crate::sim::{SimError, Simulation};
use crate::trace::{Trace, VcpuState};

/// Simulated time replayed at once when measuring a replay run [ns]: one window's detail is what is held.
pub const REPLAY_WINDOW_NS: u64 = 500_000_000;

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
        w.feed(trace, 0, end_ns);
        w
    }

    /// The latencies of a whole simulated run, full or replay mode alike: a full run's trace is read as it is
    /// (up to where its detail budget stopped it); a replay run is replayed in consecutive windows of
    /// [`REPLAY_WINDOW_NS`], each window's state lanes fed in turn, so memory stays one window's detail. A replay
    /// is deterministic, so the windows' lanes are the ones a full trace would hold.
    pub fn of_run(sim: &Simulation) -> Result<WakeToRun, SimError> {
        let meta = sim.meta();
        let vcpu_dom: Vec<usize> = meta.vcpus.iter().map(|v| v.domain).collect();
        let end = meta.duration_ns;
        let mut w = WakeToRun::new(vcpu_dom, meta.domains.len());
        let mut from = 0;
        while from < end {
            let to = from.saturating_add(REPLAY_WINDOW_NS).min(end);
            let Some(win) = sim.replay_window(from, to)? else {
                w.feed(sim.trace(), 0, end);
                return Ok(w);
            };
            w.feed(win.trace(), from, to);
            from = to;
        }
        Ok(w)
    }

    fn feed(&mut self, trace: &Trace, from_ns: u64, to_ns: u64) {
        for span in trace.vcpu_states(from_ns, to_ns, usize::MAX) {
            self.enter(span.vcpu as usize, span.state, span.start);
        }
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

    /// A replay run measured window by window gives the full run's latencies, to the nanosecond.
    #[test]
    fn a_replay_run_measures_as_a_full_one() {
        use crate::sim::{Detail, SimOptions, Simulation};
        let text = std::fs::read_to_string(format!("{}/../../scenarios/credit-boost.json", env!("CARGO_MANIFEST_DIR")))
            .unwrap();
        let mut sc = crate::scenario::Scenario::from_json(&text).unwrap();
        // Longer than a window, so the replay crosses window boundaries.
        sc.duration_ms = sc.duration_ms.max(1200);
        let id = sc.policies[0].id.clone();
        let mut full = Simulation::new(&sc, &id).unwrap();
        full.run().unwrap();
        let opts = SimOptions { detail: Detail::Replay { checkpoint_every_ns: 300_000_000 }, ..SimOptions::default() };
        let mut replay = Simulation::with_options(&sc, &id, opts).unwrap();
        replay.run().unwrap();
        let a = WakeToRun::of_run(&full).unwrap();
        let b = WakeToRun::of_run(&replay).unwrap();
        let pts = |w: &WakeToRun| w.per_dom.iter().map(Samples::points).collect::<Vec<_>>();
        assert_eq!(pts(&a), pts(&b));
        assert!(pts(&a).iter().any(|p| !p.is_empty()));
    }
}
