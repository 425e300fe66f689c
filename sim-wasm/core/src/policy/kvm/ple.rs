//! KVM's answers to a spinning vCPU: pause-loop exiting with its window dynamics (`arch/x86/kvm/vmx/vmx.c`
//! `handle_pause`, `grow_ple_window`, `shrink_ple_window`) and directed yield (`virt/kvm/kvm_main.c`
//! `kvm_vcpu_on_spin`, `kernel/sched/core.c` `yield_to`, `kernel/sched/fair.c` `yield_to_task_fair`).
//!
//! A vCPU exits after spinning for its window (cycles); each exit grows the window (`grow` < window: times
//! `grow`, else plus `grow`, at most `max`), and each time the vCPU's thread is scheduled in the window shrinks
//! (`shrink` 0, the default, resets it to `window`). `gap` 0 turns PLE off as KVM's `ple_gap=0` does; otherwise
//! the model's spin loops are back-to-back PAUSEs, always within the gap.
//!
//! What the exit does, `directed_yield`:
//! - `"none"`: the spinner only yields its pCPU (`yield_task_fair`), as a PLE handler with no candidate to boost
//!   (the first one, Linux 2.6.32, slept 100 us instead).
//! - `"plain"`: `kvm_vcpu_on_spin`: from the VM's last boosted vCPU on, the first vCPU of the same VM that was
//!   preempted (runnable, not running: `vcpu->ready`) gets `yield_to`: it becomes its run queue's next buddy
//!   (picked next if eligible, PICK_BUDDY) and its pCPU reschedules; the spinner yields. Halted vCPUs are skipped,
//!   and nothing happens when no vCPU qualifies.
//! - `"ipi_aware"`: as plain, but a preempted vCPU that has an IPI from the spinner it has not yet taken comes
//!   first (Wanpeng Li's "sched/kvm: Semantics-aware vCPU scheduling for oversubscribed KVM", v2, December 2025,
//!   patch 8: `kvm_vcpu_on_spin` tries the spinner's confirmed IPI receivers before the usual candidates). Its
//!   part 1, a scheduler "debooster" of the yielding vCPU, is what the simplification below stands for.
//!
//! Simplified: the yielder's deadline moves one slice later at every level of its hierarchy (the kernel's EEVDF
//! yield moves only the thread's own, CFS's skip buddy covers every level); without that a yield inside a VM's
//! cgroup would never let another VM run. The heuristics that rotate candidates (`dy_eligible`) and prefer
//! vCPUs preempted in kernel mode are left out.

use super::{Ent, Kvm};
use crate::model::{PcpuId, VcpuId};
use crate::policy::Ctx;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::fmt::Write;

/// KVM's pause-loop exiting knobs (`kvm_intel` module parameters), in cycles.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(inline)]
pub struct KvmPle {
    /// `ple_gap`: most cycles between two PAUSEs of one loop (default 128); 0 turns PLE off.
    #[schemars(range(min = 0, max = 4_294_967_295u64))]
    pub gap: u64,
    /// `ple_window`: cycles a vCPU may spin before it exits, and where the window starts (default 4096).
    #[schemars(range(min = 1, max = 4_294_967_295u64))]
    pub window: u64,
    /// `ple_window_grow`: the window's growth per exit (default 2): a factor below `window`, else an addend; 0
    /// keeps it at `window`.
    #[schemars(range(min = 0, max = 4_294_967_295u64))]
    pub grow: u64,
    /// `ple_window_shrink`: the shrink when the vCPU is scheduled in (default 0, which resets the window to
    /// `window`): a divisor below `window`, else a subtrahend.
    #[schemars(range(min = 0, max = 4_294_967_295u64))]
    pub shrink: u64,
    /// `ple_window_max`: the most the window grows to (default UINT_MAX) [cycles].
    #[schemars(range(min = 1, max = 4_294_967_295u64))]
    pub max: u64,
}

impl Default for KvmPle {
    fn default() -> KvmPle {
        KvmPle { gap: 128, window: 4096, grow: 2, shrink: 0, max: u64::from(u32::MAX) }
    }
}

/// What a pause-loop exit does (see the module header).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "snake_case")]
#[schemars(inline)]
pub enum DirectedYield {
    /// The spinner only yields its pCPU.
    None,
    /// `kvm_vcpu_on_spin`: yield to a preempted vCPU of the same VM.
    #[default]
    Plain,
    /// As plain, preferring a preempted vCPU that owes an IPI.
    IpiAware,
}

/// `__grow_ple_window`.
pub fn grow(val: u64, base: u64, modifier: u64, max: u64) -> u64 {
    if modifier < 1 {
        return base;
    }
    let v = if modifier < base { val.saturating_mul(modifier) } else { val.saturating_add(modifier) };
    v.min(max)
}

/// `__shrink_ple_window`.
pub fn shrink(val: u64, base: u64, modifier: u64, min: u64) -> u64 {
    if modifier < 1 {
        return base;
    }
    let v = if modifier < base { val / modifier } else { val.saturating_sub(modifier) };
    v.max(min)
}

impl Kvm {
    /// The PLE window of thread `t`, when PLE is on [cycles].
    pub(super) fn ple_window_of(&self, t: usize) -> Option<u64> {
        let ple = self.params.ple.as_ref().filter(|p| p.gap > 0)?;
        self.threads[t].vcpu.then(|| self.threads[t].ple_window.max(1).min(ple.max.max(1)))
    }

    /// Thread `t` is scheduled in: its window shrinks (`vmx_sched_in`).
    pub(super) fn ple_sched_in(&mut self, t: usize) {
        if let Some(p) = self.params.ple.as_ref() {
            let (base, m) = (p.window, p.shrink);
            let th = &mut self.threads[t];
            th.ple_window = shrink(th.ple_window, base, m, base);
        }
    }

    /// The yielder's deadline moves one request later at every level (see the module header).
    fn yield_self(&mut self, t: usize) {
        let cpu = self.threads[t].cpu;
        let mut e = Ent::Thread(t);
        loop {
            let slice = self.base_slice;
            let s = self.se_mut(cpu, e);
            s.deadline += super::fair(slice, s.weight);
            // The pick no longer protects it (its deadline changed).
            s.vprot = s.vruntime;
            match self.parent_of(e) {
                Some(g) => e = Ent::Group(g),
                None => break,
            }
        }
    }

    /// A preempted vCPU of the same VM as `t` to yield to, from the VM's last boosted one on.
    fn yield_target(&self, t: usize, owes_ipi: &[bool], ctx: &Ctx) -> Option<usize> {
        let dom = self.threads[t].dom;
        let vcpus = &ctx.host.domains[dom].vcpus;
        let n = vcpus.len();
        let start = self.last_boosted.get(dom).copied().unwrap_or(0);
        let ready = |x: usize| {
            x != t
                && self.threads[x].runnable
                && self.running[self.threads[x].cpu] != Some(x)
                && !self.group_throttled(x)
        };
        let order = || (1..=n).map(move |i| vcpus[(start + i) % n].0);
        if self.params.directed_yield == DirectedYield::IpiAware {
            if let Some(x) = order().find(|&x| ready(x) && owes_ipi.get(x).copied().unwrap_or(false)) {
                return Some(x);
            }
        }
        order().find(|&x| ready(x))
    }

    /// vCPU `v` exited on a PAUSE loop (`handle_pause`): grow its window, then yield as `directed_yield` says.
    pub(super) fn on_pause_exit(&mut self, v: VcpuId, owes_ipi: &[bool], ctx: &mut Ctx) {
        let Some(p) = self.params.ple.clone() else { return };
        let t = v.0;
        let th = &mut self.threads[t];
        th.ple_window = grow(th.ple_window, p.window, p.grow, p.max);
        th.ple_exits += 1;
        let cpu = self.threads[t].cpu;
        let names = ctx.host.vcpu_name;
        self.update_curr(cpu, ctx.now, ctx);
        let target = match self.params.directed_yield {
            DirectedYield::None => None,
            _ => match self.yield_target(t, owes_ipi, ctx) {
                Some(x) => Some(x),
                None => {
                    ctx.note(PcpuId(cpu), |w| write!(w, "{} PAUSE-loop exit: no preempted sibling", names[v.0]));
                    return;
                }
            },
        };
        self.yield_self(t);
        if let Some(x) = target {
            let dom = self.threads[t].dom;
            if let Some(pos) = ctx.host.domains[dom].vcpus.iter().position(|&y| y.0 == x) {
                self.last_boosted[dom] = pos;
            }
            let xc = self.threads[x].cpu;
            self.buddy[xc] = Some(x);
            self.directed_yields += 1;
            ctx.note(PcpuId(cpu), |w| {
                write!(w, "{} PAUSE-loop exit: directed yield to preempted {}", names[v.0], names[x])
            });
            if xc != cpu {
                ctx.resched(PcpuId(xc));
            }
        } else {
            ctx.note(PcpuId(cpu), |w| write!(w, "{} PAUSE-loop exit: yields its pCPU", names[v.0]));
        }
        ctx.resched(PcpuId(cpu));
    }

    /// The next buddy of `cpu`, taken: the thread a directed yield boosted, if it may run now (queued here,
    /// eligible at each level, its group not throttled).
    pub(super) fn take_buddy(&mut self, cpu: usize) -> Option<usize> {
        let b = self.buddy[cpu].take()?;
        let th = &self.threads[b];
        if !th.runnable || th.cpu != cpu || th.se.delayed || !th.se.on_rq || self.group_throttled(b) {
            return None;
        }
        let ok = match th.group {
            Some(g) => {
                self.groups[g].se[cpu].on_rq
                    && self.eligible(cpu, None, Ent::Group(g))
                    && self.eligible(cpu, Some(g), Ent::Thread(b))
            }
            None => self.eligible(cpu, None, Ent::Thread(b)),
        };
        ok.then_some(b)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The window rules as `vmx.c` writes them: the defaults double per exit up to the max and reset on
    /// sched-in; an addend above the base adds.
    #[test]
    fn window_grows_and_shrinks_as_vmx_does() {
        let d = KvmPle::default();
        assert_eq!(grow(4096, d.window, d.grow, d.max), 8192);
        assert_eq!(grow(u64::from(u32::MAX) - 1, d.window, d.grow, d.max), u64::from(u32::MAX));
        assert_eq!(grow(4096, 4096, 5000, 1 << 20), 9096);
        assert_eq!(grow(8192, 4096, 0, 1 << 20), 4096);
        assert_eq!(shrink(1 << 20, d.window, d.shrink, d.window), 4096);
        assert_eq!(shrink(1 << 20, 4096, 2, 4096), 1 << 19);
        assert_eq!(shrink(5000, 4096, 2, 4096), 4096);
    }
}
