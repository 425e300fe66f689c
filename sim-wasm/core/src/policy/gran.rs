//! Xen's scheduling granularity (`sched-gran=cpu|core|socket`, Xen 4.13 and later, `xen/common/sched/core.c`):
//! with "core" the scheduler's unit (`struct sched_unit`) is every hardware thread of a core, so the threads of
//! one core only ever run vCPUs of one domain at a time (the mitigation for SMT side channels); "socket" makes
//! the unit every thread of a socket.
//!
//! Xen builds units of a domain's vCPUs and schedules those (`sched_select_initial_cpu`, `sched_slave`,
//! `sched_wait_rendezvous_in`: the threads of a unit switch together). Here one wrapper turns any per-pCPU policy
//! into a per-unit one, so that Credit, Credit2, RTDS and null need no change:
//!
//! - A pick on pCPU `p` that names a vCPU of another domain than the one its unit's other threads run is refused:
//!   the vCPU is taken off the inner policy's queues (as if it blocked) and held aside, and the inner policy picks
//!   again. With none of that domain left the thread idles: the forced idle core scheduling costs.
//! - A unit's domain holds it for one slice of the decision that gave it the unit (as Xen's unit keeps its
//!   threads for the unit's slice). A decision after that, or on a unit whose other threads idle, is free: the
//!   vCPUs held aside come back to the inner policy first, and if its pick is of another domain the unit's other
//!   threads are rescheduled at once (the rendezvous), so the unit changes domain in one instant.
//! - A vCPU held aside comes back at the next free decision of a unit it can run on, and a timer makes sure a
//!   unit with an idle thread looks again soon after (`RETRY`): never at the instant it was held, so that two
//!   units cannot pass a vCPU back and forth forever in no time.
//!
//! The unit is consecutive pCPUs: a core's `threads_per_core` threads, a socket's `cores_per_socket` cores.

use super::{BoostMark, Ctx, DomainTimes, IoKind, Pick, Policy, ShareBasis, Timers, VcpuSched, WakeCause};
use crate::model::{DomId, PcpuId, TaskId, VcpuId};
use crate::time::Nanos;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;

/// How long a unit with an idle thread waits before it looks again for a vCPU held aside [ns]: Xen's default
/// scheduler rate limit (`sched_ratelimit_us` = 1000) is the time scale at which its schedulers revisit a
/// decision; a tenth of it keeps the delay small against the slices (a model choice, not a Xen constant).
const RETRY: Nanos = Nanos(100_000);

/// The scheduling unit (`sched-gran`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Gran {
    /// Each pCPU (hardware thread) on its own, as before Xen 4.13.
    #[default]
    Cpu,
    /// All threads of a core: they only ever run vCPUs of one domain at a time.
    Core,
    /// All threads of a socket.
    Socket,
}

impl Gran {
    /// The default: omitted from serialized parameters so that they read as before.
    pub fn is_cpu(&self) -> bool {
        *self == Gran::Cpu
    }
}

/// The pCPUs of each unit: consecutive runs of `size`.
pub fn unit_size(gran: Gran, pcpus: usize, threads_per_core: usize, cores_per_socket: Option<usize>) -> usize {
    let tpc = threads_per_core.max(1);
    match gran {
        Gran::Cpu => 1,
        Gran::Core => tpc,
        Gran::Socket => cores_per_socket.map_or(pcpus, |c| c.max(1) * tpc).min(pcpus.max(1)),
    }
}

/// Wraps `inner` for the granularity in `params.sched_gran` on the host of `s`; the inner policy itself when the
/// unit is one pCPU.
pub fn wrap(s: &super::registry::Setup, inner: Result<Box<dyn Policy>, String>) -> Result<Box<dyn Policy>, String> {
    let inner = inner?;
    let gran: Gran = match s.params.get("sched_gran") {
        Some(v) => serde_json::from_value(v.clone()).map_err(|e| format!("sched_gran: {e}"))?,
        None => Gran::Cpu,
    };
    let size = unit_size(gran, s.pcpus, s.threads_per_core, s.cores_per_socket);
    if size <= 1 {
        return Ok(inner);
    }
    let nv: usize = s.domains.iter().map(|d| d.vcpus.len()).sum();
    let mut dom = vec![DomId(0); nv];
    for (d, info) in s.domains.iter().enumerate() {
        for v in &info.vcpus {
            dom[v.0] = DomId(d);
        }
    }
    Ok(Box::new(Granular::new(inner, s.pcpus, size, dom)))
}

/// A policy scheduled per unit of `size` pCPUs (see the module header).
#[derive(Clone)]
pub struct Granular {
    inner: Box<dyn Policy>,
    size: usize,
    pcpus: usize,
    /// Each vCPU's domain.
    dom: Vec<DomId>,
    /// vCPUs held aside, in the order they were (the inner policy believes them blocked).
    held: Vec<VcpuId>,
    /// When each vCPU was last held aside [ns].
    held_at: Vec<Nanos>,
    /// Until when each unit's domain holds it against the others [ns].
    free_at: Vec<Nanos>,
    /// When the inner policy asked for its timer (`Ctx::timer_at`), pending ones [ns].
    inner_timers: Vec<Nanos>,
    /// When this wrapper's own timer is due, if armed [ns].
    retry_at: Option<Nanos>,
    /// Each unit's domain change in progress: the domain and the instant its other threads were told to leave
    /// theirs (they reschedule at that instant, one after the other).
    claimed: Vec<Option<(DomId, Nanos)>>,
}

impl Granular {
    pub fn new(inner: Box<dyn Policy>, pcpus: usize, size: usize, dom: Vec<DomId>) -> Granular {
        let nv = dom.len();
        Granular {
            inner,
            size,
            pcpus,
            dom,
            held: Vec::new(),
            held_at: vec![Nanos::ZERO; nv],
            free_at: vec![Nanos::ZERO; pcpus.div_ceil(size.max(1))],
            inner_timers: Vec::new(),
            retry_at: None,
            claimed: vec![None; pcpus.div_ceil(size.max(1))],
        }
    }

    fn unit(&self, p: PcpuId) -> std::ops::Range<usize> {
        let first = p.0 / self.size * self.size;
        first..(first + self.size).min(self.pcpus)
    }

    /// The domain the unit's threads other than `p` run, if any run (they all run the same one).
    fn others(&self, p: PcpuId, running: &[Option<VcpuId>]) -> Option<DomId> {
        self.unit(p).filter(|&q| q != p.0).find_map(|q| running[q]).map(|v| self.dom[v.0])
    }

    /// Calls the inner policy, noting the timers it asks for (the wrapper's timer hook serves them).
    fn call<R>(&mut self, ctx: &mut Ctx, f: impl FnOnce(&mut dyn Policy, &mut Ctx) -> R) -> R {
        let before = ctx.actions.len();
        let r = f(self.inner.as_mut(), ctx);
        for a in &ctx.actions[before..] {
            if let super::Action::Timer(at) = a {
                self.inner_timers.push(*at);
            }
        }
        r
    }

    /// Gives the inner policy back the vCPUs held aside that may run on `p`'s unit (any when `free`, else those
    /// of domain `others`), except those held at this very instant. Returns whether one of another domain than
    /// `current` came back.
    fn release(&mut self, p: PcpuId, free: bool, others: Option<DomId>, current: Option<DomId>, ctx: &mut Ctx) -> bool {
        let now = ctx.now;
        let mut other = false;
        let mut k = 0;
        while k < self.held.len() {
            let v = self.held[k];
            if self.held_at[v.0] < now && (free || others == Some(self.dom[v.0])) {
                self.held.remove(k);
                other |= current.is_some_and(|c| c != self.dom[v.0]);
                if ctx.explain {
                    let name = ctx.name(v).to_string();
                    ctx.note(p, |s| write!(s, "sched_gran: {name} may run again"));
                }
                self.call(ctx, |pol, ctx| pol.wake(v, WakeCause::Unpause, ctx));
            } else {
                k += 1;
            }
        }
        other
    }

    /// Holds `v` aside (the inner policy sees it block on `p`) and asks the inner policy for another pick.
    fn hold(&mut self, p: PcpuId, v: VcpuId, why: &str, ctx: &mut Ctx) -> Pick {
        self.held.push(v);
        self.held_at[v.0] = ctx.now;
        if ctx.explain {
            let name = ctx.name(v).to_string();
            ctx.note(p, |s| write!(s, "sched_gran: {name} waits, {why}"));
        }
        self.call(ctx, |pol, ctx| pol.sleep(v, ctx));
        self.call(ctx, |pol, ctx| pol.do_schedule(p, Some(v), false, ctx))
    }

    /// Arms the wrapper's timer while vCPUs are held aside.
    fn arm_retry(&mut self, ctx: &mut Ctx) {
        if self.held.is_empty() {
            return;
        }
        let now = ctx.now;
        let mut at: Option<Nanos> = None;
        for u in 0..self.free_at.len() {
            let threads = u * self.size..((u + 1) * self.size).min(self.pcpus);
            let idle = threads.clone().any(|q| ctx.host.running[q].is_none());
            let t = if idle { now + RETRY } else { self.free_at[u].max(now + RETRY) };
            at = Some(at.map_or(t, |a: Nanos| a.min(t)));
        }
        if let Some(t) = at {
            if self.retry_at.is_none_or(|r| r <= now || t < r) {
                self.retry_at = Some(t);
                ctx.timer_at(t);
            }
        }
    }
}

impl Policy for Granular {
    fn timers(&self) -> Timers {
        self.inner.timers()
    }
    fn timed_idle(&self) -> bool {
        self.inner.timed_idle()
    }
    fn init_vcpu(&mut self, v: VcpuId, ctx: &mut Ctx) -> PcpuId {
        self.call(ctx, |pol, ctx| pol.init_vcpu(v, ctx))
    }
    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        if let Some(k) = self.held.iter().position(|&h| h == v) {
            // Cannot happen (a held vCPU stays runnable), but a wake must reach the inner policy once only.
            self.held.remove(k);
        }
        self.call(ctx, |pol, ctx| pol.wake(v, cause, ctx))
    }
    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        if let Some(k) = self.held.iter().position(|&h| h == v) {
            // Paused while held aside: the inner policy already has it off its queues; its unpause wakes it.
            self.held.remove(k);
            return;
        }
        self.call(ctx, |pol, ctx| pol.sleep(v, ctx))
    }
    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let now = ctx.now;
        let u = p.0 / self.size;
        // A unit changing domain at this instant runs the new one, whatever its threads not yet rescheduled run.
        let others = match self.claimed[u] {
            Some((d, at)) if at == now => Some(d),
            _ => self.others(p, ctx.host.running),
        };
        let expired = now >= self.free_at[u];
        let free = others.is_none() || expired;
        let current = others.or(cur.map(|c| self.dom[c.0]));
        // The unit's slice is over and another domain's vCPU was waiting for one: the unit's domain yields it,
        // as Xen's unit goes to the back of the run queue at the end of its slice.
        let rotate = self.release(p, free, others, current, ctx) && expired;
        let mut pick = self.call(ctx, |pol, ctx| pol.do_schedule(p, cur, cur_runnable, ctx));
        // Each refusal holds one more vCPU aside, so this ends.
        while let Some(v) = pick.next {
            let d = self.dom[v.0];
            if rotate && current == Some(d) {
                pick = self.hold(p, v, "its domain's turn on the unit is over", ctx);
                continue;
            }
            if others.is_none_or(|o| o == d) {
                break;
            }
            if free {
                // The unit changes domain: its other threads leave theirs now (Xen's rendezvous).
                self.claimed[u] = Some((d, now));
                for q in self.unit(p).filter(|&q| q != p.0) {
                    if ctx.host.running[q].is_some_and(|w| self.dom[w.0] != d) {
                        ctx.resched(PcpuId(q));
                    }
                }
                break;
            }
            pick = self.hold(p, v, "its unit runs another domain", ctx);
        }
        if let Some(v) = pick.next {
            let d = self.dom[v.0];
            if current != Some(d) || expired {
                // The unit's domain holds it for this decision's slice.
                self.free_at[u] = now + pick.slice;
            }
        }
        self.arm_retry(ctx);
        pick
    }
    fn tick(&mut self, p: PcpuId, ctx: &mut Ctx) {
        self.call(ctx, |pol, ctx| pol.tick(p, ctx))
    }
    fn account(&mut self, ctx: &mut Ctx) {
        self.call(ctx, |pol, ctx| pol.account(ctx))
    }
    fn timer(&mut self, ctx: &mut Ctx) {
        let now = ctx.now;
        // The inner policy's own timer, when one of its requests is due.
        if self.inner_timers.iter().any(|&t| t <= now) {
            self.inner_timers.retain(|&t| t > now);
            self.call(ctx, |pol, ctx| pol.timer(ctx));
        }
        if self.retry_at.is_some_and(|r| r <= now) {
            self.retry_at = None;
            // Each unit that could take a held vCPU looks again: an idle thread, or any thread once free.
            for u in 0..self.free_at.len() {
                let threads = u * self.size..((u + 1) * self.size).min(self.pcpus);
                let running = ctx.host.running;
                let dom_of = threads.clone().find_map(|q| running[q]).map(|v| self.dom[v.0]);
                let idle = threads.clone().find(|&q| running[q].is_none());
                let free = dom_of.is_none() || now >= self.free_at[u];
                let wanted = self.held.iter().any(|&v| free || dom_of == Some(self.dom[v.0]));
                if wanted {
                    ctx.resched(PcpuId(idle.unwrap_or(threads.start)));
                }
            }
            self.arm_retry(ctx);
        }
    }
    fn balloon(&mut self, v: VcpuId, ctx: &mut Ctx) -> bool {
        self.call(ctx, |pol, ctx| pol.balloon(v, ctx))
    }
    fn event_sent(&mut self, from: VcpuId, to: VcpuId, ctx: &mut Ctx) {
        self.call(ctx, |pol, ctx| pol.event_sent(from, to, ctx))
    }
    fn event_pending(&mut self, v: VcpuId, port: Option<u16>, ctx: &mut Ctx) {
        self.call(ctx, |pol, ctx| pol.event_pending(v, port, ctx))
    }
    fn io_request(&mut self, dom: DomId, driver: DomId, kind: IoKind, ctx: &mut Ctx) {
        self.call(ctx, |pol, ctx| pol.io_request(dom, driver, kind, ctx))
    }
    fn io_complete(&mut self, dom: DomId, driver: DomId, kind: IoKind, ctx: &mut Ctx) {
        self.call(ctx, |pol, ctx| pol.io_complete(dom, driver, kind, ctx))
    }
    fn block_request(&mut self, v: VcpuId, task: TaskId, issued_at: Nanos) {
        self.inner.block_request(v, task, issued_at)
    }
    fn block_done(&mut self, v: VcpuId, task: TaskId, issued_at: Nanos, held: bool) {
        self.inner.block_done(v, task, issued_at, held)
    }
    fn guest_task_switch(&mut self, v: VcpuId, prev: Option<TaskId>, next: Option<TaskId>, ctx: &mut Ctx) {
        self.call(ctx, |pol, ctx| pol.guest_task_switch(v, prev, next, ctx))
    }
    fn guest_resumed(&mut self, v: VcpuId, task: TaskId, ctx: &mut Ctx) {
        self.call(ctx, |pol, ctx| pol.guest_resumed(v, task, ctx))
    }
    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        if param == "sched_gran" {
            return Err("sched_gran: fixed at boot".to_string());
        }
        self.inner.set_param(param, value)
    }
    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        self.inner.vcpu_sched(v)
    }
    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        self.inner.runqueue(p)
    }
    fn task_belief(&self, t: TaskId) -> Option<(i64, bool)> {
        self.inner.task_belief(t)
    }
    fn drain_marks(&mut self, beliefs: &mut Vec<(TaskId, i64)>, boosts: &mut Vec<(VcpuId, BoostMark)>) {
        self.inner.drain_marks(beliefs, boosts)
    }
    fn tracking_cost(&self, v: VcpuId) -> Nanos {
        self.inner.tracking_cost(v)
    }
    fn woke_on_pcpu(&mut self, v: VcpuId, ctx: &mut Ctx) {
        self.call(ctx, |pol, ctx| pol.woke_on_pcpu(v, ctx))
    }
    fn domain_times(&self, dom: usize, now: Nanos) -> Option<DomainTimes> {
        self.inner.domain_times(dom, now)
    }
    fn partial_boosts(&self) -> Option<(u64, u64)> {
        self.inner.partial_boosts()
    }
    fn belief_threshold(&self) -> Option<i64> {
        self.inner.belief_threshold()
    }
    fn runqueue_versions(&self) -> &[u64] {
        self.inner.runqueue_versions()
    }
    fn take_fault(&mut self) -> Option<String> {
        self.inner.take_fault()
    }
    fn script_operations(&self) -> u64 {
        self.inner.script_operations()
    }
    fn share_rule(&self) -> ShareBasis {
        self.inner.share_rule()
    }
}

impl crate::size::HeapSize for Granular {
    fn heap_size(&self) -> usize {
        self.inner.heap_size()
            + self.dom.heap_size()
            + self.held.heap_size()
            + self.held_at.heap_size()
            + self.free_at.heap_size()
            + self.inner_timers.heap_size()
    }
}

#[cfg(test)]
mod tests;
