//! ARINC 653 partition scheduling (Xen `sched_arinc653.c`; thesis 003, 3.2.3): a fixed major frame divided into
//! minor frames (windows), each owned by one vCPU. The frame repeats forever; in a window only its owner may run,
//! for the rest of the window, and if it is blocked the time is lost (the pCPU idles): strict temporal isolation.
//! Time after the last window up to the end of the major frame is idle. As in Xen, one schedule serves the host
//! and a window's vCPU runs only on the pCPU it lives on, so on a multi-pCPU host the others idle meanwhile.
//!
//! Parameters: `schedule` (windows in order: `domain`, `vcpu`, `runtime_us`) and `major_frame_us` (at least the
//! sum of the windows; default exactly that sum). Without a schedule every vCPU gets one 10 ms window in vCPU
//! order, as Xen gives each of dom0's vCPUs a 10 ms window at boot (DEFAULT_TIMESLICE).

use super::common::{self, Versions};
use super::params::{self, Params};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, Timers, VcpuSched, WakeCause};
use crate::model::{PcpuId, VcpuId};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::time::Nanos;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Window length when no schedule is given (DEFAULT_TIMESLICE) [ns].
pub const DEFAULT_WINDOW: Nanos = Nanos::from_ms(10);

/// One minor frame.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Window {
    pub vcpu: VcpuId,
    /// Offset from the start of the major frame [ns].
    pub start: Nanos,
    pub len: Nanos,
}

#[derive(Clone)]
pub struct Arinc653 {
    windows: Vec<Window>,
    major: Nanos,
    processor: Vec<PcpuId>,
    awake: Vec<bool>,
    versions: Versions,
}

/// ARINC 653 (thesis 003 3.2.3; Xen sched_arinc653.c): a repeating major frame of fixed windows; only a window's
/// vCPU runs in it, on its own pCPU; unused window time is idle. Without a schedule every vCPU gets one 10 ms
/// window in vCPU order.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct Arinc653Params {
    /// Length of the major frame [us]; at least the sum of the windows (default: that sum).
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1, max = 3_600_000_000u64))]
    pub major_frame_us: Option<u64>,
    /// Minor frames in order from the start of the major frame.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "Vec<WindowSpec>", length(max = 4096))]
    pub schedule: Option<Vec<WindowSpec>>,
}

impl Params for Arinc653Params {
    const SCHEDULER: &'static str = "arinc653";
    const DEF: &'static str = "arinc653_params";
}

/// One minor frame as a scenario gives it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
#[schemars(inline)]
pub struct WindowSpec {
    /// Domain that owns the window.
    pub domain: String,
    /// Which of the domain's vCPUs.
    #[serde(default)]
    pub vcpu: u64,
    /// Window length [us].
    #[schemars(range(min = 1, max = 3_600_000_000u64))]
    pub runtime_us: u64,
}

/// Reads the schedule: every error names the entry and field.
fn parse(params: &Value, domains: &[DomainInfo]) -> Result<(Vec<Window>, Nanos), String> {
    let p: Arinc653Params = params::from_value(params)?;
    let mut windows = Vec::new();
    let mut at = Nanos::ZERO;
    let major = p.major_frame_us.map(Nanos::from_us);
    match &p.schedule {
        Some(list) => {
            for (i, e) in list.iter().enumerate() {
                let f = |name: &str| format!("arinc653.schedule[{i}].{name}");
                let d = domains
                    .iter()
                    .find(|d| d.name == e.domain)
                    .ok_or_else(|| format!("{}: no domain named '{}'", f("domain"), e.domain))?;
                let last = d.vcpus.len() as u64 - 1;
                if e.vcpu > last {
                    return Err(format!("{}: expected an integer in 0..={last}, got {}", f("vcpu"), e.vcpu));
                }
                let len = Nanos::from_us(e.runtime_us);
                windows.push(Window { vcpu: d.vcpus[e.vcpu as usize], start: at, len });
                at += len;
            }
        }
        None => {
            for d in domains {
                for &v in &d.vcpus {
                    windows.push(Window { vcpu: v, start: at, len: DEFAULT_WINDOW });
                    at += DEFAULT_WINDOW;
                }
            }
        }
    }
    let major = major.unwrap_or(at);
    if major < at {
        return Err(format!(
            "arinc653.major_frame_us: {} us is shorter than the windows' total {} us",
            major.0 / 1000,
            at.0 / 1000
        ));
    }
    Ok((windows, major.max(Nanos(1))))
}

impl Arinc653 {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Arinc653, String> {
        let (windows, major) = parse(params, domains)?;
        let nv = domains.iter().map(|d| d.vcpus.len()).sum();
        Ok(Arinc653 {
            windows,
            major,
            processor: common::spread(nv, pcpus),
            awake: vec![false; nv],
            versions: Versions::new(pcpus),
        })
    }

    /// The windows of the schedule and the major frame (tests, the guarantee check).
    pub fn frame(&self) -> (&[Window], Nanos) {
        (&self.windows, self.major)
    }

    /// The window active at `now` and when it ends; None between the last window and the frame's end.
    fn current(&self, now: Nanos) -> (Option<&Window>, Nanos) {
        let base = Nanos(now.0 - now.0 % self.major.0);
        let off = Nanos(now.0 % self.major.0);
        match self.windows.iter().find(|w| w.start <= off && off < w.start + w.len) {
            Some(w) => (Some(w), base + w.start + w.len),
            None => (None, base + self.major),
        }
    }
}

impl Policy for Arinc653 {
    fn timers(&self) -> Timers {
        Timers { timer_slop: true, ..Timers::default() }
    }

    fn init_vcpu(&mut self, v: VcpuId, _ctx: &mut Ctx) -> PcpuId {
        self.processor[v.0]
    }

    fn wake(&mut self, v: VcpuId, _cause: WakeCause, ctx: &mut Ctx) {
        self.awake[v.0] = true;
        let p = self.processor[v.0];
        self.versions.touch(p);
        // An idle pCPU looks again: it runs the vCPU if this is its window, else it arms the window timer (a
        // pCPU that never had work has none yet).
        if ctx.host.running[p.0].is_none() {
            ctx.resched(p);
        }
    }

    fn sleep(&mut self, v: VcpuId, _ctx: &mut Ctx) {
        self.awake[v.0] = false;
        self.versions.touch(self.processor[v.0]);
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        if let Some(c) = cur {
            self.awake[c.0] = cur_runnable;
        }
        self.versions.touch(p);
        let (w, end) = self.current(ctx.now);
        let slice = end - ctx.now;
        let next = w.map(|w| w.vcpu).filter(|&v| self.processor[v.0] == p && self.awake[v.0]);
        let reason = if ctx.explain {
            match (w, next) {
                (_, Some(n)) => format!("runs {} in its window until {} us", ctx.name(n), end.0 / 1000),
                (Some(w), None) => format!("window of {}: idle until {} us", ctx.name(w.vcpu), end.0 / 1000),
                (None, None) => format!("no window: idle until the major frame ends at {} us", end.0 / 1000),
            }
        } else {
            String::new()
        };
        Pick { next, slice, reason }
    }

    fn set_param(&mut self, param: &str, _value: &Value) -> Result<(), String> {
        Err(format!("arinc653: the schedule is fixed at boot ('{param}' cannot change at run time)"))
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let pri = if self.awake[v.0] {
            Pri::new(PriClass::Reserved, "READY")
        } else {
            Pri::new(PriClass::Blocked, "BLOCKED")
        };
        VcpuSched { pri, credit: None }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        // The vCPUs of this pCPU that are ready, in the order of their next windows in the frame.
        let mut seen = Vec::new();
        for w in &self.windows {
            if self.processor[w.vcpu.0] == p && self.awake[w.vcpu.0] && !seen.contains(&w.vcpu) {
                seen.push(w.vcpu);
            }
        }
        seen
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }

    fn timed_idle(&self) -> bool {
        true
    }
}

crate::size::no_heap!(Window);
crate::size::heap_size!(Arinc653 { windows, processor, awake, versions });

/// ARINC 653's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "arinc653",
    caps: Caps::PLAIN,
    build: |s| registry::boxed(Arinc653::new(s.params, s.pcpus, s.domains)),
    check_param: |k, _| Err(format!("arinc653: the schedule is fixed at boot ('{k}' cannot change at run time)")),
    check_scenario: registry::no_scenario_check,
    params: params::declared::<Arinc653Params>(),
};

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sim::test_support::*;
    use crate::sim::timing::TIMER_SLOP;

    use serde_json::{json, Value};

    fn doms() -> Vec<DomainInfo> {
        vec![
            DomainInfo {
                name: "a".into(),
                weight: 256,
                cap_pct: 0,
                vcpus: vec![VcpuId(0)],
                is_driver: false,
                backend_for: Vec::new(),
            },
            DomainInfo {
                name: "b".into(),
                weight: 256,
                cap_pct: 0,
                vcpus: vec![VcpuId(1), VcpuId(2)],
                is_driver: false,
                backend_for: Vec::new(),
            },
        ]
    }

    #[test]
    fn schedule_parses_and_errors_name_the_entry() {
        let p = serde_json::json!({"schedule": [{"domain": "a", "runtime_us": 5000}, {"domain": "b", "vcpu": 1,
            "runtime_us": 3000}], "major_frame_us": 10000});
        let (w, major) = parse(&p, &doms()).unwrap();
        assert_eq!(major, Nanos::from_ms(10));
        assert_eq!(w[1], Window { vcpu: VcpuId(2), start: Nanos::from_ms(5), len: Nanos::from_ms(3) });
        let e = parse(&serde_json::json!({"schedule": [{"domain": "z", "runtime_us": 1}]}), &doms()).unwrap_err();
        assert!(e.contains("arinc653.schedule[0].domain"), "{e}");
        let e = parse(&serde_json::json!({"schedule": [{"domain": "b", "vcpu": 2, "runtime_us": 1}]}), &doms())
            .unwrap_err();
        assert!(e.contains("arinc653.schedule[0].vcpu"), "{e}");
        let e = parse(
            &serde_json::json!({"schedule": [{"domain": "a", "runtime_us": 5000}], "major_frame_us": 10}),
            &doms(),
        )
        .unwrap_err();
        assert!(e.contains("major_frame_us"), "{e}");
        // The declaration's checks: a window's length, the keys it may have.
        let e = parse(&serde_json::json!({"schedule": [{"domain": "a", "runtime_us": 0}]}), &doms()).unwrap_err();
        assert_eq!(e, "schedule[0].runtime_us: expected an integer in 1..=3600000000, got 0");
        let e =
            parse(&serde_json::json!({"schedule": [{"domain": "a", "runtime_us": 1, "x": 1}]}), &doms()).unwrap_err();
        assert!(e.starts_with("schedule[0]: unknown parameter 'x'"), "{e}");
        // Without a schedule: one 10 ms window per vCPU.
        let (w, major) = parse(&Value::Null, &doms()).unwrap();
        assert_eq!((w.len(), major), (3, Nanos::from_ms(30)));
    }

    /// ARINC 653 windows are exact: a domain runs only inside its own windows, and a CPU-bound owner fills them.
    #[test]
    fn arinc653_windows_exact() {
        for (timing, slop) in [("lockstep", 0), ("xen", TIMER_SLOP.0)] {
            arinc653_windows_with(timing, slop);
        }
    }

    /// As ARINC 653's windows under one host timing: a window switch that fires late lets the outgoing vCPU run up to
    /// one slop into the next window (Xen's a653sched uses the same timers); the schedule itself never drifts.
    fn arinc653_windows_with(timing: &str, slop: u64) {
        let sc = scenario(json!({
            "schema": 1, "id": "a653", "title": "a653", "seed": 1, "duration_ms": 1000,
            "host": { "pcpus": 1, "timing": timing },
            "domains": [
                { "name": "a", "tasks": [cpu_task("x")] },
                { "name": "b", "vcpus": 2, "tasks": [cpu_task("x"), cpu_task("y")] }
            ],
            "policies": [{ "id": "p", "scheduler": "arinc653", "params": { "major_frame_us": 20000, "schedule": [
                { "domain": "a", "runtime_us": 5000 }, { "domain": "b", "vcpu": 1, "runtime_us": 3000 },
                { "domain": "b", "runtime_us": 7000 } ] } }]
        }));
        let sim = run(&sc, "p");
        assert_invariants(&sim);
        // vCPU -> its window [start, end) within the 20 ms frame.
        let windows = [(0u64, 5_000_000u64), (8_000_000, 15_000_000), (5_000_000, 8_000_000)];
        for s in sim.trace().segments() {
            let (a, b) = windows[s.vcpu as usize];
            // A window starts when the switch before it fires, never early; it ends up to one slop late.
            let off = s.start % 20_000_000;
            assert!(
                off >= a && off + (s.end - s.start) <= b + slop,
                "{timing}: vCPU {} ran {s:?} outside [{a}, {b})",
                s.vcpu
            );
        }
        // CPU-bound owners use their windows fully: 15 ms of every 20 ms frame (give or take a slop per switch).
        let want = 1_000_000_000 / 20 * 15;
        assert!(sim.measure.busy_ns.abs_diff(want) <= 50 * slop, "{timing}: busy {} ns", sim.measure.busy_ns);
    }
}
