//! The hypervisor's scheduling pass on a pCPU: the policy decides, the engine switches (charging the outgoing
//! vCPU, closing its trace segment, paying the switch), arms the slice and the tick, and starts the guest.

use super::*;

impl Simulation {
    pub(super) fn close_segment(&mut self, p: PcpuId) {
        let start = self.host.pcpus[p.0].seg_start;
        self.host.pcpus[p.0].seg_start = self.now;
        let Some(v) = self.host.pcpus[p.0].running else {
            return;
        };
        if self.now <= start {
            return;
        }
        let task = self.host.pcpus[p.0].seg_task;
        self.measure.usage.add(v.0, start.0, self.now.0);
        if self.rec.on || self.replay.is_some() {
            let seg = Segment {
                pcpu: p.0 as u32,
                start: start.0,
                end: self.now.0,
                vcpu: v.0 as u32,
                task: task.map_or(-1, |t| t.0 as i32),
            };
            if self.rec.on {
                self.rec.trace.push_segment(seg);
            } else {
                // A replay run keeps the shares over time for the overview.
                self.rec.trace.aggregate(&seg);
            }
        }
        let a = start.max(self.warmup);
        let b = self.now.min(self.end);
        if b > a {
            let ns = (b - a).0;
            self.measure.busy_ns += ns;
            self.measure.dom_metrics[self.host.vcpus[v.0].dom.0].cpu_ns += ns;
            if let Some(t) = task {
                self.measure.task_metrics[t.0].cpu_ns += ns;
            }
        }
    }

    /// A ticker that stops while its pCPU idles (Xen 3.4+ `csched_tick_suspend`) stops when the pCPU goes idle and
    /// restarts on the tick grid when it gets work (`csched_tick_resume`: `now + period - now % period`).
    pub(super) fn tick_idle_transition(&mut self, p: PcpuId, cur: Option<VcpuId>, next: Option<VcpuId>) {
        let timers = self.policy.timers();
        let Some(period) = timers.tick.filter(|_| timers.tick_stops_idle) else { return };
        match (cur, next) {
            (Some(_), None) => self.host.timing.stop_tick(p.0),
            (None, Some(_)) => self.arm_tick(p, grid_after(self.now, period)),
            _ => {}
        }
    }

    /// `do_schedule` on one pCPU and the context switch it asks for.
    pub(super) fn schedule(&mut self, p: PcpuId) {
        self.host.pcpus[p.0].resched_pending = false;
        let cur = self.host.pcpus[p.0].running;
        if let Some(c) = cur {
            self.charge(c);
            self.host.vcpus[c.0].exec_start = None;
            self.host.vcpus[c.0].guest_timer.cancel();
        }
        self.close_segment(p);
        let cur_runnable =
            cur.is_some_and(|c| self.host.vcpus[c.0].state == VState::Runnable && !self.host.vcpus[c.0].paused);
        let trigger = match cur {
            None => "idle pCPU",
            Some(c) if self.host.vcpus[c.0].paused => "parked",
            Some(_) if !cur_runnable => "block",
            Some(_) if self.host.pcpus[p.0].slice_expired => "slice end",
            Some(_) => "preempt",
        };
        self.host.pcpus[p.0].slice_expired = false;
        let d: Pick = self.with_ctx(|pol, ctx| pol.do_schedule(p, cur, cur_runnable, ctx));
        if let Some(n) = d.next {
            if let Some(q) = self.host.vcpus[n.0].on_pcpu.filter(|&q| q != p) {
                // A policy bug: stop the run with an error rather than run one vCPU on two pCPUs.
                self.fault = Some(SimError::Engine(format!(
                    "{} chosen on pCPU{} at {} ns while it runs on pCPU{}",
                    self.host.vcpu_name[n.0], p.0, self.now.0, q.0
                )));
                return;
            }
        }
        if d.next != cur {
            if let Some(c) = cur {
                self.host.vcpus[c.0].on_pcpu = None;
                // Kernel work cut short by the deschedule is finished when the vCPU next runs.
                let left = self.host.vcpus[c.0].kernel_until.saturating_sub(self.now).0;
                self.host.vcpus[c.0].kernel_left += left;
                self.host.vcpus[c.0].kernel_until = Nanos::ZERO;
                if self.host.vcpus[c.0].state == VState::Runnable {
                    self.host.vcpus[c.0].descheduled_at = Some(self.now);
                }
            }
            let flips = cur.is_some() != d.next.is_some();
            if flips {
                self.smt_before_change(p);
            }
            self.host.pcpus[p.0].running = d.next;
            self.host.running[p.0] = d.next;
            if flips {
                self.smt_after_change(p);
            }
            if let Some(n) = d.next {
                self.host.vcpus[n.0].on_pcpu = Some(p);
                let moved = self.host.vcpus[n.0].last_pcpu.is_some_and(|q| q != p);
                self.host.vcpus[n.0].last_pcpu = Some(p);
                if self.in_window(self.now) {
                    let m = &mut self.measure.dom_metrics[self.host.vcpus[n.0].dom.0];
                    m.context_switches += 1;
                    m.migrations += u64::from(moved);
                }
                // The switch itself, and the cache refill when the pCPU last ran another domain, come out of the
                // incoming vCPU's time, before its guest makes progress (Xen charges whoever runs).
                let dom = self.host.vcpus[n.0].dom;
                let refill = if self.host.pcpus[p.0].last_dom == Some(dom) { 0 } else { self.costs.cache_refill_ns };
                self.host.pcpus[p.0].last_dom = Some(dom);
                let left = std::mem::take(&mut self.host.vcpus[n.0].kernel_left);
                self.host.vcpus[n.0].kernel_until = self.now + Nanos(self.costs.vcpu_switch_ns + refill + left);
            }
        }
        self.host.pcpus[p.0].seg_task = d.next.and_then(|n| self.host.vcpus[n.0].current);
        self.rec.decisions_made += 1;
        if self.rec.on {
            match self.notes.take_pick() {
                Some(f) => self.rec.trace.push_decision_facts(self.now.0, p.0, trigger, f),
                None => self.rec.trace.push_decision_fmt(self.now.0, p.0, format_args!("{trigger}: {}", d.reason)),
            }
        }
        self.host.pcpus[p.0].slice_timer.cancel();
        if d.next.is_none() && self.policy.timed_idle() {
            // Time-partitioned policies (ARINC 653 windows, Atropos periods) start work on an idle pCPU by timer.
            let at = self.host.timing.fire_at(p.0, TimerKind::Slice, self.now + d.slice.max(Nanos(1)));
            if self.host.pcpus[p.0].slice_timer.arm(at) {
                self.push(at, Ev::SliceEnd(p));
            }
        }
        self.tick_idle_transition(p, cur, d.next);
        if let Some(n) = d.next {
            // The slice starts at dispatch (`set_timer(&sd->s_timer, now + r_time)`) and ends in the slop window.
            let at = self.host.timing.fire_at(p.0, TimerKind::Slice, self.now + d.slice);
            if self.host.pcpus[p.0].slice_timer.arm(at) {
                self.push(at, Ev::SliceEnd(p));
            }
            if d.next != cur {
                self.guest_clock_gap(n);
            }
            // Pending notifications are delivered as the vCPU starts running: one upcall, then the stack's work.
            let before = self.host.vcpus[n.0].current;
            let had_events = !self.host.vcpus[n.0].pending.is_empty();
            if had_events {
                self.upcall(n);
            }
            while let Some(pe) = self.host.vcpus[n.0].pending.pop_front() {
                if self.in_window(self.now) {
                    self.measure.dom_metrics[self.host.vcpus[n.0].dom.0].event_latency_ns.push((self.now - pe.at).0);
                }
                self.deliver(n, pe.ev, (self.now - pe.at).0);
            }
            if self.host.vcpus[n.0].on_pcpu == Some(p) && self.host.pcpus[p.0].running == Some(n) {
                self.lock_vcpu_runs(n);
                self.guest_run(n);
                // The events woke nothing that took over: once handled, the guest returns to the task it was
                // running, which the hypervisor sees.
                if let (true, Some(t)) = (had_events, before) {
                    if self.host.vcpus[n.0].current == Some(t) && self.host.vcpus[n.0].on_pcpu == Some(p) {
                        let at = self.host.vcpus[n.0].kernel_until.max(self.now);
                        self.push(at, Ev::Resumed(n, t));
                    }
                }
            }
        }
    }
}
