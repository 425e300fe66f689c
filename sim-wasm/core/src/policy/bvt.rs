//! Borrowed Virtual Time (Duda and Cheriton; Xen 2.0 `sched_bvt.c`; thesis 003, 3.2.1): each vCPU's actual
//! virtual time advances by `mcu_advance` per minimum charging unit (MCU) of CPU, so a heavier domain's clock runs
//! slower; the vCPU with the earliest effective virtual time runs. A latency-sensitive domain may warp: while
//! warped its effective time is `avt - warp`, so it wins the CPU on waking. A warp lasts at most `warp_limit`
//! of CPU, after which the domain must stay unwarped for `unwarp_req` before it may warp again. The running
//! vCPU keeps the CPU until its time passes the next one's by the context-switch allowance. Work-conserving
//! only (no caps); one run queue per pCPU and no load balancing, as in Xen.

use super::common::{self, Versions};
use super::params::{self, Params};
use super::{Ctx, DomainInfo, Pick, Policy, Pri, PriClass, Timers, VcpuSched, WakeCause};
use crate::model::{PcpuId, VcpuId};
use crate::policy::registry::{self, Caps, Scheduler};
use crate::time::Nanos;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;

/// `mcu_advance` of a domain of the default weight 256 (others get 2560 / weight), in thousandths: virtual time
/// is kept 1000 times finer than Xen's so weights that do not divide 2560 are still honoured exactly.
const DEFAULT_ADVANCE: u64 = 10_000;

/// Borrowed Virtual Time (thesis 003 3.2.1; Xen 2.0 sched_bvt.c). Lowest effective virtual time runs; warping
/// domains wake with their time set back by warp.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct BvtParams {
    /// Minimum charging unit [us]: virtual time advances in whole MCUs.
    #[schemars(range(min = 1, max = 10_000))]
    pub mcu_us: u64,
    /// Context-switch allowance C [us]: the running vCPU keeps the CPU until its virtual time passes the next
    /// one's by this much.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub ctx_allow_us: u64,
    /// Per-domain settings by domain name.
    pub domains: IndexMap<String, BvtDomain>,
}

impl Default for BvtParams {
    /// Xen's.
    fn default() -> BvtParams {
        BvtParams { mcu_us: 100, ctx_allow_us: 5000, domains: IndexMap::new() }
    }
}

impl Params for BvtParams {
    const SCHEDULER: &'static str = "bvt";
    const DEF: &'static str = "bvt_params";
    const FIXED: &'static [&'static str] = &["domains"];
}

impl BvtParams {
    /// Checks a run-time change (the per-domain settings are fixed at boot).
    pub fn check_change(param: &str, v: &Value) -> Result<(), String> {
        params::change(&mut BvtParams::default(), param, v)
    }
}

/// One domain's BVT settings.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(inline)]
pub struct BvtDomain {
    /// Virtual time per MCU (inverse of weight); default 2560 / weight, so 10 at weight 256.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1, max = 100_000), extend("default" = 10))]
    pub mcu_advance: Option<u64>,
    /// Warp [us of virtual time at advance 10]; 0 = never warps. A warping domain wakes with its effective time
    /// set back by this.
    #[schemars(range(min = 0, max = 10_000_000))]
    pub warp_us: u64,
    /// Longest CPU time a warp lasts [ms] (Xen: 2000).
    #[schemars(range(min = 1, max = 3_600_000))]
    pub warp_limit_ms: u64,
    /// Time a domain must stay unwarped after a warp ran out before it may warp again [ms] (Xen: 1000).
    #[schemars(range(min = 0, max = 3_600_000))]
    pub unwarp_req_ms: u64,
}

impl Default for BvtDomain {
    fn default() -> BvtDomain {
        BvtDomain { mcu_advance: None, warp_us: 0, warp_limit_ms: 2000, unwarp_req_ms: 1000 }
    }
}

/// A domain's BVT settings as the policy runs with them.
#[derive(Debug, Clone, PartialEq)]
struct DomBvt {
    /// Virtual time per MCU of CPU (inverse of weight) [thousandths of Xen's unit].
    mcu_advance: u64,
    /// Warp [us of virtual time at the default advance]; 0 = never warps.
    warp_us: u64,
    /// Longest a warp lasts, in CPU time [ms] (Xen: 2000).
    warp_limit_ms: u64,
    /// Unwarped time required before warping again [ms] (Xen: 1000).
    unwarp_req_ms: u64,
}

impl DomBvt {
    fn from(weight: u32, s: &BvtDomain) -> DomBvt {
        DomBvt {
            mcu_advance: s.mcu_advance.map_or((DEFAULT_ADVANCE * 256 / u64::from(weight.max(1))).max(1), |a| a * 1000),
            warp_us: s.warp_us,
            warp_limit_ms: s.warp_limit_ms,
            unwarp_req_ms: s.unwarp_req_ms,
        }
    }
}

#[derive(Debug, Clone)]
struct BVcpu {
    dom: usize,
    /// Actual virtual time [MCU x advance].
    avt: u64,
    /// CPU not yet charged because it is less than a whole MCU [ns].
    residual: u64,
    warping: bool,
    /// CPU used in the current warp [ns].
    warped_ns: u64,
    /// When the last warp ran out (for the unwarp requirement).
    unwarped_at: Option<Nanos>,
    processor: PcpuId,
    on_runq: bool,
    last_charge: Nanos,
}

#[derive(Clone)]
pub struct Bvt {
    params: BvtParams,
    doms: Vec<DomBvt>,
    vcpus: Vec<BVcpu>,
    runq: Vec<Vec<VcpuId>>,
    versions: Versions,
}

impl Bvt {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Bvt, String> {
        let p: BvtParams = params::from_value(params)?;
        if let Some(name) = p.domains.keys().find(|n| !domains.iter().any(|d| &&d.name == n)) {
            return Err(format!("bvt.domains.{name}: no domain named '{name}'"));
        }
        let plain = BvtDomain::default();
        let doms = domains.iter().map(|d| DomBvt::from(d.weight, p.domains.get(&d.name).unwrap_or(&plain))).collect();
        let place = common::spread(domains.iter().map(|d| d.vcpus.len()).sum(), pcpus);
        let mut vcpus = Vec::new();
        for (d, info) in domains.iter().enumerate() {
            for v in &info.vcpus {
                vcpus.push(BVcpu {
                    dom: d,
                    avt: 0,
                    residual: 0,
                    warping: false,
                    warped_ns: 0,
                    unwarped_at: None,
                    processor: place[v.0],
                    on_runq: false,
                    last_charge: Nanos::ZERO,
                });
            }
        }
        Ok(Bvt { params: p, doms, vcpus, runq: vec![Vec::new(); pcpus], versions: Versions::new(pcpus) })
    }

    fn mcu(&self) -> u64 {
        self.params.mcu_us * 1000
    }

    /// Effective virtual time: actual minus the warp while warping.
    fn evt(&self, v: VcpuId) -> i64 {
        let c = &self.vcpus[v.0];
        let warp = if c.warping { self.warp_units(c.dom) } else { 0 };
        c.avt as i64 - warp as i64
    }

    fn warp_units(&self, d: usize) -> u64 {
        self.doms[d].warp_us * 1000 / self.mcu() * DEFAULT_ADVANCE
    }

    /// Charges CPU used since the last charge: whole MCUs advance the virtual time; warps use up their limit.
    fn charge(&mut self, v: VcpuId, now: Nanos) {
        let mcu = self.mcu();
        let c = &mut self.vcpus[v.0];
        let ran = now.saturating_sub(c.last_charge).0;
        c.last_charge = now;
        let total = ran + c.residual;
        c.avt += total / mcu * self.doms[c.dom].mcu_advance;
        c.residual = total % mcu;
        if c.warping {
            c.warped_ns += ran;
            if c.warped_ns >= self.doms[c.dom].warp_limit_ms * 1_000_000 {
                c.warping = false;
                c.unwarped_at = Some(now);
            }
        }
    }

    /// System virtual time of a pCPU: the least actual virtual time of its runnable vCPUs.
    fn svt(&self, p: PcpuId, running: Option<VcpuId>) -> Option<u64> {
        self.runq[p.0].iter().chain(running.iter()).map(|v| self.vcpus[v.0].avt).min()
    }

    fn insert(&mut self, v: VcpuId) {
        let p = self.vcpus[v.0].processor;
        self.runq[p.0].push(v);
        self.vcpus[v.0].on_runq = true;
        self.versions.touch(p);
    }
}

impl Policy for Bvt {
    fn timers(&self) -> Timers {
        Timers { timer_slop: true, ..Timers::default() }
    }

    fn init_vcpu(&mut self, v: VcpuId, _ctx: &mut Ctx) -> PcpuId {
        self.vcpus[v.0].processor
    }

    fn wake(&mut self, v: VcpuId, _cause: WakeCause, ctx: &mut Ctx) {
        if self.vcpus[v.0].on_runq {
            return;
        }
        let p = self.vcpus[v.0].processor;
        let running = ctx.host.running[p.0];
        if let Some(c) = running {
            self.charge(c, ctx.now);
        }
        // A sleeper does not bank virtual time: it comes back no earlier than the pCPU's system virtual time.
        if let Some(svt) = self.svt(p, running) {
            let c = &mut self.vcpus[v.0];
            c.avt = c.avt.max(svt);
        }
        let d = self.vcpus[v.0].dom;
        let may_warp = self.doms[d].warp_us > 0
            && self.vcpus[v.0]
                .unwarped_at
                .is_none_or(|t| ctx.now.saturating_sub(t) >= Nanos::from_ms(self.doms[d].unwarp_req_ms));
        if may_warp && !self.vcpus[v.0].warping {
            self.vcpus[v.0].warping = true;
            self.vcpus[v.0].warped_ns = 0;
        }
        self.insert(v);
        match running {
            None => ctx.resched(p),
            Some(c) if self.evt(v) < self.evt(c) => {
                let (a, b) = (&ctx.host.vcpu_name[v.0], &ctx.host.vcpu_name[c.0]);
                ctx.note(p, |w| write!(w, "{a} wakes with an earlier effective virtual time than {b}"));
                ctx.resched(p);
            }
            Some(_) => {}
        }
    }

    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        if self.vcpus[v.0].on_runq {
            let p = self.vcpus[v.0].processor;
            self.runq[p.0].retain(|&u| u != v);
            self.vcpus[v.0].on_runq = false;
            self.versions.touch(p);
        }
        if ctx.host.running.contains(&Some(v)) {
            self.charge(v, ctx.now);
        }
        // A warp ends when the domain blocks: the next wake starts a new one.
        self.vcpus[v.0].warping = false;
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now;
        self.versions.touch(p);
        if let Some(c) = cur {
            self.charge(c, now);
            if cur_runnable {
                self.insert(c);
            }
        }
        // Lowest effective virtual time first; ties in queue order.
        let best = self.runq[p.0].iter().enumerate().min_by_key(|(i, v)| (self.evt(**v), *i)).map(|(i, _)| i);
        let Some(i) = best else {
            let reason = if ctx.explain { format!("pCPU{} goes idle", p.0) } else { String::new() };
            return Pick { next: None, slice: Nanos::ZERO, reason };
        };
        let n = self.runq[p.0].remove(i);
        self.vcpus[n.0].on_runq = false;
        self.vcpus[n.0].last_charge = now;
        let e = self.evt(n);
        let second = self.runq[p.0].iter().map(|v| self.evt(*v)).min();
        let adv = self.doms[self.vcpus[n.0].dom].mcu_advance;
        let allow = Nanos::from_us(self.params.ctx_allow_us);
        // Run until this vCPU's time passes the next one's by the context-switch allowance.
        let mut slice = match second {
            Some(s2) => Nanos(((s2 - e).max(0) as u64 / adv) * self.mcu()) + allow,
            None => allow.max(Nanos::from_ms(10)),
        };
        let c = &self.vcpus[n.0];
        if c.warping {
            let left = (self.doms[c.dom].warp_limit_ms * 1_000_000).saturating_sub(c.warped_ns);
            slice = slice.min(Nanos(left.max(self.mcu())));
        }
        let slice = slice.max(Nanos(self.mcu()));
        let reason = if ctx.explain {
            let w = if self.vcpus[n.0].warping { ", warped" } else { "" };
            format!("runs {}: earliest effective virtual time {e}{w}", ctx.name(n))
        } else {
            String::new()
        };
        Pick { next: Some(n), slice, reason }
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        params::change(&mut self.params, param, value)
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let pri =
            if self.vcpus[v.0].warping { Pri::new(PriClass::Boost, "WARP") } else { Pri::new(PriClass::Other, "BVT") };
        VcpuSched { pri, credit: Some(self.evt(v)) }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        let mut q = self.runq[p.0].clone();
        q.sort_by_key(|v| self.evt(*v));
        q
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }
}

crate::size::no_heap!(DomBvt, BVcpu);
crate::size::heap_size!(Bvt { doms, vcpus, runq, versions });

/// BVT's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "bvt",
    caps: Caps::PLAIN,
    build: |s| registry::boxed(Bvt::new(s.params, s.pcpus, s.domains)),
    check_param: BvtParams::check_change,
    check_scenario: registry::no_scenario_check,
    params: params::declared::<BvtParams>(),
};

#[cfg(test)]
mod tests {
    use super::*;

    use crate::sim::test_support::*;
    use crate::sim::Simulation;
    use serde_json::{json, Value};

    /// Files and changes are checked against BvtParams' declaration; the per-domain table is fixed at boot.
    #[test]
    fn params_are_checked_by_their_declaration() {
        let doms = [DomainInfo {
            name: "a".into(),
            weight: 512,
            cap_pct: 0,
            vcpus: vec![VcpuId(0)],
            is_driver: false,
            backend_for: Vec::new(),
        }];
        let bvt = |v: Value| Bvt::new(&v, 1, &doms).map(|b| (b.params.mcu_us, b.doms[0].mcu_advance));
        assert_eq!(bvt(json!({})).unwrap(), (100, 5000));
        assert_eq!(bvt(json!({"mcu_us": 50, "domains": {"a": {"mcu_advance": 7}}})).unwrap(), (50, 7000));
        assert_eq!(bvt(json!({"domains": {"b": {}}})).unwrap_err(), "bvt.domains.b: no domain named 'b'");
        assert_eq!(bvt(json!({"mcu_us": 0})).unwrap_err(), "mcu_us: expected an integer in 1..=10000, got 0");
        assert!(BvtParams::check_change("ctx_allow_us", &json!(10)).is_ok());
        assert_eq!(
            BvtParams::check_change("domains.a.warp_us", &json!(10)).unwrap_err(),
            "domains.a.warp_us: fixed at boot"
        );
    }

    /// BVT is weighted fair: virtual time advances at 2560/weight per MCU, so the same domains share in proportion.
    #[test]
    fn bvt_weights_honoured() {
        let sim = run(&weighted_hogs("bvt", 1, json!({})), "p");
        let s = shares(&sim);
        for (got, want) in s.iter().zip([0.125, 0.25, 0.125, 0.5]) {
            assert!((got - want).abs() < 0.015, "shares {s:?}");
        }
    }

    /// A server beside CPU-bound domains under BVT: with a warp it is served at once on waking (its effective
    /// virtual time goes back past the others'), without one it waits for its virtual time to come round.
    #[test]
    fn bvt_warp_cuts_latency() {
        let base = json!({
            "schema": 1, "id": "warp", "title": "warp", "seed": 6, "duration_ms": 6000, "warmup_ms": 500,
            "host": { "pcpus": 1, "net": { "latency_us": 50, "mbps": 1000 } },
            "domains": [
                { "name": "dom0", "role": "driver", "costs": { "packet_us": 10 } },
                { "name": "web", "tasks": [server_task("srv", 80, [5, 20])] },
                { "name": "h1", "tasks": [cpu_task("x")] }, { "name": "h2", "tasks": [cpu_task("x")] }
            ],
            "policies": [
                { "id": "plain", "scheduler": "bvt" },
                { "id": "warp", "scheduler": "bvt", "params": { "domains": {
                    "web": { "warp_us": 50000 }, "dom0": { "warp_us": 50000 } } } }
            ]
        });
        let sc = scenario(base);
        let (plain, warp) = (run(&sc, "plain"), run(&sc, "warp"));
        let mean = |s: &Simulation| crate::metrics::Summary::of(&s.measure.dom_metrics[1].responses_ns).unwrap().mean;
        assert!(mean(&warp) * 3.0 < mean(&plain), "warp {} ms vs plain {} ms", mean(&warp), mean(&plain));
    }
}
