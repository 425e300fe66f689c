//! xBalloon (paper 002) inside Credit: the guest's CPU balloon and semi-work-conserving (SWC) scheduling.
//!
//! At each accounting period every vCPU whose guest runs a balloon is re-armed (balloon state on, balloon time 0)
//! and its balloon woken by a virtual IRQ. While armed, the balloon's hypercall pauses the vCPU: it burns no
//! credit, and any event for it unpauses it at once (the guest then runs the task the event woke). The balloon's
//! run time is the CPU the guest gives back now to have it later (slides: "the runtime of the CPU balloon process
//! represents the amount of time guest OS reserves for the future"): the off-CPU stretches that began with a
//! balloon pause. Once they add up to the reservation, `period x (1 - share)`, the balloon goes dormant and the VM
//! is work-conserving until the next period. The share is the one Credit gives the vCPU: the credits it
//! earned this period over a period's worth (its cap, or its weighted share of the host), not a fixed 50%.

use crate::model::{PcpuId, VcpuId};
use crate::policy::{Ctx, DomainInfo};
use crate::time::Nanos;
use std::fmt::Write;

/// Shares are kept in parts per million so the reservation stays integer nanoseconds.
const PPM: u64 = 1_000_000;

#[derive(Debug, Clone, Default)]
struct XbVcpu {
    /// Its guest runs a balloon (learnt from the balloon's first hypercall).
    registered: bool,
    /// Balloon state on: the reservation for this period is not met yet.
    armed: bool,
    /// Paused by the balloon (cap parking is Credit's own, separate reason to pause).
    paused: bool,
    /// In a balloon stretch: off the pCPU since its balloon paused it.
    stretch: bool,
    /// When the current balloon stretch began (the pause, or the period start if later) [ns].
    off_since: Nanos,
    /// Balloon time this period before the current stretch [ns].
    off_ns: u64,
    /// Off-CPU time the guest reserves in this period [ns].
    reserve_ns: u64,
    /// Its share of one pCPU, from Credit's accounting [ppm].
    share_ppm: u64,
    /// Its domain has a cap: the reservation then saves credit the cap would otherwise park it for.
    capped: bool,
}

/// Per-vCPU balloon state and the SWC rules; Credit calls it from its hooks.
#[derive(Debug, Clone)]
pub struct XBalloon {
    vcpus: Vec<XbVcpu>,
    /// Accounting period [ns].
    period: Nanos,
}

/// Effects xBalloon asks Credit to carry out (Credit knows about cap parking, which decides the unpause).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum XbEffect {
    /// The balloon's pause ends because an event arrived: unpause and wake (boostable).
    Resume(VcpuId),
    /// The reservation is met while paused: unpause (no boost; the VM is work-conserving now).
    Release(VcpuId),
    /// A pCPU went idle while an uncapped vCPU's balloon paused it: nobody competes for the CPU it gives back,
    /// so the reservation protects nothing this period; unpause, work-conserving.
    Unneeded(VcpuId),
}

impl XBalloon {
    /// Before Credit's first accounting, a vCPU's share is its cap, or else its domain's weighted share of the
    /// host split over its vCPUs (bounded by one pCPU).
    pub fn new(period: Nanos, pcpus: usize, domains: &[DomainInfo]) -> XBalloon {
        let nv: usize = domains.iter().map(|d| d.vcpus.len()).sum();
        let weight_total: u64 = domains.iter().map(|d| u64::from(d.weight) * d.vcpus.len() as u64).sum();
        let mut vcpus = vec![XbVcpu::default(); nv];
        for d in domains {
            let n = d.vcpus.len().max(1) as u64;
            let share = if d.cap_pct != 0 {
                u64::from(d.cap_pct) * PPM / 100 / n
            } else {
                (u64::from(d.weight) * pcpus as u64 * PPM).checked_div(weight_total).unwrap_or(PPM)
            };
            for v in &d.vcpus {
                vcpus[v.0].share_ppm = share.min(PPM);
                vcpus[v.0].capped = d.cap_pct != 0;
            }
        }
        XBalloon { vcpus, period }
    }

    fn reserve(&self, v: VcpuId) -> u64 {
        self.period.0 * (PPM - self.vcpus[v.0].share_ppm) / PPM
    }

    /// Balloon time of `v` in this period so far: off-CPU since its balloon paused it, until it ran again [ns].
    pub fn off_ns(&self, v: VcpuId, now: Nanos) -> u64 {
        let x = &self.vcpus[v.0];
        x.off_ns + if x.stretch { now.0.saturating_sub(x.off_since.0) } else { 0 }
    }

    /// The reservation of `v` for this period [ns].
    pub fn reserve_ns(&self, v: VcpuId) -> u64 {
        self.vcpus[v.0].reserve_ns
    }

    /// Paused by its balloon now.
    pub fn is_paused(&self, v: VcpuId) -> bool {
        self.vcpus[v.0].paused
    }

    /// Armed: its balloon will pause it when it runs.
    pub fn is_armed(&self, v: VcpuId) -> bool {
        self.vcpus[v.0].armed
    }

    /// `do_schedule` on a pCPU ran `next` after `cur`: a vCPU its balloon paused starts a balloon stretch, which
    /// lasts until it runs again (an event's unpause ends the pause, not the stretch: the VM still waits).
    pub fn switched(&mut self, now: Nanos, cur: Option<VcpuId>, next: Option<VcpuId>) {
        if cur == next {
            return;
        }
        if let Some(c) = cur {
            let x = &mut self.vcpus[c.0];
            if x.paused {
                x.stretch = true;
                x.off_since = now;
            }
        }
        if let Some(n) = next {
            let x = &mut self.vcpus[n.0];
            if x.stretch {
                x.off_ns += now.0.saturating_sub(x.off_since.0);
                x.stretch = false;
            }
        }
    }

    /// Credit's accounting gave `v` `inc` credits of `per_period` possible: its share for the reservation.
    pub fn set_share(&mut self, v: VcpuId, inc: i64, per_period: i64) {
        if per_period > 0 {
            self.vcpus[v.0].share_ppm = (inc.max(0) as u64 * PPM / per_period as u64).min(PPM);
        }
    }

    /// A new accounting period: re-arm every balloon (balloon time 0, reservation from the share) and wake the
    /// dormant ones with a virtual IRQ; a vCPU still paused gets a timer for its new reservation.
    pub fn new_period(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        let period_ms = self.period.0 / 1_000_000;
        for v in 0..self.vcpus.len() {
            let v = VcpuId(v);
            let reserve = self.reserve(v);
            let x = &mut self.vcpus[v.0];
            x.off_ns = 0;
            if x.stretch {
                x.off_since = now;
            }
            if !x.registered {
                continue;
            }
            x.reserve_ns = reserve;
            if !x.armed {
                x.armed = true;
                ctx.arm_balloon(v);
            }
            if x.paused {
                ctx.timer_at(now + Nanos(reserve));
            }
            let share = x.share_ppm;
            let name = &ctx.host.vcpu_name[v.0];
            ctx.note(PcpuId(0), |w| {
                write!(
                    w,
                    "xballoon: {name} armed, reserves {} us of {period_ms} ms (share {}%)",
                    reserve / 1000,
                    share / 10_000
                )
            });
        }
    }

    /// The guest's balloon on `v` asks to sleep: pause `v` (true) while the reservation is not met; otherwise the
    /// balloon goes dormant until the next period (false).
    pub fn hypercall(&mut self, v: VcpuId, ctx: &mut Ctx) -> bool {
        let now = ctx.now;
        if !self.vcpus[v.0].registered {
            // Its first call: the current period counts for it from its start.
            self.vcpus[v.0].registered = true;
            self.vcpus[v.0].armed = true;
            self.vcpus[v.0].reserve_ns = self.reserve(v);
        }
        let off = self.off_ns(v, now);
        let x = &mut self.vcpus[v.0];
        if !x.armed || x.paused {
            return x.paused;
        }
        let name = &ctx.host.vcpu_name[v.0];
        if off >= x.reserve_ns {
            x.armed = false;
            let r = x.reserve_ns;
            ctx.note(PcpuId(0), |w| {
                write!(w, "xballoon: {name} reserved {} us: balloon sleeps, work-conserving", r / 1000)
            });
            return false;
        }
        x.paused = true;
        let left = x.reserve_ns - off;
        ctx.pause(v);
        ctx.timer_at(now + Nanos(left));
        ctx.note(PcpuId(0), |w| write!(w, "xballoon: balloon pauses {name} ({} us of reservation left)", left / 1000));
        true
    }

    /// An event is pending for `v`: a balloon pause ends at once.
    pub fn event_pending(&mut self, v: VcpuId) -> Option<XbEffect> {
        let x = &mut self.vcpus[v.0];
        if !x.paused {
            return None;
        }
        x.paused = false;
        Some(XbEffect::Resume(v))
    }

    /// A pCPU is going idle. An uncapped vCPU reserves against competition only (unlike a capped one, it is never
    /// parked, so pausing saves it nothing by itself): if a pCPU idles while its balloon pauses it, the CPU it
    /// gives back goes to nobody, the VM is not CPU-constrained, and its balloon sleeps until the next period (the
    /// slides' SWC applies "under constrained resource allocation").
    pub fn pcpu_idle(&mut self) -> Vec<XbEffect> {
        let mut out = Vec::new();
        for (v, x) in self.vcpus.iter_mut().enumerate() {
            if x.paused && !x.capped {
                x.paused = false;
                x.armed = false;
                out.push(XbEffect::Unneeded(VcpuId(v)));
            }
        }
        out
    }

    /// A timer asked for by `hypercall` or `new_period` fired: release the vCPUs whose reservation is met.
    pub fn timer(&mut self, now: Nanos) -> Vec<XbEffect> {
        let mut out = Vec::new();
        for v in 0..self.vcpus.len() {
            let v = VcpuId(v);
            if self.vcpus[v.0].paused && self.off_ns(v, now) >= self.vcpus[v.0].reserve_ns {
                let x = &mut self.vcpus[v.0];
                x.paused = false;
                x.armed = false;
                out.push(XbEffect::Release(v));
            }
        }
        out
    }
}

crate::size::no_heap!(XbVcpu);
crate::size::heap_size!(XBalloon { vcpus });

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::DomId;
    use crate::policy::{Action, HostView};
    use crate::report::RunOptions;
    use crate::scenario::GuestScheduler;
    use crate::scenario::Scenario;
    use crate::sim::test_support::*;
    use crate::sim::Simulation;
    use serde_json::{json, Value};

    fn doms() -> Vec<DomainInfo> {
        vec![
            DomainInfo {
                name: "capped".into(),
                weight: 256,
                cap_pct: 30,
                vcpus: vec![VcpuId(0)],
                is_driver: false,
                backend_for: Vec::new(),
            },
            DomainInfo {
                name: "other".into(),
                weight: 768,
                cap_pct: 0,
                vcpus: vec![VcpuId(1)],
                is_driver: false,
                backend_for: Vec::new(),
            },
        ]
    }

    fn with_ctx<R>(now: Nanos, actions: &mut Vec<Action>, f: impl FnOnce(&mut Ctx) -> R) -> R {
        let (running, dom, names, info) = (vec![None], vec![DomId(0), DomId(1)], vec!["a".into(), "b".into()], doms());
        let mut notes = crate::policy::Notes::default();
        let mut ctx = Ctx {
            now,
            host: HostView { pcpus: 1, running: &running, vcpu_dom: &dom, vcpu_name: &names, domains: &info },
            actions,
            notes: &mut notes,
            explain: true,
            keep_marks: true,
        };
        f(&mut ctx)
    }

    /// The reservation is period x (1 - share): a 30% cap reserves 21 ms of 30; an uncapped domain with 3/4 of
    /// the weight reserves 7.5 ms; Credit's accounting replaces the static share.
    #[test]
    fn reservation_follows_the_share() {
        let mut xb = XBalloon::new(Nanos::from_ms(30), 1, &doms());
        assert_eq!(xb.reserve(VcpuId(0)), 21_000_000);
        assert_eq!(xb.reserve(VcpuId(1)), 7_500_000);
        xb.set_share(VcpuId(1), 150, 300);
        assert_eq!(xb.reserve(VcpuId(1)), 15_000_000);
    }

    /// Armed, the balloon pauses the vCPU until its balloon time reaches the reservation; an event ends the pause
    /// at once; once the reservation is met the balloon sleeps until the next period re-arms it.
    #[test]
    fn pause_until_reserved_then_work_conserving() {
        let v = VcpuId(0);
        let mut xb = XBalloon::new(Nanos::from_ms(30), 1, &doms());
        let mut acts = Vec::new();
        xb.switched(Nanos(0), None, Some(v));
        // Descheduled without a balloon pause (another vCPU's turn): not balloon time.
        xb.switched(Nanos(300_000), Some(v), None);
        xb.switched(Nanos(800_000), None, Some(v));
        assert_eq!(xb.off_ns(v, Nanos::from_ms(1)), 0);
        assert!(with_ctx(Nanos::from_ms(1), &mut acts, |c| xb.hypercall(v, c)));
        assert_eq!(acts, vec![Action::Pause(v), Action::Timer(Nanos::from_ms(22))]);
        xb.switched(Nanos::from_ms(1), Some(v), None);
        assert_eq!(xb.event_pending(v), Some(XbEffect::Resume(v)));
        xb.switched(Nanos::from_ms(11), None, Some(v));
        assert_eq!(xb.off_ns(v, Nanos::from_ms(12)), 10_000_000);
        acts.clear();
        assert!(with_ctx(Nanos::from_ms(12), &mut acts, |c| xb.hypercall(v, c)));
        xb.switched(Nanos::from_ms(12), Some(v), None);
        assert!(xb.timer(Nanos::from_ms(20)).is_empty(), "not reserved yet");
        assert_eq!(xb.timer(Nanos::from_ms(23)), vec![XbEffect::Release(v)]);
        xb.switched(Nanos::from_ms(23), None, Some(v));
        acts.clear();
        assert!(!with_ctx(Nanos::from_ms(23), &mut acts, |c| xb.hypercall(v, c)), "dormant: no pause");
        assert!(acts.is_empty());
        with_ctx(Nanos::from_ms(30), &mut acts, |c| xb.new_period(c));
        assert_eq!(acts, vec![Action::ArmBalloon(v)]);
        assert!(xb.is_armed(v) && xb.off_ns(v, Nanos::from_ms(31)) == 0);
    }

    /// A pCPU going idle ends the balloon pause of an uncapped vCPU (nobody competes for what it gives back) and
    /// leaves a capped one paused (its pause saves credit the cap would park it for).
    #[test]
    fn idle_pcpu_releases_only_uncapped_balloons() {
        let mut xb = XBalloon::new(Nanos::from_ms(30), 1, &doms());
        let mut acts = Vec::new();
        for v in [VcpuId(0), VcpuId(1)] {
            assert!(with_ctx(Nanos::from_ms(1), &mut acts, |c| xb.hypercall(v, c)), "{v:?} paused");
        }
        assert_eq!(xb.pcpu_idle(), vec![XbEffect::Unneeded(VcpuId(1))]);
        assert!(xb.is_paused(VcpuId(0)) && !xb.is_paused(VcpuId(1)) && !xb.is_armed(VcpuId(1)));
        acts.clear();
        assert!(
            !with_ctx(Nanos::from_ms(2), &mut acts, |c| xb.hypercall(VcpuId(1), c)),
            "dormant until the next period"
        );
        assert!(xb.pcpu_idle().is_empty());
    }

    fn xballoon_host(pcpus: u32, guest: Value, neighbour: bool, scheduler: &str) -> Scenario {
        let mut domains = vec![json!({ "name": "dom0", "role": "driver" }), guest];
        if neighbour {
            domains.push(json!({ "name": "neighbour", "tasks": [cpu_task("burn")] }));
        }
        scenario(json!({
            "schema": 1, "id": "xb", "title": "xb", "seed": 3, "duration_ms": 1500, "warmup_ms": 0,
            // In lockstep, so that the tests can find each accounting period at its nominal 30 ms boundary.
            "host": { "pcpus": pcpus, "timing": "lockstep" }, "domains": domains,
            "policies": [
                { "id": "credit", "scheduler": "credit" },
                { "id": "off", "scheduler": "credit", "params": { "xballoon": false } },
                { "id": "xb", "scheduler": "credit", "params": { "xballoon": true } }
            ]
        }))
        .with_guest_scheduler(scheduler)
    }

    impl Scenario {
        /// Test helper: every guest domain runs the given guest scheduler.
        fn with_guest_scheduler(mut self, s: &str) -> Scenario {
            let s = if s == "cfs" { GuestScheduler::Cfs } else { GuestScheduler::Linux };
            self.domains.iter_mut().for_each(|d| d.guest.scheduler = s);
            self
        }
    }

    fn mixed_guest(cap_pct: u32, balloon: bool) -> Value {
        let srv = json!({ "name": "srv", "priority": "rt",
                          "workload": { "type": "server", "port": 7, "cpu_us": 150, "clients": 4, "think_ms": [1, 3] } });
        json!({ "name": "vm", "cap_pct": cap_pct, "guest": { "clock": "two_clocks", "balloon": balloon },
                "tasks": [srv, cpu_task("burn")] })
    }

    /// The balloon never holds a vCPU while an event waits for its guest: whenever a vCPU is paused with a
    /// notification pending, the cap parked it (not the balloon); and at every balloon pause no event was pending and
    /// no task an event woke was runnable. Checked after every event, with static and dynamic guest priorities, by
    /// cap and by sharing.
    #[test]
    fn balloon_never_runs_while_an_event_is_pending() {
        for (sched, cap, neighbour, pcpus) in [("linux", 50, false, 2), ("cfs", 50, false, 2), ("linux", 0, true, 1)] {
            let sc = xballoon_host(pcpus, mixed_guest(cap, true), neighbour, sched);
            let mut sim = Simulation::new(&sc, "xb").unwrap();
            let v = sim.host.dom_info[1].vcpus[0];
            let mut paused_steps = 0;
            while !sim.step(1).unwrap() {
                if sim.host.vcpus[v.0].paused {
                    paused_steps += 1;
                    if !sim.host.vcpus[v.0].pending.is_empty() {
                        assert_eq!(
                            sim.vcpu_sched(v).pri.label,
                            "PARKED",
                            "{sched}: balloon pause with an event pending"
                        );
                    }
                }
            }
            assert_eq!(sim.measure.balloon_violations, 0, "{sched}");
            assert!(paused_steps > 1000, "{sched}: the balloon paused the vCPU ({paused_steps} steps)");
            assert_io_conserved(&sim);
            assert_cpu_conserved(&sim);
        }
    }

    /// Each accounting period the guest reserves period x (1 - share): with a 40% cap (or an equal share of one pCPU
    /// beside a CPU-bound neighbour) and no I/O, the vCPU stays off the CPU for the first 18 ms (15 ms) of every 30 ms
    /// period, then runs work-conserving: its CPU over the period still reaches its share.
    #[test]
    fn reservation_is_met_each_period() {
        for (cap, neighbour, reserve_ms, share_ms) in [(40u64, false, 18u64, 12u64), (0, true, 15, 15)] {
            let guest =
                json!({ "name": "vm", "cap_pct": cap, "guest": { "balloon": true }, "tasks": [cpu_task("burn")] });
            let sc = xballoon_host(1, guest, neighbour, "linux");
            let sim = run(&sc, "xb");
            let ms = 1_000_000;
            // From the fourth period on: the first ones settle Credit's shares (beside the neighbour).
            for k in 3..sim.end.0 / (30 * ms) {
                let start = k * 30 * ms;
                let before = dom_cpu_in(&sim, 1, start, start + (reserve_ms - 1) * ms);
                assert!(before < ms / 10, "period {k}: ran {before} ns inside its reservation");
                let used = dom_cpu_in(&sim, 1, start, start + 30 * ms);
                let lost = (share_ms * ms).saturating_sub(used);
                assert!(lost < 2 * ms, "period {k}: used {used} ns of its {share_ms} ms share");
            }
        }
    }

    /// With xBalloon off, or on but with no guest running a balloon, the run is plain Credit's, bit for bit.
    #[test]
    fn xballoon_off_is_plain_credit() {
        let opts = RunOptions { deterministic: true, ..RunOptions::default() };
        for (guest, cmp) in [(mixed_guest(50, true), "off"), (mixed_guest(50, false), "xb")] {
            let sc = xballoon_host(2, guest, true, "linux");
            let (plain, other) = (run(&sc, "credit"), run(&sc, cmp));
            assert_eq!(plain.trace().segments(), other.trace().segments(), "{cmp}");
            let (mut a, mut b) = (plain.report(&opts), other.report(&opts));
            a["policy"] = Value::Null;
            b["policy"] = Value::Null;
            assert_eq!(a, b, "{cmp}");
        }
    }
}
