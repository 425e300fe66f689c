//! Relaxed co-scheduling as VMware describes it ("The CPU Scheduler in VMware vSphere 5.1", VMware technical white
//! paper, 2013): the vCPUs of a VM need not start together, but none may fall too far behind its siblings.
//!
//! Each vCPU has a skew: it grows while the vCPU could run (runnable, not co-stopped) but does not and a sibling
//! runs, shrinks while it runs, and is 0 while it idles (an idle vCPU counts as making progress). Once a vCPU's
//! skew passes `skew_us`, the VM's leading vCPUs (every sibling that is not itself behind) are co-stopped: they
//! leave their pCPUs and stay off until the laggards have caught up (every skew back to 0); a laggard waits its
//! turn on its own pCPU like any vCPU, so while it waits the whole VM stands still. `costop: false` keeps the skew and never co-stops, which leaves a plain
//! proportional-share scheduler.
//!
//! Underneath, each pCPU runs its own vCPUs (placed as vCPU index modulo pCPUs, never moved: ESXi's load balancer
//! is not modelled) by least weighted CPU consumed, a domain's weight split between its vCPUs, in slices of
//! `slice_us` (30 ms, Credit's slice, chosen here: the white paper gives no quantum), without wake-up preemption.
//! Skew is checked every millisecond of the host tick this model gives itself.

use super::common::Versions;
use super::params::{self, Params};
use super::registry::{self, Caps, Scheduler};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, ShareBasis, Timers, VcpuSched, WakeCause};
use crate::model::{PcpuId, VcpuId};
use crate::time::Nanos;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;

/// How often skew is checked [ns].
const CHECK_NS: u64 = 1_000_000;

/// Relaxed co-scheduling's parameters.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct RelaxedParams {
    /// The skew past which a VM's leading vCPUs are co-stopped [us] (3000, chosen here: the white paper names the
    /// threshold, not its value).
    #[schemars(range(min = 1, max = 1_000_000))]
    pub skew_us: u64,
    /// Co-stop the leaders once a sibling's skew passes `skew_us`; false keeps only the proportional share.
    pub costop: bool,
    /// The time slice [us].
    #[schemars(range(min = 100, max = 1_000_000))]
    pub slice_us: u64,
}

impl Default for RelaxedParams {
    fn default() -> RelaxedParams {
        RelaxedParams { skew_us: 3_000, costop: true, slice_us: 30_000 }
    }
}

impl Params for RelaxedParams {
    const SCHEDULER: &'static str = "relaxed_cosched";
    const DEF: &'static str = "relaxed_cosched_params";
}

#[derive(Clone)]
pub struct Relaxed {
    params: RelaxedParams,
    /// Each vCPU's pCPU, domain, weighted consumption, skew [ns], and whether it is runnable or co-stopped.
    pcpu: Vec<usize>,
    dom: Vec<usize>,
    consumed: Vec<u64>,
    skew: Vec<u64>,
    runnable: Vec<bool>,
    costopped: Vec<bool>,
    /// Per vCPU: what 1 ns of its run time adds to `consumed` (1024 x vCPUs / the domain's weight).
    rate: Vec<u64>,
    /// Each domain's vCPUs.
    vcpus: Vec<Vec<VcpuId>>,
    /// The vCPU each pCPU runs.
    running: Vec<Option<VcpuId>>,
    last: Nanos,
    /// Co-stops so far.
    costops: u64,
    versions: Versions,
}

impl Relaxed {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Relaxed, String> {
        let params: RelaxedParams = params::from_value(params)?;
        let nv: usize = domains.iter().map(|d| d.vcpus.len()).sum();
        let (mut dom, mut rate) = (vec![0; nv], vec![1; nv]);
        for (d, info) in domains.iter().enumerate() {
            for v in &info.vcpus {
                dom[v.0] = d;
                rate[v.0] = (1024 * info.vcpus.len() as u64 / u64::from(info.weight.max(1))).max(1);
            }
        }
        Ok(Relaxed {
            params,
            pcpu: (0..nv).map(|v| v % pcpus.max(1)).collect(),
            dom,
            consumed: vec![0; nv],
            skew: vec![0; nv],
            runnable: vec![false; nv],
            costopped: vec![false; nv],
            rate,
            vcpus: domains.iter().map(|d| d.vcpus.clone()).collect(),
            running: vec![None; pcpus],
            last: Nanos::ZERO,
            costops: 0,
            versions: Versions::new(pcpus),
        })
    }

    /// Co-stops so far (tests).
    pub fn costops(&self) -> u64 {
        self.costops
    }

    fn is_running(&self, v: VcpuId) -> bool {
        self.running[self.pcpu[v.0]] == Some(v)
    }

    /// Brings consumption and skew up to `now`.
    fn update(&mut self, now: Nanos) {
        let dt = now.saturating_sub(self.last).0;
        self.last = self.last.max(now);
        if dt == 0 {
            return;
        }
        for d in 0..self.vcpus.len() {
            let any_running = self.vcpus[d].iter().any(|&v| self.is_running(v));
            for i in 0..self.vcpus[d].len() {
                let v = self.vcpus[d][i];
                if self.is_running(v) {
                    self.consumed[v.0] += dt * self.rate[v.0];
                    self.skew[v.0] = self.skew[v.0].saturating_sub(dt);
                } else if !self.runnable[v.0] {
                    self.skew[v.0] = 0;
                } else if any_running && !self.costopped[v.0] {
                    self.skew[v.0] += dt;
                }
            }
        }
    }

    /// Co-stops a VM whose laggard passed the threshold, and co-starts one whose laggards caught up.
    fn enforce(&mut self, ctx: &mut Ctx) {
        let limit = self.params.skew_us * 1000;
        for d in 0..self.vcpus.len() {
            let costopped = self.vcpus[d].iter().any(|v| self.costopped[v.0]);
            if costopped {
                if self.vcpus[d].iter().all(|v| self.skew[v.0] == 0 || self.costopped[v.0]) {
                    for i in 0..self.vcpus[d].len() {
                        let v = self.vcpus[d][i];
                        self.costopped[v.0] = false;
                        if self.runnable[v.0] && self.running[self.pcpu[v.0]].is_none() {
                            ctx.resched(PcpuId(self.pcpu[v.0]));
                        }
                    }
                    self.versions.touch_all();
                }
                continue;
            }
            if !self.params.costop || !self.vcpus[d].iter().any(|v| self.skew[v.0] > limit) {
                continue;
            }
            self.costops += 1;
            for i in 0..self.vcpus[d].len() {
                let v = self.vcpus[d][i];
                // The leaders: every sibling not itself behind.
                if self.skew[v.0] == 0 && self.runnable[v.0] {
                    self.costopped[v.0] = true;
                    let p = PcpuId(self.pcpu[v.0]);
                    if self.running[p.0] == Some(v) {
                        ctx.note(p, |w| {
                            write!(w, "{} co-stopped: a sibling's skew passed the threshold", ctx.host.vcpu_name[v.0])
                        });
                        ctx.resched(p);
                    }
                }
            }
            self.versions.touch_all();
        }
    }

    fn eligible(&self, v: VcpuId) -> bool {
        self.runnable[v.0] && !self.costopped[v.0]
    }

    /// Whether `v` is catching up in a VM with co-stopped siblings.
    fn lagging(&self, v: VcpuId) -> bool {
        self.skew[v.0] > 0 && self.vcpus[self.dom[v.0]].iter().any(|x| self.costopped[x.0])
    }
}

impl Policy for Relaxed {
    fn timers(&self) -> Timers {
        Timers { tick: Some(Nanos(CHECK_NS)), ..Timers::default() }
    }

    fn init_vcpu(&mut self, v: VcpuId, _ctx: &mut Ctx) -> PcpuId {
        PcpuId(self.pcpu[v.0])
    }

    fn wake(&mut self, v: VcpuId, _cause: WakeCause, ctx: &mut Ctx) {
        self.update(ctx.now);
        self.runnable[v.0] = true;
        let p = self.pcpu[v.0];
        // A sleeper starts from the least consumption on its pCPU, so it cannot bank idle time.
        let least = (0..self.pcpu.len())
            .filter(|&x| self.pcpu[x] == p && self.runnable[x] && x != v.0)
            .map(|x| self.consumed[x])
            .min();
        if let Some(m) = least {
            self.consumed[v.0] = self.consumed[v.0].max(m);
        }
        self.versions.touch(PcpuId(p));
        if self.running[p].is_none() && self.eligible(v) {
            ctx.resched(PcpuId(p));
        }
    }

    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        self.update(ctx.now);
        self.runnable[v.0] = false;
        self.skew[v.0] = 0;
        self.versions.touch(PcpuId(self.pcpu[v.0]));
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        self.update(ctx.now);
        if let Some(c) = cur {
            self.runnable[c.0] = cur_runnable;
        }
        self.running[p.0] = None;
        self.enforce(ctx);
        let next = (0..self.pcpu.len())
            .map(VcpuId)
            .filter(|&v| self.pcpu[v.0] == p.0 && self.eligible(v))
            .min_by_key(|&v| (self.consumed[v.0], v.0));
        self.running[p.0] = next;
        self.versions.touch(p);
        let reason = match next {
            _ if !ctx.explain => String::new(),
            Some(n) if self.lagging(n) => format!("runs {}: it catches up with its co-stopped siblings", ctx.name(n)),
            Some(n) => format!("runs {}: least CPU consumed for its share", ctx.name(n)),
            None => format!("pCPU{} idles", p.0),
        };
        let slice = if next.is_some() { Nanos(self.params.slice_us * 1000) } else { Nanos::ZERO };
        Pick { next, slice, reason }
    }

    fn tick(&mut self, _p: PcpuId, ctx: &mut Ctx) {
        self.update(ctx.now);
        self.enforce(ctx);
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        params::change(&mut self.params, param, value)
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let pri = if self.costopped[v.0] {
            Pri::new(PriClass::Parked, "COSTOP")
        } else if !self.runnable[v.0] {
            Pri::new(PriClass::Blocked, "IDLE")
        } else if self.lagging(v) {
            Pri::new(PriClass::Boost, "LAGGING")
        } else {
            Pri::new(PriClass::Other, "READY")
        };
        VcpuSched { pri, credit: Some((self.skew[v.0] / 1000) as i64) }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        let mut q: Vec<VcpuId> = (0..self.pcpu.len())
            .map(VcpuId)
            .filter(|&v| self.pcpu[v.0] == p.0 && self.eligible(v) && self.running[p.0] != Some(v))
            .collect();
        q.sort_by_key(|&v| (self.consumed[v.0], v.0));
        q
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }

    fn share_rule(&self) -> ShareBasis {
        ShareBasis::DomainWeight
    }
}

crate::size::heap_size!(Relaxed { pcpu, dom, consumed, skew, runnable, costopped, rate, vcpus, running, versions });

/// Relaxed co-scheduling's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "relaxed_cosched",
    caps: Caps::PLAIN,
    build: |s| registry::boxed(Relaxed::new(s.params, s.pcpus, s.domains)),
    check_param: |k, v| params::change(&mut RelaxedParams::default(), k, v),
    check_scenario: registry::no_scenario_check,
    params: params::declared::<RelaxedParams>(),
};

#[cfg(test)]
mod tests {
    use crate::sim::test_support::{run, scenario};
    use serde_json::json;

    /// A 2-vCPU spin-barrier job beside a busy domain on two pCPUs, its vCPUs on different pCPUs' turns: the skew
    /// grows past the threshold and the leader is co-stopped instead of spinning: without co-stop the job spins
    /// more.
    #[test]
    fn a_lagging_sibling_costops_the_leader() {
        let sc = |costop: bool| {
            scenario(json!({"schema": 1, "id": "t", "title": "t", "seed": 1, "duration_ms": 600, "warmup_ms": 0,
                "host": {"pcpus": 2},
                "domains": [
                    {"name": "job", "vcpus": 2, "weight": 256, "tasks": [{"name": "app", "workload":
                        {"type": "barrier", "compute_us": 500, "phases": 0, "sync": "spin"}}]},
                    {"name": "hog", "vcpus": 3, "weight": 256, "tasks": [
                        {"name": "b0", "vcpu": 0, "workload": {"type": "cpu"}},
                        {"name": "b1", "vcpu": 1, "workload": {"type": "cpu"}},
                        {"name": "b2", "vcpu": 2, "workload": {"type": "cpu"}}]}],
                "policies": [{"id": "r", "scheduler": "relaxed_cosched", "params": {"costop": costop}}]}))
        };
        let on = run(&sc(true), "r");
        let off = run(&sc(false), "r");
        let spin = |s: &crate::sim::Simulation| s.guests.groups[0].spin_ns;
        assert!(spin(&on) < spin(&off), "co-stop {} ns against {} ns", spin(&on), spin(&off));
    }
}
