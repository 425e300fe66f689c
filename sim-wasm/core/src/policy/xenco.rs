//! Communication-aware SEDF ("Xen and Co.", paper 004 section 3): SEDF's reservations, with the greedy choice of
//! the domain whose running serves the most packets.
//!
//! Book-keeping, as the paper keeps it in dom0's page: a guest's network-reception intensity counts packets the
//! driver domain handed it that it has not processed yet (reset when it is descheduled, having processed them);
//! its actual transmit intensity counts packets it queued during its run, folded at deschedule into the driver
//! domain's transmission intensity and into a last-value predictor (the packets of its last transmitting run,
//! expected again within the interval between its last two transmitting runs: its anticipated transmission
//! intensity); the driver domain's reception intensity counts packets waiting for it (NIC interrupts). At every
//! decision the scheduler picks, among the vCPUs that still have slice in their current period, the one of highest
//! intensity (reception + anticipated transmission for guests; reception + transmission for the driver domain),
//! provided the processor-demand test says no reservation of any other vCPU can then miss its deadline; ties and
//! no traffic fall back to SEDF's earliest deadline. A domain is preferred "only ... so long as it has received less
//! than its slice for the ongoing period" (3.2): in extra time only a vCPU still owed slice lost to an early block
//! (SEDF's L0) may be preferred, so a best-effort domain (no slice) is never preferred and takes extra time SEDF's
//! way. The driver-domain preference and the anticipation are options (the paper's Table 2), and so is letting a
//! vCPU woken in the period it blocked in keep the rest of its slice (which the preference needs to act on it).
//! `unbounded_extra` restores a preference of any extra-time vCPU, which the paper does not describe: it moves CPU
//! from the other extra-time domains to the communicating ones (kept to show that transfer).

use super::params::{self, Params};
use super::sedf::{DomSpec, RunKind, Sedf, SedfParams, SedfVersion, EXTRA_QUANTUM};
use super::{Ctx, DomainInfo, IoKind, Pick, Policy, ShareBasis, Timers, VcpuSched, WakeCause};
use crate::model::{DomId, PcpuId, VcpuId};
use crate::policy::registry::{self, Caps, Scheduler};
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Shortest preferential run worth a context switch [ns].
const MIN_PREFERRED_RUN: u64 = 100_000;

/// The switchable parts of the algorithm (004 Table 2).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct XencoOpts {
    pub dom0_preference: bool,
    pub anticipation: bool,
    pub reception: bool,
    pub resume_on_wake: bool,
    pub unbounded_extra: bool,
}

/// Communication-aware SEDF (paper 004, section 3): SEDF's reservations, plus the greedy choice, among the domains
/// that still have slice in their period, of the one whose running serves the most packets, taken only when no
/// reservation can be missed for it. Options switch the paper's optimisations (Table 2).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct XencoParams {
    /// Which release's creation defaults apply to domains not named in domains: "3.0" (dom0 15 ms every 20 ms)
    /// or "4.x" (every domain best effort with extra weight 1, as Xen 4.1-4.5 create them). Fixed at boot.
    pub version: SedfVersion,
    /// By domain name (as for sedf).
    pub domains: IndexMap<String, DomSpec>,
    /// For every guest domain not named in domains.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "DomSpec")]
    pub guests: Option<DomSpec>,
    /// Count the driver domain's reception (NIC interrupts) and transmission (packets guests queued) intensity,
    /// so it is picked when most packets wait on it (004 3.4).
    pub dom0_preference: bool,
    /// Count a guest's anticipated transmission intensity: the packets it sent in its last transmitting run,
    /// while within the interval between its last two transmissions (last-value predictor, 004 3.3).
    pub anticipation: bool,
    /// Count a guest's reception intensity: packets the driver domain handed it that it has not yet processed
    /// (004 3.2).
    pub reception: bool,
    /// A domain woken in the period it blocked in keeps the rest of its slice (so it can be preferred while it
    /// has slice left, 004 3.2) instead of SEDF's forfeit-and-compensate.
    pub resume_on_wake: bool,
    /// Prefer any extra-time vCPU with traffic, past its slice (not the paper's rule, which prefers a domain only
    /// while it has received less than its slice, 3.2): off by default.
    pub unbounded_extra: bool,
}

impl Default for XencoParams {
    fn default() -> XencoParams {
        XencoParams {
            version: SedfVersion::default(),
            domains: IndexMap::new(),
            guests: None,
            dom0_preference: true,
            anticipation: true,
            reception: true,
            resume_on_wake: true,
            unbounded_extra: false,
        }
    }
}

impl Params for XencoParams {
    const SCHEDULER: &'static str = "xenco";
    const DEF: &'static str = "xenco_params";
    const FIXED: &'static [&'static str] = &["version"];

    fn check(&self) -> Result<(), String> {
        self.sedf().check()
    }
}

impl XencoParams {
    /// SEDF's part.
    fn sedf(&self) -> SedfParams {
        SedfParams { version: self.version, domains: self.domains.clone(), guests: self.guests.clone() }
    }

    fn opts(&self) -> XencoOpts {
        XencoOpts {
            dom0_preference: self.dom0_preference,
            anticipation: self.anticipation,
            reception: self.reception,
            resume_on_wake: self.resume_on_wake,
            unbounded_extra: self.unbounded_extra,
        }
    }
}

const OPT_KEYS: [&str; 5] = ["dom0_preference", "anticipation", "reception", "resume_on_wake", "unbounded_extra"];

/// Checks xenco's parameters at load (see [`super::sedf::check_params`]).
pub fn check_params(v: &Value, names: &[&str]) -> Result<(), String> {
    params::from_value::<XencoParams>(v)?;
    super::sedf::check_params(v, names, &OPT_KEYS)
}

/// Checks a run-time parameter of xenco.
pub fn check_param(param: &str, v: &Value) -> Result<(), String> {
    params::change(&mut XencoParams::default(), param, v)
}

/// Per-domain I/O book-keeping [packets] and the transmit predictor's times [ns].
#[derive(Debug, Clone, Default)]
struct Book {
    /// Guest: packets handed over by the driver domain, not yet processed.
    rx: u64,
    /// Guest: packets queued for sending during the current run.
    actual_tx: u64,
    /// Guest: packets of the last transmitting run, when it ended, and the interval before it.
    last_tx: u64,
    last_tx_at: u64,
    tx_interval: u64,
    /// Driver domain: packets waiting for it to receive (from the NIC or the bridge) and to transmit.
    drv_rx: u64,
    drv_tx: u64,
}

#[derive(Clone)]
pub struct Xenco {
    sedf: Sedf,
    opts: XencoOpts,
    book: Vec<Book>,
    is_driver: Vec<bool>,
    /// The driver domain serving each domain's network I/O, learnt from its requests.
    driver_of: Vec<Option<DomId>>,
    /// Decisions that departed from SEDF's choice (for the log and tests).
    pub preferred: u64,
}

impl Xenco {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Xenco, String> {
        let p: XencoParams = params::from_value(params)?;
        let opts = p.opts();
        let mut sedf = Sedf::with_params(p.sedf(), pcpus, domains)?;
        sedf.resume_short_unblock = opts.resume_on_wake;
        Ok(Xenco {
            sedf,
            opts,
            book: vec![Book::default(); domains.len()],
            is_driver: domains.iter().map(|d| d.is_driver).collect(),
            driver_of: vec![None; domains.len()],
            preferred: 0,
        })
    }

    /// Packets whose scheduling-induced delay running this vCPU's domain now would cut.
    fn intensity(&self, v: VcpuId) -> u64 {
        let d = self.sedf.vcpus[v.0].dom.0;
        let b = &self.book[d];
        if self.is_driver[d] {
            return if self.opts.dom0_preference { b.drv_rx + b.drv_tx } else { 0 };
        }
        let rx = if self.opts.reception { b.rx } else { 0 };
        // The last-value prediction stands until the domain runs past the predicted interval without sending
        // (see `fold`): a domain kept off the CPU beyond it is still expected to send.
        rx + if self.opts.anticipation { b.last_tx } else { 0 }
    }

    /// A vCPU leaves the CPU: it has processed what it was handed; what it sent is now the driver domain's work and
    /// the predictor's last value.
    fn fold(&mut self, v: VcpuId, now: u64) {
        let d = self.sedf.vcpus[v.0].dom.0;
        self.book[d].rx = 0;
        let sent = std::mem::take(&mut self.book[d].actual_tx);
        if sent == 0 {
            // It ran past the end of the predicted interval without sending: the prediction lapses.
            let b = &mut self.book[d];
            if now > b.last_tx_at + b.tx_interval {
                b.last_tx = 0;
            }
            return;
        }
        let b = &mut self.book[d];
        b.tx_interval = now.saturating_sub(b.last_tx_at);
        b.last_tx_at = now;
        b.last_tx = sent;
        if let Some(drv) = self.driver_of[d] {
            self.book[drv.0].drv_tx += sent;
        }
    }

    /// How long `cand` may run now on its own slice without any other reservation on `p` missing a deadline:
    /// the least slack before `cand`'s deadline in the processor-demand test over the queued jobs [ns].
    fn slack_before(&self, p: PcpuId, cand: VcpuId, now: u64) -> u64 {
        let horizon = self.sedf.vcpus[cand.0].deadl;
        let mut jobs: Vec<(u64, u64)> = Vec::new();
        for &u in self.sedf.runq[p.0].iter().chain(&self.sedf.waitq[p.0]) {
            let c = &self.sedf.vcpus[u.0];
            if u == cand || c.slice == 0 {
                continue;
            }
            let on_runq = c.period_begin() <= now;
            let mut dl = c.deadl;
            let mut demand = if on_runq { c.budget() } else { c.slice };
            while dl < horizon {
                jobs.push((dl, demand));
                dl += c.period;
                demand = c.slice;
            }
        }
        jobs.sort_unstable();
        let mut cum = 0u64;
        let mut slack = u64::MAX;
        for (dl, demand) in jobs {
            cum += demand;
            slack = slack.min(dl.saturating_sub(now).saturating_sub(cum));
        }
        slack
    }

    /// The greedy choice among vCPUs with slice left: highest intensity whose preferential run is safe.
    fn prefer_edf(&self, p: PcpuId, now: u64) -> Option<(VcpuId, u64, u64)> {
        let head = *self.sedf.runq[p.0].first()?;
        let release = self.sedf.next_release(p).map_or(u64::MAX, |r| r.saturating_sub(now));
        let mut cands: Vec<(u64, usize, VcpuId)> = self.sedf.runq[p.0]
            .iter()
            .enumerate()
            .map(|(i, &v)| (self.intensity(v), i, v))
            .filter(|&(n, _, _)| n > 0)
            .collect();
        // Most packets first; among equals the earlier deadline (run-queue order).
        cands.sort_by_key(|&(n, i, _)| (std::cmp::Reverse(n), i));
        for (n, _, v) in cands {
            if v == head {
                return None;
            }
            let run = self.sedf.vcpus[v.0].budget().min(self.slack_before(p, v, now)).min(release);
            if run >= MIN_PREFERRED_RUN {
                return Some((v, run, n));
            }
        }
        None
    }

    /// Extra time to the extra-time vCPU of highest intensity, if any has traffic and may be preferred: one still
    /// owed slice from the period it blocked in (3.2's bound), or any with `unbounded_extra`.
    fn prefer_extra(&self, p: PcpuId, now: u64) -> Option<(VcpuId, RunKind, u64)> {
        let release = self.sedf.next_release(p)?;
        if release.saturating_sub(now) < EXTRA_QUANTUM {
            return None;
        }
        let l0 = self.sedf.extra_queue(p, true);
        let l1 = self.sedf.extra_queue(p, false);
        let may = |v: VcpuId| self.opts.unbounded_extra || self.sedf.owed_slice(v) > 0;
        let best = l0
            .iter()
            .chain(l1)
            .filter(|&&v| may(v))
            .map(|&v| (self.intensity(v), v))
            .filter(|&(n, _)| n > 0)
            .max_by_key(|&(n, _)| n);
        best.map(|(n, v)| (v, if l0.contains(&v) { RunKind::ExtraPen } else { RunKind::ExtraUtil }, n))
    }
}

impl Policy for Xenco {
    fn timers(&self) -> Timers {
        Timers { timer_slop: true, ..Timers::default() }
    }

    fn timed_idle(&self) -> bool {
        true
    }

    fn init_vcpu(&mut self, v: VcpuId, ctx: &mut Ctx) -> PcpuId {
        self.sedf.init_vcpu(v, ctx)
    }

    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        self.sedf.wake(v, cause, ctx);
    }

    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        self.sedf.sleep(v, ctx);
    }

    fn io_request(&mut self, dom: DomId, driver: DomId, kind: IoKind, _ctx: &mut Ctx) {
        match kind {
            IoKind::NetRx => self.book[driver.0].drv_rx += 1,
            IoKind::NetTx => {
                self.driver_of[dom.0] = Some(driver);
                self.book[dom.0].actual_tx += 1;
            }
            IoKind::Block => {}
        }
    }

    fn io_complete(&mut self, dom: DomId, driver: DomId, kind: IoKind, _ctx: &mut Ctx) {
        let drv = &mut self.book[driver.0];
        match kind {
            IoKind::NetRx => {
                drv.drv_rx = drv.drv_rx.saturating_sub(1);
                self.book[dom.0].rx += 1;
            }
            IoKind::NetTx => drv.drv_tx = drv.drv_tx.saturating_sub(1),
            IoKind::Block => {}
        }
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now.0;
        // A vCPU that blocked leaves for sure: its packets count for the driver domain in this very choice. One
        // that could go on keeps its batch going unless the choice falls elsewhere (folded below), so a driver
        // domain woken by its first packet does not take the CPU from it packet by packet.
        if let (Some(c), false) = (cur, cur_runnable) {
            self.fold(c, now);
        }
        self.sedf.desched(p, cur, cur_runnable, now);
        let (mut next, mut time) = self.sedf.default_pick(p, now);
        let mut why = None;
        if let Some((v, run, n)) = self.prefer_edf(p, now) {
            next = Some((v, RunKind::Edf));
            time = run;
            why = Some(n);
        } else if self.sedf.runq[p.0].is_empty() {
            if let Some((v, kind, n)) = self.prefer_extra(p, now) {
                if next.map(|(u, _)| u) != Some(v) {
                    next = Some((v, kind));
                    time = EXTRA_QUANTUM;
                    why = Some(n);
                }
            }
        }
        if why.is_some() {
            self.preferred += 1;
        }
        if let (Some(c), true) = (cur, cur_runnable) {
            if next.map(|(v, _)| v) != Some(c) {
                self.fold(c, now);
            }
        }
        let slice = self.sedf.commit(p, next, time, now);
        let reason = if ctx.explain {
            let base = self.sedf.explain_pick(next, slice.0, ctx);
            match why {
                Some(n) => format!("{base}; preferred for {n} packets (communication-aware)"),
                None => base,
            }
        } else {
            String::new()
        };
        Pick { next: next.map(|(v, _)| v), slice, reason }
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        if !OPT_KEYS.contains(&param) {
            return self.sedf.set_param(param, value);
        }
        let mut p = XencoParams::default();
        params::change(&mut p, param, value)?;
        let on = p.opts();
        let slot = match param {
            "dom0_preference" => (&mut self.opts.dom0_preference, on.dom0_preference),
            "anticipation" => (&mut self.opts.anticipation, on.anticipation),
            "reception" => (&mut self.opts.reception, on.reception),
            "unbounded_extra" => (&mut self.opts.unbounded_extra, on.unbounded_extra),
            _ => (&mut self.opts.resume_on_wake, on.resume_on_wake),
        };
        *slot.0 = slot.1;
        self.sedf.resume_short_unblock = self.opts.resume_on_wake;
        Ok(())
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        self.sedf.vcpu_sched(v)
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        self.sedf.runqueue(p)
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.sedf.runqueue_versions()
    }

    fn share_rule(&self) -> ShareBasis {
        self.sedf.share_rule()
    }
}

crate::size::no_heap!(Book);
crate::size::heap_size!(Xenco { sedf, book, is_driver, driver_of });

/// XenCo's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "xenco",
    caps: Caps::PLAIN,
    build: |s| registry::boxed(Xenco::new(s.params, s.pcpus, s.domains)),
    check_param,
    check_scenario: |sc, i, p| registry::check_named(sc, i, p, check_params),
    params: params::declared::<XencoParams>(),
};

#[cfg(test)]
mod tests {
    use super::super::sedf::tests::{cpu_dom, run_timed, run_with, used, TIMINGS};
    use serde_json::json;

    fn host() -> Vec<serde_json::Value> {
        vec![
            json!({ "name": "dom0", "role": "driver", "costs": { "packet_us": 20 } }),
            json!({ "name": "media", "tasks": [ { "name": "s", "workload": {
                "type": "stream_server", "clients": 20, "kbps": 3000, "buffer_kb": 64, "cpu_us": 4 } } ] }),
            json!({ "name": "front", "tasks": [ { "name": "app", "workload": {
                "type": "tier", "port": 80, "cpu_us": 2000, "next": "back/db", "clients": 6, "think_ms": [50, 200] } } ] }),
            json!({ "name": "back", "tasks": [ { "name": "db", "workload": { "type": "tier", "port": 81, "cpu_us": 3000 } } ] }),
            cpu_dom("a", 1),
            cpu_dom("b", 1),
        ]
    }

    fn params() -> serde_json::Value {
        let r = |p: u64, s: u64| json!({ "period_ms": p, "slice_ms": s });
        json!({ "domains": { "dom0": r(20, 3), "media": r(100, 4), "front": r(100, 5), "back": r(100, 8),
                             "a": r(50, 15), "b": { "period_ms": 100, "slice_ms": 25, "extratime": false } } })
    }

    /// The preference never costs a reservation: CPU-bound domains get their slice in every period, however much
    /// the communicating domains are preferred.
    /// xenco's options and SEDF's keys are checked against XencoParams' declaration, at load and at run time.
    #[test]
    fn params_are_checked_by_their_declaration() {
        use super::{check_param, Xenco};
        use crate::policy::Policy;
        assert!(check_param("reception", &json!(false)).is_ok());
        assert_eq!(check_param("reception", &json!(1)).unwrap_err(), "reception: expected true or false, got 1");
        assert_eq!(check_param("version", &json!("4.x")).unwrap_err(), "version: fixed at boot");
        assert!(check_param("domains.dom0.weight", &json!(2)).is_ok());
        let doms = [crate::policy::DomainInfo {
            name: "a".into(),
            weight: 256,
            cap_pct: 0,
            vcpus: vec![crate::model::VcpuId(0)],
            is_driver: false,
            backend_for: Vec::new(),
        }];
        let mut x = Xenco::new(&json!({"resume_on_wake": false, "domains": {"a": {"weight": 3}}}), 1, &doms).unwrap();
        assert!(!x.sedf.resume_short_unblock);
        x.set_param("resume_on_wake", &json!(true)).unwrap();
        assert!(x.sedf.resume_short_unblock && x.opts.resume_on_wake && x.opts.reception);
        assert!(x.set_param("reception", &json!("no")).is_err());
        let long = json!({"domains": {"a": {"period_ms": 1, "slice_ms": 2}}});
        assert!(Xenco::new(&long, 1, &doms).is_err());
    }

    #[test]
    fn reservations_hold_under_preference() {
        // Late timers may shorten a period by the overrun carried from the one before (see SEDF's own test).
        for (timing, slop) in TIMINGS {
            let sim = run_timed("xenco", timing, 1, host(), params(), 3000);
            for (dom, period, slice) in [(4usize, 50u64, 15u64), (5, 100, 25)] {
                let (period, slice) = (period * 1_000_000, slice * 1_000_000);
                for k in 0..3_000_000_000 / period {
                    let got = used(&sim, dom, k * period, (k + 1) * period);
                    assert!(got + slop >= slice, "{timing:?}: domain {dom} got {got} ns in period {k}");
                }
            }
        }
    }

    /// Preferring the domains that packets wait on while they have slice left (3.2's bound) never lengthens the
    /// request chain's responses; preferring them past their slice (unbounded_extra) shortens them well below SEDF's.
    #[test]
    fn preference_shortens_the_chain() {
        let resp = |sched: &str, p: serde_json::Value| {
            let sim = run_with(sched, 1, host(), p, 3000);
            let r = sim.report(&crate::report::RunOptions::default());
            r["domains"]["front"]["response_ms"]["mean"].as_f64().unwrap()
        };
        let mut unbounded = params();
        unbounded["unbounded_extra"] = json!(true);
        let (sedf, xenco, past) = (resp("sedf", params()), resp("xenco", params()), resp("xenco", unbounded));
        assert!(xenco <= sedf, "sedf {sedf} ms, xenco {xenco} ms");
        assert!(past * 1.3 < sedf, "sedf {sedf} ms, xenco past the slice {past} ms");
    }
}
