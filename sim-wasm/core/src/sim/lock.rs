//! Guest spinlocks and TLB-shootdown IPIs at run time (the `spinlock` and `tlb_shootdown` kinds), and the host's
//! pause-loop exiting that watches their spin loops.
//!
//! A spinlock job's threads contend for their domain's one lock. Ticket mode hands the lock to the next ticket on
//! release, whether or not that waiter runs: a preempted waiter holds everyone behind it. PV mode
//! (`kernel/locking/qspinlock_paravirt.h`) frees the lock on release; a waiter that is running takes it, otherwise
//! the queue's head is kicked (`KVM_HC_KICK_CPU`, a wake-up of its halted vCPU) if it has halted, and a thread
//! that runs first may take it (lock stealing). A PV waiter spins `SPIN_THRESHOLD` PAUSE loops, then halts.
//!
//! A shootdown posts a flush IPI to every other vCPU of its domain through the pending-event path, so a vCPU takes
//! it (flushes, acknowledges) only while it runs: a preempted sibling keeps the sender spinning until the host
//! runs it. The acknowledgement is counted when the IPI is delivered, its flush then runs as kernel work of the
//! target. Nothing here uses a guest timer: they reach a task only when its vCPU runs.
//!
//! Pause-loop exiting (`arch/x86/kvm/vmx/vmx.c`): a vCPU that has spun for its PLE window exits; the policy grows
//! the window and may yield the pCPU (`Policy::pause_exit`), the exit costs the profile's VM-exit round trip.

use super::*;

/// Linux's `SPIN_THRESHOLD` (`1 << 15`, `arch/x86/include/asm/spinlock.h` and `qspinlock_paravirt.h`'s
/// `pv_wait_node`): PAUSE loops a PV waiter spins before it halts.
pub(crate) const SPIN_THRESHOLD: u64 = 1 << 15;

/// One domain's lock.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lock {
    /// The thread in its critical section, or granted the lock and not yet run (ticket order).
    pub(crate) holder: Option<TaskId>,
    /// Waiters in ticket order.
    pub(crate) queue: VecDeque<TaskId>,
    pub(crate) pv: bool,
}

/// The run's locks and PLE timers.
#[derive(Debug, Clone, Default)]
pub(crate) struct Locks {
    /// Per domain.
    pub(crate) locks: Vec<Lock>,
    /// Per vCPU: when its spin loop exits on PLE, if it spins on a pCPU.
    pub(crate) ple_at: Vec<Option<Nanos>>,
}

impl crate::size::HeapSize for Locks {
    fn heap_size(&self) -> usize {
        self.locks.heap_size() + self.locks.iter().map(|l| l.queue.heap_size()).sum::<usize>() + self.ple_at.heap_size()
    }
}

crate::size::no_heap!(Lock);

impl Simulation {
    /// Sets up each domain's lock and the PLE timers at boot.
    pub(super) fn boot_locks(&mut self) {
        let ndom = self.host.dom_info.len();
        self.guests.locks.locks = vec![Lock::default(); ndom];
        self.guests.locks.ple_at = vec![None; self.host.vcpus.len()];
        for t in &self.guests.tasks {
            if let Work::Lock { pv, .. } = t.work {
                self.guests.locks.locks[t.dom.0].pv = pv;
            }
        }
    }

    /// PAUSE loops as time on this host [ns].
    fn pause_ns(&self, loops: u64) -> u64 {
        self.costs.cycles_ns(loops.saturating_mul(self.costs.pause_cycles))
    }

    /// The CPU a lock or shootdown thread needs next (see `begin_burst`).
    pub(super) fn lock_begin_burst(&self, t: TaskId) -> Option<Option<u64>> {
        match self.guests.tasks[t.0].work {
            Work::Lock { phase, cs_ns, between_ns, pv, .. } => match phase {
                LockPhase::Between => Some(Some(between_ns)),
                LockPhase::Hold => Some(Some(cs_ns)),
                LockPhase::Spin if pv => Some(Some(self.pause_ns(SPIN_THRESHOLD).max(1))),
                LockPhase::Spin => Some(None),
                LockPhase::Halt => None,
            },
            Work::Tlb { waiting, interval_ns, .. } => Some(if waiting > 0 { None } else { Some(interval_ns) }),
            _ => None,
        }
    }

    /// Whether task `t` is in a spin loop (a lock waiter, a shootdown waiting for acknowledgements, a barrier
    /// spinner): what PLE watches.
    pub(super) fn spinning(&self, t: TaskId) -> bool {
        matches!(
            self.guests.tasks[t.0].work,
            Work::Lock { phase: LockPhase::Spin, .. }
                | Work::Barrier { phase: BarrierPhase::Spin, .. }
                | Work::Tlb { waiting: 1.., .. }
        )
    }

    /// Whether task `t` is its vCPU's current task and executing now.
    fn running_now(&self, t: TaskId) -> bool {
        let v = self.guests.tasks[t.0].vcpu;
        let vc = &self.host.vcpus[v.0];
        vc.current == Some(t) && vc.exec_start.is_some() && vc.on_pcpu.is_some()
    }

    /// CPU `e` [ns] ran by task `t` on `v` from `start`: spin time of a lock or shootdown waiter is counted.
    pub(super) fn lock_charge(&mut self, t: TaskId, v: VcpuId, start: Nanos, e: u64) {
        let spins = matches!(
            self.guests.tasks[t.0].work,
            Work::Lock { phase: LockPhase::Spin, .. } | Work::Tlb { waiting: 1.., .. }
        );
        if !spins {
            return;
        }
        if self.in_window(self.now) {
            self.measure.dom_metrics[self.guests.tasks[t.0].dom.0].spin_ns += e;
        }
        if self.rec.on {
            // The page's state lanes show where the spinning happened.
            self.rec.trace.push_spin(SpinRec { vcpu: v.0 as u32, start: start.0, end: self.now.0 });
        }
    }

    fn set_lock_phase(&mut self, t: TaskId, p: LockPhase) {
        let Work::Lock { phase, .. } = &mut self.guests.tasks[t.0].work else { return };
        let was = *phase;
        *phase = p;
        let state = match (was == LockPhase::Spin, p == LockPhase::Spin) {
            (false, true) => "spinning",
            (true, false) => "runnable",
            _ => return,
        };
        if self.rec.on {
            self.rec.trace.push_task_state(TaskRec { t_ns: self.now.0, task: t.0 as u32, state });
        }
    }

    /// A lock or shootdown thread finished a burst.
    pub(super) fn lock_burst_done(&mut self, t: TaskId) {
        match self.guests.tasks[t.0].work {
            Work::Lock { phase: LockPhase::Between, .. } => self.lock_request(t),
            Work::Lock { phase: LockPhase::Hold, .. } => self.lock_release(t),
            Work::Lock { phase: LockPhase::Spin, .. } => {
                // A PV waiter spun its threshold: it halts until kicked (`pv_wait`), unless the lock is free.
                let dom = self.guests.tasks[t.0].dom.0;
                if self.guests.locks.locks[dom].holder.is_none() {
                    self.lock_take(t);
                } else {
                    self.set_lock_phase(t, LockPhase::Halt);
                }
            }
            Work::Tlb { .. } => self.shootdown(t),
            _ => {}
        }
    }

    /// Thread `t` asks for its domain's lock: it takes a free one (PV: even past queued waiters, which do not
    /// run), or queues behind the last ticket and spins.
    fn lock_request(&mut self, t: TaskId) {
        let dom = self.guests.tasks[t.0].dom.0;
        let l = &mut self.guests.locks.locks[dom];
        if l.holder.is_none() && (l.queue.is_empty() || l.pv) {
            l.holder = Some(t);
            self.set_lock_phase(t, LockPhase::Hold);
        } else {
            l.queue.push_back(t);
            self.set_lock_phase(t, LockPhase::Spin);
        }
    }

    /// Waiter `t` takes the free lock, leaving the queue.
    fn lock_take(&mut self, t: TaskId) {
        let dom = self.guests.tasks[t.0].dom.0;
        let l = &mut self.guests.locks.locks[dom];
        l.queue.retain(|&x| x != t);
        l.holder = Some(t);
        self.set_lock_phase(t, LockPhase::Hold);
    }

    /// The lock passes to waiter `w`: running, it leaves its spin for the critical section at once; otherwise it
    /// starts the section when its vCPU next runs.
    fn lock_grant(&mut self, w: TaskId) {
        let running = self.running_now(w);
        let wv = self.guests.tasks[w.0].vcpu;
        if running {
            // Its spin so far is charged as spin before the phase changes.
            self.charge(wv);
        }
        self.lock_take(w);
        let burst = self.lock_begin_burst(w).flatten();
        self.guests.tasks[w.0].burst_left = burst;
        if running {
            self.guest_run(wv);
        }
    }

    /// Thread `t` leaves its critical section.
    fn lock_release(&mut self, t: TaskId) {
        let dom = self.guests.tasks[t.0].dom.0;
        if self.in_window(self.now) {
            self.measure.dom_metrics[dom].lock_acquisitions += 1;
        }
        self.set_lock_phase(t, LockPhase::Between);
        let l = &mut self.guests.locks.locks[dom];
        l.holder = None;
        if !l.pv {
            // The next ticket owns the lock now, whether or not it runs.
            if let Some(w) = l.queue.pop_front() {
                self.lock_grant(w);
            }
            return;
        }
        self.walked(self.guests.locks.locks[dom].queue.len());
        let queue = &self.guests.locks.locks[dom].queue;
        let spinning = queue.iter().copied().find(|&w| {
            self.running_now(w) && matches!(self.guests.tasks[w.0].work, Work::Lock { phase: LockPhase::Spin, .. })
        });
        if let Some(w) = spinning {
            self.lock_grant(w);
            return;
        }
        // Nobody spins on a pCPU: the head is kicked if it halted (`__pv_queued_spin_unlock_slowpath`); the
        // KVM_HC_KICK_CPU hypercall is a VM exit of the releaser.
        let head = self.guests.locks.locks[dom].queue.front().copied();
        if let Some(h) =
            head.filter(|h| matches!(self.guests.tasks[h.0].work, Work::Lock { phase: LockPhase::Halt, .. }))
        {
            let (from, to) = (self.guests.tasks[t.0].vcpu, self.guests.tasks[h.0].vcpu);
            self.kernel_work(from, self.costs.vmexit_ns);
            self.post_event(to, GuestEvent::Ipi(h), Some(from), WakeCause::LockKick);
        }
    }

    /// A kick reached a halted PV waiter (its vCPU runs): it takes the lock if free, else spins again.
    pub(super) fn lock_kicked(&mut self, t: TaskId) {
        let Work::Lock { phase: LockPhase::Halt, .. } = self.guests.tasks[t.0].work else { return };
        let dom = self.guests.tasks[t.0].dom.0;
        if self.guests.locks.locks[dom].holder.is_none() {
            self.lock_take(t);
        } else {
            self.set_lock_phase(t, LockPhase::Spin);
        }
    }

    /// vCPU `v` is about to run its guest again: a PV waiter that was descheduled while spinning finds a free
    /// lock and takes it.
    pub(super) fn lock_vcpu_runs(&mut self, v: VcpuId) {
        let Some(t) = self.host.vcpus[v.0].current else { return };
        let Work::Lock { phase: LockPhase::Spin, pv: true, .. } = self.guests.tasks[t.0].work else { return };
        let dom = self.guests.tasks[t.0].dom.0;
        if self.guests.locks.locks[dom].holder.is_none() {
            self.lock_take(t);
            self.guests.tasks[t.0].burst_left = self.lock_begin_burst(t).flatten();
        }
    }

    /// A shootdown thread finished its interval: a flush IPI to every other vCPU of its domain (one VM exit for
    /// the APIC write), then it spins until all have acknowledged.
    fn shootdown(&mut self, t: TaskId) {
        let (v, dom) = (self.guests.tasks[t.0].vcpu, self.guests.tasks[t.0].dom.0);
        let others: Vec<VcpuId> = self.host.dom_info[dom].vcpus.iter().copied().filter(|&x| x != v).collect();
        let mut targets = others.clone();
        if let Work::Tlb { targets: n @ 1.., rotor, .. } = &mut self.guests.tasks[t.0].work {
            let n = (*n as usize).min(others.len());
            let from = *rotor as usize;
            targets = (0..n).map(|i| others[(from + i) % others.len().max(1)]).collect();
            *rotor = ((from + n) % others.len().max(1)) as u32;
        }
        if let Work::Tlb { waiting, sent_at, sending, .. } = &mut self.guests.tasks[t.0].work {
            *waiting = targets.len() as u32;
            *sent_at = self.now;
            *sending = true;
        }
        if targets.is_empty() {
            self.shootdown_done(t);
        } else if self.rec.on {
            self.rec.trace.push_task_state(TaskRec { t_ns: self.now.0, task: t.0 as u32, state: "spinning" });
        }
        self.kernel_work(v, self.costs.vmexit_ns);
        for x in targets {
            self.post_event(x, GuestEvent::Flush(t), Some(v), WakeCause::TlbIpi);
        }
        if let Work::Tlb { sending, .. } = &mut self.guests.tasks[t.0].work {
            *sending = false;
        }
    }

    fn shootdown_done(&mut self, t: TaskId) {
        let Work::Tlb { sent_at, .. } = self.guests.tasks[t.0].work else { return };
        if self.in_window(self.now) {
            let m = &mut self.measure.dom_metrics[self.guests.tasks[t.0].dom.0];
            m.shootdowns += 1;
            m.ipi_wait_ns += (self.now - sent_at).0;
        }
    }

    /// vCPU `v` takes the flush IPI of shootdown thread `from`: it flushes (kernel work) and acknowledges; the
    /// last acknowledgement lets the sender go on.
    pub(super) fn tlb_ack(&mut self, v: VcpuId, from: TaskId) {
        let Work::Tlb { flush_ns, .. } = self.guests.tasks[from.0].work else { return };
        self.kernel_work(v, flush_ns);
        let running = self.running_now(from);
        let sv = self.guests.tasks[from.0].vcpu;
        if running {
            self.charge(sv);
        }
        let Work::Tlb { waiting, sending, .. } = &mut self.guests.tasks[from.0].work else { return };
        *waiting = waiting.saturating_sub(1);
        if *waiting > 0 {
            return;
        }
        let sending = *sending;
        self.shootdown_done(from);
        if sending {
            // Acknowledged while still sending: the sender's own burst end starts its next interval.
            return;
        }
        if self.rec.on {
            self.rec.trace.push_task_state(TaskRec { t_ns: self.now.0, task: from.0 as u32, state: "runnable" });
        }
        self.guests.tasks[from.0].burst_left = self.lock_begin_burst(from).flatten();
        if running {
            self.guest_run(sv);
        }
    }

    /// Arms vCPU `v`'s PLE exit when it runs a spin loop on a pCPU and the host exits on PAUSE loops.
    pub(super) fn ple_arm(&mut self, v: VcpuId) {
        if self.guests.locks.ple_at.is_empty() {
            return;
        }
        let vc = &self.host.vcpus[v.0];
        let spin = vc.on_pcpu.is_some() && vc.current.is_some_and(|t| self.spinning(t));
        let window = if spin { self.policy.ple_window(v) } else { None };
        let at = match (window, vc.exec_start) {
            (Some(w), Some(s)) => Some(s.max(self.now) + Nanos(self.costs.cycles_ns(w).max(1))),
            _ => None,
        };
        let old = self.guests.locks.ple_at[v.0];
        self.guests.locks.ple_at[v.0] = at;
        if let Some(at) = at.filter(|&a| old != Some(a)) {
            self.push(at, Ev::Ple(v));
        }
    }

    /// vCPU `v`'s PLE window ran out: if it still spins on its pCPU, it exits; the policy grows the window and
    /// may yield, and the exit's round trip is the vCPU's time.
    pub(super) fn ple_fire(&mut self, v: VcpuId) {
        if self.guests.locks.ple_at.get(v.0).copied().flatten() != Some(self.now) {
            return;
        }
        self.guests.locks.ple_at[v.0] = None;
        let vc = &self.host.vcpus[v.0];
        let spin = vc.on_pcpu.is_some() && vc.exec_start.is_some() && vc.current.is_some_and(|t| self.spinning(t));
        if !spin {
            return;
        }
        let dom = vc.dom.0;
        if self.in_window(self.now) {
            self.measure.dom_metrics[dom].ple_exits += 1;
        }
        // Which vCPUs have an IPI from this one that they have not yet taken: the receivers the IPI-aware yield
        // prefers.
        let tasks = &self.guests.tasks;
        let owes: Vec<bool> = self
            .host
            .vcpus
            .iter()
            .map(|x| x.pending.iter().any(|p| matches!(p.ev, GuestEvent::Flush(f) if tasks[f.0].vcpu == v)))
            .collect();
        self.walked(owes.len());
        self.with_ctx(|pol, ctx| pol.pause_exit(v, &owes, ctx));
        self.kernel_work(v, self.costs.vmexit_ns);
        self.ple_arm(v);
    }
}

#[cfg(test)]
mod tests {
    use super::super::test_support::{run, scenario};
    use serde_json::{json, Value};

    fn lock_host(pcpus: u32, lock: &str, hogs: u32, policy: Value) -> crate::scenario::Scenario {
        let mut domains = vec![json!({"name": "db", "vcpus": 2, "weight": 256, "tasks": [
            {"name": "lk", "workload": {"type": "spinlock", "cs_us": 13, "between_us": 84, "lock": lock}}]})];
        if hogs > 0 {
            let tasks: Vec<Value> =
                (0..hogs).map(|k| json!({"name": format!("b{k}"), "vcpu": k, "workload": {"type": "cpu"}})).collect();
            domains.push(json!({"name": "batch", "vcpus": hogs, "weight": 256, "tasks": tasks}));
        }
        scenario(json!({"schema": 1, "id": "t", "title": "t", "seed": 1, "duration_ms": 400, "warmup_ms": 0,
            "host": {"pcpus": pcpus}, "domains": domains, "policies": [policy]}))
    }

    /// Two threads on two pCPUs of their own: every acquisition is a 97 us cycle (13 us under the lock), the lock
    /// passes in ticket order and nobody is preempted, so the throughput is the threads' and the spin is only the
    /// queueing. (The tests' cycles do not divide the host's 4 ms tick, which would preempt every thread at the same
    /// point of its cycle on a host whose mechanisms cost nothing.)
    #[test]
    fn an_uncontended_host_runs_the_lock_at_the_threads_rate() {
        let sc = lock_host(2, "ticket", 0, json!({"id": "k", "scheduler": "kvm"}));
        let sim = run(&sc, "k");
        let m = &sim.measure.dom_metrics[0];
        let per_s = m.lock_acquisitions as f64 / 0.4;
        assert!((19_500.0..=20_700.0).contains(&per_s), "{per_s} acquisitions/s");
        assert!(m.spin_ns < 400_000_000 / 10, "spun {} ns", m.spin_ns);
    }

    /// On one pCPU shared with a busy loop, a preempted holder leaves the waiter spinning: the ticket waiter spins
    /// for the holder's whole time off the CPU, the PV waiter halts after SPIN_THRESHOLD and gives the CPU back.
    #[test]
    fn a_pv_waiter_halts_where_a_ticket_waiter_spins() {
        let spin = |lock: &str| {
            let sc = lock_host(1, lock, 1, json!({"id": "k", "scheduler": "kvm", "params": {"halt_poll_ns": 0}}));
            let sim = run(&sc, "k");
            sim.measure.dom_metrics[0].spin_ns
        };
        let (ticket, pv) = (spin("ticket"), spin("pv"));
        assert!(ticket > 0, "a waiter spins while its holder is preempted");
        assert!(pv * 2 < ticket, "pv {pv} ns against ticket {ticket} ns");
    }

    /// PLE makes a spinning vCPU exit, and a directed yield hands the pCPU to the preempted holder: more
    /// acquisitions than without PLE on the same host.
    #[test]
    fn ple_with_directed_yield_helps_a_preempted_holder() {
        let ple = json!({"gap": 128, "window": 4096, "grow": 2, "shrink": 0, "max": 4_294_967_295u64});
        let acq = |params: Value| {
            let sc = lock_host(1, "ticket", 1, json!({"id": "k", "scheduler": "kvm", "params": params}));
            let sim = run(&sc, "k");
            (sim.measure.dom_metrics[0].lock_acquisitions, sim.measure.dom_metrics[0].ple_exits)
        };
        let (off, exits_off) = acq(json!({}));
        let (on, exits_on) = acq(json!({"ple": ple, "directed_yield": "plain"}));
        assert_eq!(exits_off, 0);
        assert!(exits_on > 0);
        assert!(on > off, "with PLE and directed yield {on}, without {off}");
    }

    /// A shootdown waits for a sibling only while that sibling is off its pCPU: alone on the host, the
    /// acknowledgements come at once; beside a busy domain, they wait for the host.
    #[test]
    fn a_shootdown_waits_only_for_descheduled_siblings() {
        let host = |pcpus: u32, hogs: u32| {
            let mut domains = vec![json!({"name": "vm", "vcpus": 2, "weight": 256, "tasks": [
                {"name": "sd", "vcpu": 0, "workload": {"type": "tlb_shootdown", "interval_us": 97, "cpu_us": 2}},
                {"name": "w", "vcpu": 1, "workload": {"type": "cpu"}}]})];
            if hogs > 0 {
                let tasks: Vec<Value> = (0..hogs)
                    .map(|k| json!({"name": format!("b{k}"), "vcpu": k, "workload": {"type": "cpu"}}))
                    .collect();
                domains.push(json!({"name": "batch", "vcpus": hogs, "weight": 256, "tasks": tasks}));
            }
            let sc = scenario(json!({"schema": 1, "id": "t", "title": "t", "seed": 1, "duration_ms": 400,
                "warmup_ms": 0, "host": {"pcpus": pcpus}, "domains": domains,
                "policies": [{"id": "k", "scheduler": "kvm"}]}));
            let sim = run(&sc, "k");
            let m = &sim.measure.dom_metrics[0];
            (m.shootdowns, m.ipi_wait_ns)
        };
        let (n, wait) = host(2, 0);
        assert!(n > 3_000, "{n} shootdowns");
        assert_eq!(wait, 0, "every sibling runs, so every IPI is taken at once");
        // Three busy vCPUs, so the two pCPUs' queues differ and the domain's vCPUs are not preempted in lockstep.
        let (n, wait) = host(2, 3);
        assert!(n > 0);
        assert!(wait > 0, "a descheduled sibling holds the sender");
    }
}
