//! The guest kernel inside each domain: its task scheduler (Linux 2.6 O(1) with interactivity and active/expired
//! arrays, or CFS with vruntime), wake-up preemption, the CPU balloon's place in it (paper 002), the guest clock
//! that charges descheduled time, and the timer that ends a task's burst or slice. The engine calls in when a
//! vCPU runs, stops or gets an event; workloads call in when a task blocks or wakes.

use super::*;

/// Linux O(1) interactivity window: the sleep average saturates at 1 s [ns].
pub(super) const MAX_SLEEP_AVG: u64 = 1_000_000_000;

/// O(1) scheduler base time slices: 100 ms at nice 0, 800 ms at -20, 5 ms at 19 [ns].
pub(super) fn guest_slice(p: Priority) -> u64 {
    let ms = match p {
        Priority::Rt(_) => 100,
        Priority::Nice(n) if n < 0 => (20 - n as i64) * 20,
        Priority::Nice(n) => ((20 - n as i64) * 5).max(5),
    };
    ms as u64 * 1_000_000
}

/// CFS load weight of a nice value (Linux `sched_prio_to_weight`).
fn cfs_weight(p: Priority) -> u64 {
    const W: [u64; 40] = [
        88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501,
        1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
    ];
    match p {
        Priority::Rt(_) => 88761,
        Priority::Nice(n) => W[(n.clamp(-20, 19) + 20) as usize],
    }
}

/// CFS tunables, Linux's normalised defaults for one CPU [ns]: the targeted latency, the minimum slice and the
/// wake-up granularity (kernel/sched/fair.c `normalized_sysctl_sched_*`). The kernel scales all three by
/// [`cfs_factor`] for the CPUs it has.
const CFS_LATENCY: u64 = 6_000_000;

const CFS_MIN_GRAN: u64 = 750_000;

const CFS_WAKEUP_GRAN: u64 = 1_000_000;

/// Linux's scaling of the CFS tunables by the CPUs a kernel has (`sysctl_sched_tunable_scaling` defaults to
/// `SCHED_TUNABLESCALING_LOG`: `get_update_sysctl_factor` returns 1 + ilog2(min(online CPUs, 8))); a guest
/// kernel's CPUs are its vCPUs.
pub(super) fn cfs_factor(vcpus: usize) -> u64 {
    1 + u64::from(vcpus.clamp(1, 8).ilog2())
}

impl Simulation {
    /// Makes a guest task runnable if it has something to do. Does not touch the vCPU.
    pub(super) fn task_wake(&mut self, t: TaskId) -> bool {
        let Some(burst) = self.begin_burst(t) else { return false };
        let now = self.now;
        let cfs = self.guests.kernel[self.guests.tasks[t.0].dom.0].scheduler == GuestScheduler::Cfs;
        let v = self.guests.tasks[t.0].vcpu;
        let min_vr = self.host.vcpus[v.0].min_vruntime;
        let latency = self.cfs_scaled(v, CFS_LATENCY);
        let task = &mut self.guests.tasks[t.0];
        task.burst_left = burst;
        task.sleep_avg = (task.sleep_avg + (now - task.blocked_since).0).min(MAX_SLEEP_AVG);
        // O(1) wakes a task into the active array.
        task.expired = false;
        if cfs {
            // Sleeper credit: a waking task is placed at most half a latency period behind the queue.
            task.vruntime = task.vruntime.max(min_vr.saturating_sub(latency / 2));
        }
        task.state = TState::Runnable;
        self.host.vcpus[v.0].runnable.push(t);
        if self.rec.on {
            self.rec.trace.push_task_state(TaskRec { t_ns: now.0, task: t.0 as u32, state: "runnable" });
        }
        true
    }

    pub(super) fn task_block(&mut self, t: TaskId) {
        let task = &mut self.guests.tasks[t.0];
        task.state = TState::Blocked;
        task.blocked_since = self.now;
        let v = task.vcpu;
        self.walked(self.host.vcpus[v.0].runnable.len());
        self.host.vcpus[v.0].runnable.retain(|&x| x != t);
        if self.rec.on {
            self.rec.trace.push_task_state(TaskRec { t_ns: self.now.0, task: t.0 as u32, state: "blocked" });
        }
    }

    /// A CFS tunable as the guest kernel of vCPU `v` sets it for its domain's vCPU count [ns].
    fn cfs_scaled(&self, v: VcpuId, base: u64) -> u64 {
        base * cfs_factor(self.host.dom_info[self.host.vcpus[v.0].dom.0].vcpus.len())
    }

    fn is_cfs(&self, v: VcpuId) -> bool {
        self.guests.kernel[self.host.vcpus[v.0].dom.0].scheduler == GuestScheduler::Cfs
    }

    /// Linux O(1)-like effective priority (lower runs first): RT at 0; others 120 + nice - interactivity bonus.
    fn prio(&self, t: TaskId) -> i64 {
        let task = &self.guests.tasks[t.0];
        match task.priority {
            Priority::Rt(_) => 0,
            Priority::Nice(n) => {
                let bonus = (task.sleep_avg * 10 / MAX_SLEEP_AVG) as i64 - 5;
                120 + i64::from(n) - bonus
            }
        }
    }

    /// The guest's choice: RT first; then the best O(1) priority (FIFO among equals) or the least CFS vruntime.
    pub(super) fn guest_pick(&self, v: VcpuId) -> Option<TaskId> {
        let rq = &self.host.vcpus[v.0].runnable;
        self.walked(rq.len());
        if let Some(b) = self.host.vcpus[v.0].balloon {
            return self.guest_pick_with_balloon(v, b);
        }
        if let Some(rt) = rq.iter().copied().find(|t| matches!(self.guests.tasks[t.0].priority, Priority::Rt(_))) {
            return Some(rt);
        }
        if self.is_cfs(v) {
            rq.iter().copied().min_by_key(|t| self.guests.tasks[t.0].vruntime)
        } else {
            rq.iter().copied().min_by_key(|&t| (self.guests.tasks[t.0].expired, self.prio(t)))
        }
    }

    /// O(1)'s TASK_INTERACTIVE: the dynamic priority is at least 2 (plus a quarter of the nice value) better than
    /// the static one, i.e. a nice-0 task has slept at least 70% of MAX_SLEEP_AVG recently.
    pub(super) fn interactive(&self, t: TaskId) -> bool {
        match self.guests.tasks[t.0].priority {
            Priority::Rt(_) => true,
            Priority::Nice(n) => self.prio(t) <= 120 + i64::from(n) - (i64::from(n) * 10 / 40 + 2),
        }
    }

    /// O(1)'s EXPIRED_STARVING: the expired array has waited STARVATION_LIMIT (MAX_SLEEP_AVG) per runnable task,
    /// or holds a task of better static priority than the current one.
    pub(super) fn expired_starving(&self, v: VcpuId) -> bool {
        let vc = &self.host.vcpus[v.0];
        self.walked(vc.runnable.len());
        let waited = vc.expired_since.is_some_and(|s| self.now - s >= Nanos(MAX_SLEEP_AVG * vc.runnable.len() as u64));
        let nice = |t: TaskId| match self.guests.tasks[t.0].priority {
            Priority::Rt(_) => i64::MIN,
            Priority::Nice(n) => i64::from(n),
        };
        let better_expired = vc
            .current
            .is_some_and(|c| vc.runnable.iter().any(|&t| self.guests.tasks[t.0].expired && nice(t) < nice(c)));
        waited || better_expired
    }

    /// O(1)'s array switch: when no runnable task is left in the active array, the expired one becomes active.
    pub(super) fn expired_swap(&mut self, v: VcpuId) {
        let vc = &self.host.vcpus[v.0];
        self.walked(vc.runnable.len());
        if vc.runnable.is_empty() || vc.runnable.iter().any(|&t| !self.guests.tasks[t.0].expired) {
            return;
        }
        for i in 0..self.host.vcpus[v.0].runnable.len() {
            let t = self.host.vcpus[v.0].runnable[i];
            self.guests.tasks[t.0].expired = false;
        }
        self.host.vcpus[v.0].expired_since = None;
    }

    /// Whether the balloon steps aside for task `t`: RT tasks outrank it, and so does a task that got an event
    /// since the balloon last paused the vCPU (the balloon's `sched_yield` after an I/O event unpaused it). Tasks
    /// that were runnable all along (the compute tasks) wait behind it.
    pub(super) fn balloon_yields_to(&self, t: TaskId, since: Nanos) -> bool {
        let task = &self.guests.tasks[t.0];
        matches!(task.priority, Priority::Rt(_)) || task.last_event.is_some_and(|e| e >= since)
    }

    /// The guest's choice on a vCPU with a balloon: RT tasks; else the tasks the balloon yields to, by the guest's
    /// usual order; else the balloon if it is runnable (armed); else the rest.
    fn guest_pick_with_balloon(&self, v: VcpuId, b: TaskId) -> Option<TaskId> {
        let vc = &self.host.vcpus[v.0];
        let others = || vc.runnable.iter().copied().filter(move |&t| t != b);
        if let Some(rt) = others().find(|t| matches!(self.guests.tasks[t.0].priority, Priority::Rt(_))) {
            return Some(rt);
        }
        let best = |it: &mut dyn Iterator<Item = TaskId>| {
            if self.is_cfs(v) {
                it.min_by_key(|t| self.guests.tasks[t.0].vruntime)
            } else {
                it.min_by_key(|&t| self.prio(t))
            }
        };
        if self.guests.tasks[b.0].state == TState::Runnable {
            let since = vc.balloon_since;
            return best(&mut others().filter(|&t| self.balloon_yields_to(t, since))).or(Some(b));
        }
        best(&mut others())
    }

    /// Wake-up preemption in the guest: a woken task that outranks the current one takes the vCPU now.
    pub(super) fn guest_preempt_check(&mut self, v: VcpuId, woken: TaskId) {
        if self.host.vcpus[v.0].on_pcpu.is_none() || self.host.vcpus[v.0].paused {
            return;
        }
        if let (Some(b), Some(cur)) = (self.host.vcpus[v.0].balloon, self.host.vcpus[v.0].current) {
            if (woken == b || cur == b) && cur != woken && self.guests.tasks[cur.0].state == TState::Runnable {
                // The balloon and the task it competes with: whoever the guest's pick prefers runs now.
                self.charge(v);
                if self.guest_pick(v) != Some(cur) {
                    self.guest_run(v);
                }
                return;
            }
        }
        if let Some(cur) = self.host.vcpus[v.0].current {
            if cur != woken && self.guests.tasks[cur.0].state == TState::Runnable {
                self.charge(v);
                let rt = |t: TaskId| matches!(self.guests.tasks[t.0].priority, Priority::Rt(_));
                let preempt = if rt(woken) || rt(cur) {
                    rt(woken) && !rt(cur)
                } else if self.is_cfs(v) {
                    self.guests.tasks[woken.0].vruntime + self.cfs_scaled(v, CFS_WAKEUP_GRAN)
                        < self.guests.tasks[cur.0].vruntime
                } else {
                    self.prio(woken) < self.prio(cur)
                };
                if !preempt {
                    return;
                }
            }
        }
        self.charge(v);
        self.guest_run(v);
    }

    /// Charges the CPU since `exec_start` to the vCPU's current task (burst, slice, interactivity, vruntime).
    pub(super) fn charge(&mut self, v: VcpuId) {
        let Some(start) = self.host.vcpus[v.0].exec_start else { return };
        let Some(t) = self.host.vcpus[v.0].current else { return };
        if self.now <= start {
            // Still inside the hypervisor's task-tracking overhead of the last switch: the guest made no progress.
            return;
        }
        let e = (self.now - start).0;
        // A busy sibling thread slows the task's work, not its guest's clock.
        let work = self.smt_work(v, t, start, e);
        self.host.vcpus[v.0].exec_start = Some(self.now);
        let task = &mut self.guests.tasks[t.0];
        if let Some(b) = task.burst_left.as_mut() {
            *b = b.saturating_sub(work);
        }
        task.slice_left = task.slice_left.saturating_sub(e);
        task.sleep_avg = task.sleep_avg.saturating_sub(e);
        task.vruntime += e * 1024 / cfs_weight(task.priority);
        if let Work::Barrier { group, member, phase: BarrierPhase::Spin, .. } = task.work {
            let g = &mut self.guests.groups[group];
            g.spin_ns += e;
            g.spin_ns_by_member[member] += e;
            if self.rec.on {
                // Where the spinning happened, for the page's state lanes.
                self.rec.trace.push_spin(SpinRec { vcpu: v.0 as u32, start: start.0, end: self.now.0 });
            }
        }
        self.lock_charge(t, v, start, e);
        self.update_min_vruntime(v);
    }

    fn update_min_vruntime(&mut self, v: VcpuId) {
        self.walked(self.host.vcpus[v.0].runnable.len());
        // The balloon ranks by its own rule; its vruntime must not hold the queue's clock back.
        let b = self.host.vcpus[v.0].balloon;
        let rq = self.host.vcpus[v.0].runnable.iter().filter(|&&t| Some(t) != b);
        let least = rq.map(|t| self.guests.tasks[t.0].vruntime).min();
        if let Some(m) = least {
            let vc = &mut self.host.vcpus[v.0];
            vc.min_vruntime = vc.min_vruntime.max(m);
        }
    }

    /// The vCPU is back on a pCPU after being descheduled while runnable. What the guest charges for the gap
    /// depends on its clock: `wall` charges it all to the current task (vruntime dilation); `steal` charges
    /// nothing; `two_clocks` (xBalloon) charges it only to a current task the guest's accounting finds CPU-bound.
    pub(super) fn guest_clock_gap(&mut self, v: VcpuId) {
        let Some(at) = self.host.vcpus[v.0].descheduled_at.take() else { return };
        let Some(t) = self.host.vcpus[v.0].current else { return };
        let gap = (self.now - at).0;
        let clock = self.guests.kernel[self.host.vcpus[v.0].dom.0].clock;
        // The guest cannot know a task's workload; it judges from its own run/wait accounting: a task that has
        // not slept enough to count as interactive by O(1)'s rule (TASK_INTERACTIVE over `sleep_avg`) is CPU-bound.
        let cpu_bound = !self.interactive(t);
        let charged = match clock {
            GuestClock::Wall => gap,
            GuestClock::Steal => 0,
            GuestClock::TwoClocks if cpu_bound => gap,
            GuestClock::TwoClocks => 0,
        };
        let task = &mut self.guests.tasks[t.0];
        task.vruntime += charged * 1024 / cfs_weight(task.priority);
        if self.is_cfs(v) {
            // The tick that ends the slice also runs on guest time.
            let task = &mut self.guests.tasks[t.0];
            task.slice_left = task.slice_left.saturating_sub(charged);
        }
    }

    /// CFS's ideal slice: the latency period shared by the runnable tasks, at least the minimum granularity.
    fn cfs_slice(&self, v: VcpuId) -> u64 {
        let nr = self.host.vcpus[v.0].runnable.len() as u64;
        (self.cfs_scaled(v, CFS_LATENCY) / nr.max(1)).max(self.cfs_scaled(v, CFS_MIN_GRAN))
    }

    /// The guest picks its task on a running vCPU, reports any address-space switch, and arms its timer;
    /// with nothing to run, the vCPU blocks.
    pub(super) fn guest_run(&mut self, v: VcpuId) {
        let Some(p) = self.host.vcpus[v.0].on_pcpu else { return };
        if !self.is_cfs(v) {
            self.expired_swap(v);
        }
        let next = self.guest_pick(v);
        let prev = self.host.vcpus[v.0].current;
        if next != prev {
            self.close_segment(p);
            self.host.pcpus[p.0].seg_task = next;
            self.host.vcpus[v.0].current = next;
            if let (Some(n), true) = (next, self.is_cfs(v)) {
                self.guests.tasks[n.0].slice_left = self.cfs_slice(v);
            }
            self.with_ctx(|pol, ctx| pol.guest_task_switch(v, prev, next, ctx));
        }
        // Observing a switch to a task (its CR3 load) costs hypervisor time on this vCPU before the task runs.
        let overhead = if next != prev && next.is_some() { self.policy.tracking_cost(v) } else { Nanos::ZERO };
        if overhead > Nanos::ZERO && self.in_window(self.now) {
            let dom = self.host.vcpus[v.0].dom.0;
            self.measure.dom_metrics[dom].tracking_ns += overhead.0;
            if let Some(n) = next {
                self.measure.task_metrics[n.0].tracking_ns += overhead.0;
            }
        }
        self.host.vcpus[v.0].guest_timer.cancel();
        match next {
            None if self.host.vcpus[v.0].kernel_until > self.now => {
                // No task to run, but the kernel is still busy (an upcall, a stack's packets): the vCPU idles only
                // once that is done.
                let at = self.host.vcpus[v.0].kernel_until;
                self.host.vcpus[v.0].exec_start = Some(at);
                if self.host.vcpus[v.0].guest_timer.arm(at) {
                    self.push(at, Ev::Guest(v));
                }
            }
            None => {
                self.host.vcpus[v.0].exec_start = None;
                if self.host.vcpus[v.0].state == VState::Runnable {
                    self.host.vcpus[v.0].state = VState::Blocked;
                    self.host.vcpus[v.0].blocked_since = Some(self.now);
                    self.with_ctx(|pol, ctx| pol.sleep(v, ctx));
                    self.resched(p);
                }
            }
            Some(t) => {
                // Re-arming without a switch keeps what is left of the last switch's tracking overhead.
                let pending = self.host.vcpus[v.0].exec_start.filter(|&s| next == prev && s > self.now);
                let start = pending.unwrap_or(self.now + overhead).max(self.host.vcpus[v.0].kernel_until);
                self.host.vcpus[v.0].exec_start = Some(start);
                let at = start + Nanos(self.smt_left(v, t));
                if self.host.vcpus[v.0].guest_timer.arm(at) {
                    self.push_guest_timer(v, at);
                }
            }
        }
        self.ple_arm(v);
    }

    /// The current task's burst or guest slice ended.
    pub(super) fn guest_timer(&mut self, v: VcpuId) {
        self.charge(v);
        let Some(t) = self.host.vcpus[v.0].current else {
            // The kernel work of an idle vCPU is done: it looks for a task again, and blocks without one.
            self.guest_run(v);
            return;
        };
        if self.guests.tasks[t.0].burst_left == Some(0) {
            self.burst_done(t);
        } else if self.guests.tasks[t.0].slice_left == 0 {
            // Round robin: to the back of the queue with a fresh slice; O(1) sends a task that is not interactive
            // (or any task while the expired array starves) to the expired array.
            self.guests.tasks[t.0].slice_left = guest_slice(self.guests.tasks[t.0].priority);
            if !self.is_cfs(v) && (!self.interactive(t) || self.expired_starving(v)) {
                self.guests.tasks[t.0].expired = true;
                self.host.vcpus[v.0].expired_since.get_or_insert(self.now);
            }
            self.walked(self.host.vcpus[v.0].runnable.len());
            let rq = &mut self.host.vcpus[v.0].runnable;
            rq.retain(|&x| x != t);
            rq.push(t);
            if self.is_cfs(v) {
                self.guests.tasks[t.0].slice_left = self.cfs_slice(v);
            }
        }
        self.guest_run(v);
    }

    /// A task finished a CPU burst: its workload acts, then it starts its next burst or blocks.
    fn burst_done(&mut self, t: TaskId) {
        self.workload_burst_done(t);
        match self.begin_burst(t) {
            Some(b) => self.guests.tasks[t.0].burst_left = b,
            None => self.task_block(t),
        }
    }
}
