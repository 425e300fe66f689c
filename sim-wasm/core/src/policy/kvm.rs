//! KVM: every vCPU is a thread of the host's Linux scheduler, and every VM a cgroup (`kernel/sched/fair.c`,
//! `Documentation/scheduler/sched-eevdf.rst`, `Documentation/scheduler/sched-bwc.rst`).
//!
//! The host runs its fair class per pCPU: each pCPU has a root run queue holding one entity per VM cgroup that has
//! runnable vCPU threads there (plus the threads of domains placed in the root group), and each cgroup has a run
//! queue per pCPU holding its vCPU threads. A pick walks down: the root queue picks an entity, a group entity's own
//! queue picks again, down to a thread.
//!
//! Two kernels, as `params.kernel` says:
//! - `"eevdf"` (Linux 6.6 and later, the default): each entity has a vruntime (its service divided by its weight),
//!   a lag (the queue's weighted average vruntime less its own), a request of `base_slice` and a virtual deadline
//!   (`vruntime + slice / weight`). The pick is the eligible entity (lag >= 0) with the earliest deadline; once
//!   picked, an entity keeps the CPU until it reaches its deadline or stops being eligible (RUN_TO_PARITY).
//!   A thread that sleeps keeps its lag (PLACE_LAG, inflated on wake-up as `place_entity` does); one that sleeps
//!   with negative lag stays queued, unpickable, until it would be eligible (DELAY_DEQUEUE), then leaves with lag
//!   0 (DELAY_ZERO). A wake-up preempts when the woken entity is what the queue would now pick.
//! - `"cfs"` (before 6.6): the pick is the least vruntime; the running entity is preempted at a tick once it has
//!   run its share of the latency period (`sched_slice`), and by a wake-up whose vruntime is a wake-up granularity
//!   below its own; a sleeper is placed at most half a latency period below the queue's minimum
//!   (GENTLE_FAIR_SLEEPERS).
//!
//! Preemption happens at the host's tick (`hz`) or at a wake-up, as without HRTICK (off by default); the tick
//! stops while a pCPU idles (NO_HZ_IDLE).
//!
//! Cgroups: a group's weight (`cpu.weight`, or v1 `cpu.shares`) is split between the pCPUs it runs on in
//! proportion to the weight of its runnable threads there (`calc_group_shares`). Bandwidth control: a group with
//! `cpu.max` gets `quota` of runtime each `period`, on a fixed grid from boot; time any of its threads run is
//! charged to it and, once nothing is left, the group is throttled on every pCPU until the next period refills it
//! (the debt is paid first), keeping at most `quota + burst` (`cpu.max.burst`).
//!
//! Simplified, and why:
//! - Group shares and load balancing use the instantaneous runnable weight, not PELT's decaying averages: the
//!   averages' 32 ms half-life matters for groups whose threads sleep often, not for the shares of busy ones.
//! - Runtime is charged to one pool per group rather than in 5 ms slices to per-pCPU pools
//!   (`sched_cfs_bandwidth_slice_us`): the slices decide which pCPU may use the last few milliseconds of a period,
//!   not how much the group gets. Throttling is noticed where the kernel notices it, when the running thread's
//!   time is accounted (a tick or a switch), so a group may overrun by up to a tick and pays it back.
//! - Balancing is one scheduling domain over all pCPUs: a waking thread goes to its last pCPU if idle, else to an
//!   idle pCPU, else stays (`select_idle_sibling` without wake-affine); a pCPU about to idle pulls a waiting
//!   thread from the pCPU with the most runnable threads (new-idle balance); every `min_interval` (one
//!   millisecond per CPU, times `busy_factor` 16 while busy) a pCPU pulls a waiting thread of at most half the
//!   load difference from the busiest pCPU by weighted load, once it is `imbalance_pct` (117%) above its own.
//!   No cache-hot test, no NUMA, no capacity or energy awareness.
//!
//! Halt polling (`virt/kvm/kvm_main.c` `kvm_vcpu_halt`, `Documentation/virt/kvm/halt-polling.rst`): a vCPU whose
//! guest halts keeps its pCPU and polls for a wake-up for its own interval (`vcpu->halt_poll_ns`, from 0) while
//! it is the only runnable thread there; a wake-up within the poll resumes it with no trip through the scheduler,
//! another runnable thread or the end of the interval blocks it. The poll is the thread's run time: it advances
//! its vruntime, is charged to its cgroup's quota and counts as the domain's CPU. After each halt the interval is
//! kept (the halt ended within it), shrunk (a halt longer than `halt_poll_ns`) or grown (`grow`, from
//! `grow_start`, at most `halt_poll_ns`). What the poll saves here is the cost profile's vCPU switch on the
//! wake-up path; the profile has no C-state exit or wake-up IPI cost, so the model's latency gain is a lower
//! bound.

use super::common::Versions;
use super::params::{self, Params};
use super::registry::{self, Caps, Scheduler};
use super::{Ctx, DomainInfo, DomainTimes, Pick, Policy, Pri, PriClass, ShareBasis, Timers, VcpuSched, WakeCause};
use crate::model::{PcpuId, VcpuId};
use crate::time::Nanos;
use indexmap::IndexMap;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::fmt::Write;

/// The weight of a nice-0 thread, and of a cgroup at `cpu.weight` 100 (`NICE_0_LOAD`, unscaled).
pub const NICE_0_LOAD: u64 = 1024;

/// The load weight of each nice level from -20 to 19 (`sched_prio_to_weight`, kernel/sched/core.c): each level
/// is about 1.25 times the next, so one nice step is about 10% of CPU between two busy threads.
pub const PRIO_TO_WEIGHT: [u64; 40] = [
    88761, 71755, 56483, 46273, 36291, 29154, 23254, 18705, 14949, 11916, 9548, 7620, 6100, 4904, 3906, 3121, 2501,
    1991, 1586, 1277, 1024, 820, 655, 526, 423, 335, 272, 215, 172, 137, 110, 87, 70, 56, 45, 36, 29, 23, 18, 15,
];

/// The least weight a group entity is given on a pCPU (`MIN_SHARES`, kernel/sched/sched.h).
pub const MIN_SHARES: u64 = 2;

/// Which Linux scheduler the host runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Kernel {
    /// EEVDF, Linux 6.6 and later.
    #[default]
    Eevdf,
    /// CFS, before Linux 6.6.
    Cfs,
}

/// How the slice constants grow with the number of CPUs (`sysctl_sched_tunable_scaling`).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Scaling {
    /// Unscaled.
    None,
    /// Times 1 + log2(CPUs), CPUs counted up to 8 (the kernel's default).
    #[default]
    Log,
    /// Times the CPUs, up to 8.
    Linear,
}

/// One VM's cgroup and its threads' nice level.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(inline)]
pub struct KvmDomain {
    /// The cgroup's `cpu.weight` (cgroup v2); its load weight is `cpu_weight x 1024 / 100`. Default: the domain's
    /// `weight` x 100 / 256, which is 100 for the default weight.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 1, max = 10_000))]
    pub cpu_weight: Option<u64>,
    /// The cgroup's `cpu.shares` (cgroup v1, default 1024), used as the load weight; overrides `cpu_weight`.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "u64", range(min = 2, max = 262_144))]
    pub cpu_shares: Option<u64>,
    /// `cpu.max` as [QUOTA, PERIOD] in microseconds (quota 1000 or more, period 1,000 to 1,000,000), or null for
    /// no limit. Default: the domain's `cap_pct` of one pCPU per 100 ms when it has one.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub cpu_max_us: Option<[u64; 2]>,
    /// `cpu.max.burst` [us]: unused quota kept for later periods, up to this much.
    #[schemars(range(min = 0, max = 1_000_000))]
    pub cpu_max_burst_us: u64,
    /// The nice level of the VM's vCPU threads, -20 to 19.
    #[schemars(range(min = -20, max = 19))]
    pub nice: i64,
    /// The cgroup the domain's threads run in: domains naming the same cgroup share it (its weight and limit are
    /// the first such domain's); "/" is the root group, where each thread competes on its own. Default: a cgroup
    /// of its own, except the driver domain (the host's I/O threads), which runs in the root group.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "String", length(min = 1, max = 64))]
    pub cgroup: Option<String>,
}

/// KVM on the Linux scheduler. Kernel constants default to Linux 6.18's as built for this host kind (HZ 250):
/// `base_slice_ns` 700,000 (`sysctl_sched_base_slice`, 0.7 ms since 6.16, 0.75 ms in 6.6 to 6.15), scaled by
/// 1 + log2(CPUs); CFS's `sched_latency` 6 ms, `sched_min_granularity` 0.75 ms and `sched_wakeup_granularity` 1 ms,
/// scaled alike.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct KvmParams {
    /// The host's fair scheduler: "eevdf" (Linux 6.6+) or "cfs" (before). Fixed at boot.
    pub kernel: Kernel,
    /// The host's tick rate (CONFIG_HZ) [Hz]. Fixed at boot.
    #[schemars(range(min = 100, max = 1000))]
    pub hz: u64,
    /// KVM's `halt_poll_ns`, the most a halting vCPU polls before it blocks [ns]; 0 = off. Default: x86's
    /// `KVM_HALT_POLL_NS_DEFAULT`, 200,000 (`arch/x86/include/asm/kvm_host.h`; this host kind's
    /// /sys/module/kvm/parameters reads the same).
    #[schemars(range(min = 0, max = 10_000_000))]
    pub halt_poll_ns: u64,
    /// What a vCPU's poll interval is multiplied by after a short halt (`halt_poll_ns_grow`, default 2); 0 = never
    /// grows.
    #[schemars(range(min = 0, max = 16))]
    pub halt_poll_ns_grow: u64,
    /// The interval a vCPU's first growth starts from (`halt_poll_ns_grow_start`, default 10,000) [ns].
    #[schemars(range(min = 1, max = 10_000_000))]
    pub halt_poll_ns_grow_start: u64,
    /// What the interval is divided by after a halt longer than `halt_poll_ns` (`halt_poll_ns_shrink`: 2 in
    /// `kvm_main.c` since Linux 6.1 and on this host kind; 0 resets it to 0).
    #[schemars(range(min = 0, max = 16))]
    pub halt_poll_ns_shrink: u64,
    /// EEVDF's request size before CPU scaling (`normalized_sysctl_sched_base_slice`) [ns].
    #[schemars(range(min = 100_000, max = 100_000_000))]
    pub base_slice_ns: u64,
    /// How the slice constants scale with the CPU count (`sysctl_sched_tunable_scaling`). Fixed at boot.
    pub tunable_scaling: Scaling,
    /// EEVDF: a picked entity keeps the CPU until its deadline while it stays eligible (RUN_TO_PARITY).
    pub run_to_parity: bool,
    /// EEVDF: a thread keeps its lag over a sleep (PLACE_LAG); off, it wakes with lag 0.
    pub place_lag: bool,
    /// EEVDF: a thread that sleeps with negative lag stays queued until its lag is paid (DELAY_DEQUEUE).
    pub delay_dequeue: bool,
    /// A wake-up may preempt the running thread (WAKEUP_PREEMPTION).
    pub wakeup_preemption: bool,
    /// CFS: the period within which every runnable entity runs once, before scaling (`sched_latency`) [ns].
    #[schemars(range(min = 100_000, max = 1_000_000_000))]
    pub latency_ns: u64,
    /// CFS: the least an entity runs before a tick preempts it, before scaling (`sched_min_granularity`) [ns].
    #[schemars(range(min = 100_000, max = 1_000_000_000))]
    pub min_granularity_ns: u64,
    /// CFS: how far below the running entity's vruntime a woken one must be to preempt it, before scaling
    /// (`sched_wakeup_granularity`) [ns].
    #[schemars(range(min = 0, max = 1_000_000_000))]
    pub wakeup_granularity_ns: u64,
    /// Move threads between pCPUs (new-idle and periodic balancing, idle pCPUs on wake-up).
    pub balance: bool,
    /// Per VM, by domain name.
    pub domains: IndexMap<String, KvmDomain>,
    /// Pause-loop exiting (`kvm_intel`'s `ple_gap`, `ple_window`, `ple_window_grow`, `ple_window_shrink`,
    /// `ple_window_max`, in cycles); null = off. Off by default here, so that scenarios without spin loops keep
    /// their figures; KVM itself turns it on (gap 128, window 4096, grow 2, shrink 0, max UINT_MAX).
    pub ple: Option<ple::KvmPle>,
    /// What a pause-loop exit does: "none" (the spinner yields its pCPU), "plain" (`kvm_vcpu_on_spin`: a
    /// directed yield to a preempted vCPU of the same VM) or "ipi_aware" (preferring one that owes an IPI).
    pub directed_yield: ple::DirectedYield,
}

impl Default for KvmParams {
    fn default() -> KvmParams {
        KvmParams {
            kernel: Kernel::Eevdf,
            hz: 250,
            halt_poll_ns: 200_000,
            halt_poll_ns_grow: 2,
            halt_poll_ns_grow_start: 10_000,
            halt_poll_ns_shrink: 2,
            base_slice_ns: 700_000,
            tunable_scaling: Scaling::Log,
            run_to_parity: true,
            place_lag: true,
            delay_dequeue: true,
            wakeup_preemption: true,
            latency_ns: 6_000_000,
            min_granularity_ns: 750_000,
            wakeup_granularity_ns: 1_000_000,
            balance: true,
            domains: IndexMap::new(),
            ple: None,
            directed_yield: ple::DirectedYield::Plain,
        }
    }
}

impl Params for KvmParams {
    const SCHEDULER: &'static str = "kvm";
    const DEF: &'static str = "kvm_params";
    const FIXED: &'static [&'static str] = &["kernel", "hz", "tunable_scaling"];

    fn check(&self) -> Result<(), String> {
        for (name, d) in &self.domains {
            if let Some([quota, period]) = d.cpu_max_us {
                if !(1_000..=1_000_000).contains(&period) {
                    return Err(format!("domains.{name}.cpu_max_us: the period must be 1000..=1000000 us"));
                }
                if quota < 1_000 {
                    return Err(format!("domains.{name}.cpu_max_us: the quota must be at least 1000 us"));
                }
            }
        }
        Ok(())
    }
}

impl KvmParams {
    pub fn from_value(v: &Value) -> Result<KvmParams, String> {
        params::from_value(v)
    }

    /// Checks a run-time change of `param` to `value`.
    pub fn check_change(param: &str, value: &Value) -> Result<(), String> {
        params::change(&mut KvmParams::default(), param, value)
    }

    /// The scaling factor of the slice constants on `cpus` CPUs (`get_update_sysctl_factor`).
    pub fn factor(&self, cpus: usize) -> u64 {
        let cpus = cpus.clamp(1, 8) as u64;
        match self.tunable_scaling {
            Scaling::None => 1,
            Scaling::Log => 1 + u64::from(cpus.ilog2()),
            Scaling::Linear => cpus,
        }
    }
}

/// Checks `params` against the scenario's domain names.
pub fn check_params(v: &Value, names: &[&str]) -> Result<(), String> {
    super::common::known_domains(KvmParams::from_value(v)?.domains.keys(), names)
}

/// A schedulable entity: a vCPU thread or a cgroup's entity on one pCPU.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Ent {
    Thread(usize),
    Group(usize),
}

/// An entity's scheduling state (`struct sched_entity`). Virtual times are in weighted nanoseconds.
#[derive(Debug, Clone, Copy, Default)]
struct Se {
    /// Load weight (NICE_0_LOAD = 1024).
    weight: u64,
    vruntime: i64,
    /// EEVDF's virtual deadline.
    deadline: i64,
    /// Lag kept while off the queue (weighted ns): the queue's average vruntime less the entity's.
    vlag: i64,
    /// EEVDF: vruntime up to which the entity keeps the CPU once picked (RUN_TO_PARITY).
    vprot: i64,
    on_rq: bool,
    /// Asleep but kept queued until eligible (DELAY_DEQUEUE).
    delayed: bool,
    /// CFS: service when last picked [ns] (`prev_sum_exec_runtime`).
    picked_at_exec: u64,
    /// Service so far [ns].
    sum_exec: u64,
}

/// A run queue (`struct cfs_rq`): the root one of a pCPU, or a cgroup's on a pCPU.
#[derive(Debug, Clone, Default)]
struct CfsRq {
    /// Queued entities, the running one included.
    queue: Vec<Ent>,
    /// The entity running from this queue.
    curr: Option<Ent>,
    /// CFS's monotonic floor of the queue's vruntimes; EEVDF uses it only as the base of its averages.
    min_vruntime: i64,
}

/// A cgroup: its weight, its bandwidth and its queues.
#[derive(Debug, Clone)]
struct Group {
    name: String,
    /// Load weight (`tg->shares`).
    shares: u64,
    /// The group's entity and run queue on each pCPU.
    se: Vec<Se>,
    rq: Vec<CfsRq>,
    /// `cpu.max`: quota and period [ns]; quota 0 = no limit.
    quota: u64,
    period: u64,
    burst: u64,
    /// Runtime left in this period [ns]; negative is debt paid from the next refill.
    runtime: i64,
    throttled: bool,
    throttled_since: Nanos,
    /// Throttled time so far [ns], and times throttled.
    throttled_ns: u64,
    nr_throttled: u64,
    /// The next period boundary [ns].
    next_refill: Nanos,
}

#[derive(Debug, Clone)]
struct Thread {
    se: Se,
    /// The group (None = root).
    group: Option<usize>,
    cpu: usize,
    /// Runnable as the engine sees it (on a queue, delayed excluded).
    runnable: bool,
    /// When it last stopped running, for the new-idle pull's choice.
    last_ran: Nanos,
    /// Its domain's index, and whether it is a vCPU that halts (the driver domain's threads stand for the host's
    /// I/O threads, which block without polling).
    dom: usize,
    vcpu: bool,
    /// Halt polling: its poll interval (`vcpu->halt_poll_ns`) [ns], when its current halt began, and while it
    /// polls, when the poll began and when it gives up.
    poll_ns: u64,
    halted_at: Option<Nanos>,
    polling: Option<(Nanos, Nanos)>,
    /// Time polled so far [ns], halts that polled, and halts a wake-up ended during the poll.
    polled_ns: u64,
    polls: u64,
    poll_hits: u64,
    /// Its PLE window [cycles], and its pause-loop exits.
    ple_window: u64,
    ple_exits: u64,
}

/// The KVM host's scheduler (see the module header).
#[derive(Clone)]
pub struct Kvm {
    params: KvmParams,
    /// Per pCPU: the root run queue and what runs there.
    root: Vec<CfsRq>,
    running: Vec<Option<usize>>,
    /// When each pCPU's running thread was last accounted [ns].
    exec_start: Vec<Nanos>,
    /// Each pCPU's next periodic balance [ns].
    next_balance: Vec<Nanos>,
    threads: Vec<Thread>,
    groups: Vec<Group>,
    /// Slice constants after scaling [ns].
    base_slice: u64,
    latency: u64,
    min_gran: u64,
    wakeup_gran: u64,
    /// One tick [ns].
    tick: u64,
    /// Periodic balance interval of an idle pCPU [ns] (busy: 16 times).
    balance_interval: u64,
    versions: Versions,
    /// Threads moved between pCPUs by balancing.
    migrations: u64,
    /// Whether the bandwidth period timer has been started.
    period_timer_armed: bool,
    /// Per pCPU: the thread a directed yield made the next buddy there.
    buddy: Vec<Option<usize>>,
    /// Per domain: the index of the vCPU it last yielded to (`kvm->last_boosted_vcpu`).
    last_boosted: Vec<usize>,
    /// Directed yields so far.
    directed_yields: u64,
}

/// A weighted advance of `delta` ns for an entity of `weight` (`calc_delta_fair`).
fn fair(delta: u64, weight: u64) -> i64 {
    (u128::from(delta) * u128::from(NICE_0_LOAD) / u128::from(weight.max(1))) as i64
}

impl Kvm {
    pub fn new(params: &Value, pcpus: usize, domains: &[DomainInfo]) -> Result<Kvm, String> {
        let params = KvmParams::from_value(params)?;
        let names: Vec<&str> = domains.iter().map(|d| d.name.as_str()).collect();
        for name in params.domains.keys() {
            if !names.contains(&name.as_str()) {
                return Err(format!("kvm.domains.{name}: no domain named '{name}'"));
            }
        }
        let factor = params.factor(pcpus);
        let tick = 1_000_000_000 / params.hz.max(1);
        let mut groups: Vec<Group> = Vec::new();
        // Each domain's cgroup (None: the root group).
        let mut group_of: Vec<Option<usize>> = Vec::with_capacity(domains.len());
        for d in domains {
            let spec = params.domains.get(&d.name).cloned().unwrap_or_default();
            let cgroup = spec.cgroup.clone().unwrap_or_else(|| if d.is_driver { "/".into() } else { d.name.clone() });
            let group = if cgroup == "/" {
                None
            } else if let Some(g) = groups.iter().position(|g| g.name == cgroup) {
                Some(g)
            } else {
                let shares = match (spec.cpu_shares, spec.cpu_weight) {
                    (Some(s), _) => s,
                    (None, Some(w)) => (w * NICE_0_LOAD).div_ceil(100).max(MIN_SHARES),
                    (None, None) => (u64::from(d.weight) * NICE_0_LOAD).div_ceil(256).max(MIN_SHARES),
                };
                let (quota, period) = match spec.cpu_max_us {
                    Some([q, p]) => (q * 1000, p * 1000),
                    None if d.cap_pct > 0 => (u64::from(d.cap_pct) * 1_000_000, 100_000_000),
                    None => (0, 100_000_000),
                };
                groups.push(Group {
                    name: cgroup,
                    shares,
                    se: vec![Se::default(); pcpus],
                    rq: vec![CfsRq::default(); pcpus],
                    quota,
                    period,
                    burst: spec.cpu_max_burst_us * 1000,
                    runtime: quota as i64,
                    throttled: false,
                    throttled_since: Nanos::ZERO,
                    throttled_ns: 0,
                    nr_throttled: 0,
                    next_refill: Nanos(period),
                });
                Some(groups.len() - 1)
            };
            group_of.push(group);
        }
        let mut threads = Vec::new();
        for (dom, d) in domains.iter().enumerate() {
            let spec = params.domains.get(&d.name).cloned().unwrap_or_default();
            let nice = spec.nice.clamp(-20, 19);
            let thread_weight = PRIO_TO_WEIGHT[(nice + 20) as usize];
            for k in 0..d.vcpus.len() {
                // A vhost worker runs in the cgroups of the VMM that created it (`vhost_attach_cgroups`, and since
                // Linux 6.4 `vhost_task_create` copying its owner), so a VM's I/O work is charged to the VM.
                let vhost_of = d.backend_for.get(k).copied().flatten().filter(|_| spec.cgroup.is_none());
                let group = vhost_of.map_or(group_of[dom], |g| group_of[g.0]);
                threads.push(Thread {
                    se: Se { weight: thread_weight, ..Se::default() },
                    group,
                    cpu: 0,
                    runnable: false,
                    last_ran: Nanos::ZERO,
                    dom,
                    vcpu: !d.is_driver,
                    poll_ns: 0,
                    halted_at: None,
                    polling: None,
                    polled_ns: 0,
                    polls: 0,
                    poll_hits: 0,
                    ple_window: params.ple.as_ref().map_or(0, |p| p.window),
                    ple_exits: 0,
                });
            }
        }
        Ok(Kvm {
            base_slice: params.base_slice_ns * factor,
            latency: params.latency_ns * factor,
            min_gran: params.min_granularity_ns * factor,
            wakeup_gran: params.wakeup_granularity_ns * factor,
            tick,
            balance_interval: pcpus as u64 * 1_000_000,
            params,
            root: vec![CfsRq::default(); pcpus],
            running: vec![None; pcpus],
            exec_start: vec![Nanos::ZERO; pcpus],
            next_balance: vec![Nanos::ZERO; pcpus],
            threads,
            groups,
            versions: Versions::new(pcpus),
            migrations: 0,
            period_timer_armed: false,
            buddy: vec![None; pcpus],
            last_boosted: vec![0; domains.len()],
            directed_yields: 0,
        })
    }

    /// Time the cgroup of domain thread `v` has spent throttled [ns], and how often (tests, reports).
    pub fn throttled(&self, v: VcpuId) -> Option<(u64, u64)> {
        self.threads[v.0].group.map(|g| (self.groups[g].throttled_ns, self.groups[g].nr_throttled))
    }

    /// Threads moved between pCPUs by balancing so far.
    pub fn migrations(&self) -> u64 {
        self.migrations
    }

    fn se(&self, cpu: usize, e: Ent) -> &Se {
        match e {
            Ent::Thread(t) => &self.threads[t].se,
            Ent::Group(g) => &self.groups[g].se[cpu],
        }
    }

    fn se_mut(&mut self, cpu: usize, e: Ent) -> &mut Se {
        match e {
            Ent::Thread(t) => &mut self.threads[t].se,
            Ent::Group(g) => &mut self.groups[g].se[cpu],
        }
    }

    /// The queue an entity is queued on: its group's on `cpu`, or the root.
    fn parent_of(&self, e: Ent) -> Option<usize> {
        match e {
            Ent::Thread(t) => self.threads[t].group,
            Ent::Group(_) => None,
        }
    }

    fn rq(&self, cpu: usize, group: Option<usize>) -> &CfsRq {
        match group {
            Some(g) => &self.groups[g].rq[cpu],
            None => &self.root[cpu],
        }
    }

    fn rq_mut(&mut self, cpu: usize, group: Option<usize>) -> &mut CfsRq {
        match group {
            Some(g) => &mut self.groups[g].rq[cpu],
            None => &mut self.root[cpu],
        }
    }

    /// The queue's weighted average vruntime (`avg_vruntime`), rounded down; its min_vruntime when empty.
    fn avg_vruntime(&self, cpu: usize, group: Option<usize>) -> i64 {
        let rq = self.rq(cpu, group);
        let base = rq.min_vruntime;
        let (mut sum, mut load) = (0i128, 0i128);
        for &e in &rq.queue {
            let se = self.se(cpu, e);
            sum += i128::from(se.vruntime - base) * i128::from(se.weight);
            load += i128::from(se.weight);
        }
        if load == 0 {
            return base;
        }
        base + sum.div_euclid(load) as i64
    }

    /// Lag >= 0: the entity has received no more than its share (`entity_eligible`, exact as the kernel's).
    fn eligible(&self, cpu: usize, group: Option<usize>, e: Ent) -> bool {
        let rq = self.rq(cpu, group);
        let v = self.se(cpu, e).vruntime;
        let (mut sum, mut load) = (0i128, 0i128);
        for &o in &rq.queue {
            let se = self.se(cpu, o);
            sum += i128::from(se.vruntime - v) * i128::from(se.weight);
            load += i128::from(se.weight);
        }
        load == 0 || sum >= 0
    }

    fn update_min_vruntime(&mut self, cpu: usize, group: Option<usize>) {
        let rq = self.rq(cpu, group);
        let min = rq.queue.iter().map(|&e| self.se(cpu, e).vruntime).min();
        if let Some(m) = min {
            let rq = self.rq_mut(cpu, group);
            rq.min_vruntime = rq.min_vruntime.max(m);
        }
    }

    /// Charges the running thread of `cpu` for the time since it was last charged, at every level, with EEVDF's
    /// deadline refresh and the group's bandwidth (`update_curr`). Returns whether the pCPU should reschedule.
    fn update_curr(&mut self, cpu: usize, now: Nanos, ctx: &mut Ctx) -> bool {
        let Some(t) = self.running[cpu] else { return false };
        let delta = now.saturating_sub(self.exec_start[cpu]).0;
        self.exec_start[cpu] = now;
        let mut resched = false;
        let mut e = Ent::Thread(t);
        loop {
            let parent = self.parent_of(e);
            let on_rq = self.se(cpu, e).on_rq && self.rq(cpu, parent).curr == Some(e);
            if on_rq {
                let slice = self.base_slice;
                let kernel = self.params.kernel;
                let nr = self.rq(cpu, parent).queue.len();
                let se = self.se_mut(cpu, e);
                se.sum_exec += delta;
                se.vruntime += fair(delta, se.weight);
                if kernel == Kernel::Eevdf && se.vruntime >= se.deadline {
                    se.deadline = se.vruntime + fair(slice, se.weight);
                    resched |= nr > 1;
                }
                self.update_min_vruntime(cpu, parent);
            }
            match parent {
                Some(g) => e = Ent::Group(g),
                None => break,
            }
        }
        if let Some(g) = self.threads[t].group {
            if self.groups[g].quota > 0 {
                self.groups[g].runtime -= delta as i64;
                if self.groups[g].runtime <= 0 && !self.groups[g].throttled {
                    self.throttle(g, now, ctx);
                    resched = true;
                }
            }
        }
        resched
    }

    /// Takes the group off every pCPU's root queue until its next refill (`throttle_cfs_rq`).
    fn throttle(&mut self, g: usize, now: Nanos, ctx: &mut Ctx) {
        let grp = &mut self.groups[g];
        grp.throttled = true;
        grp.throttled_since = now;
        grp.nr_throttled += 1;
        let name = grp.name.clone();
        for cpu in 0..self.root.len() {
            if self.groups[g].se[cpu].on_rq {
                self.dequeue_entity(cpu, None, Ent::Group(g), false);
                self.versions.touch(PcpuId(cpu));
            }
            if self.running[cpu].is_some_and(|t| self.threads[t].group == Some(g)) {
                ctx.resched(PcpuId(cpu));
            }
        }
        ctx.note(PcpuId(0), |w| write!(w, "cgroup {name} throttled: its cpu.max quota is used up"));
    }

    /// Refills every group whose period ended and unthrottles those with runtime again
    /// (`sched_cfs_period_timer`, `distribute_cfs_runtime`).
    fn refill(&mut self, now: Nanos, ctx: &mut Ctx) {
        for g in 0..self.groups.len() {
            if self.groups[g].quota == 0 {
                continue;
            }
            while self.groups[g].next_refill <= now {
                let grp = &mut self.groups[g];
                let cap = (grp.quota + grp.burst) as i64;
                grp.runtime = (grp.runtime + grp.quota as i64).min(cap);
                grp.next_refill += Nanos(grp.period);
            }
            if self.groups[g].throttled && self.groups[g].runtime > 0 {
                let grp = &mut self.groups[g];
                grp.throttled = false;
                grp.throttled_ns += now.saturating_sub(grp.throttled_since).0;
                let name = grp.name.clone();
                for cpu in 0..self.root.len() {
                    if !self.groups[g].rq[cpu].queue.is_empty() {
                        self.enqueue_entity(cpu, None, Ent::Group(g), false);
                        self.versions.touch(PcpuId(cpu));
                        self.check_preempt(cpu, Ent::Group(g), ctx);
                    }
                }
                ctx.note(PcpuId(0), |w| write!(w, "cgroup {name} unthrottled: a new period refilled its quota"));
            }
        }
        let next = self.groups.iter().filter(|g| g.quota > 0).map(|g| g.next_refill).min();
        if let Some(at) = next {
            ctx.timer_at(at);
        }
    }

    /// Places an entity that joins a queue (`place_entity`) and queues it.
    fn enqueue_entity(&mut self, cpu: usize, group: Option<usize>, e: Ent, initial: bool) {
        let avg = self.avg_vruntime(cpu, group);
        let (slice, kernel, place_lag) = (self.base_slice, self.params.kernel, self.params.place_lag);
        let load: u64 = self.rq(cpu, group).queue.iter().map(|&o| self.se(cpu, o).weight).sum();
        let min_v = self.rq(cpu, group).min_vruntime;
        let latency = self.latency;
        let se = self.se_mut(cpu, e);
        match kernel {
            Kernel::Eevdf => {
                let mut lag = if place_lag { se.vlag } else { 0 };
                if load > 0 && lag != 0 {
                    // The lag is inflated so that it survives the entity's own weight joining the average.
                    lag = (i128::from(lag) * i128::from(load + se.weight) / i128::from(load)) as i64;
                }
                se.vruntime = avg - lag;
                let mut vslice = fair(slice, se.weight);
                if initial {
                    // PLACE_DEADLINE_INITIAL: a new entity starts with half a request.
                    vslice /= 2;
                }
                se.deadline = se.vruntime + vslice;
            }
            Kernel::Cfs => {
                // START_DEBIT for a new entity; GENTLE_FAIR_SLEEPERS: a sleeper is credited half a latency.
                let v = if initial { min_v + fair(latency, se.weight) } else { min_v - (latency / 2) as i64 };
                se.vruntime = if initial { v } else { se.vruntime.max(v) };
            }
        }
        se.on_rq = true;
        se.delayed = false;
        let rq = self.rq_mut(cpu, group);
        if !rq.queue.contains(&e) {
            rq.queue.push(e);
        }
    }

    /// Takes an entity off a queue, keeping its lag (`dequeue_entity`, `update_entity_lag`).
    fn dequeue_entity(&mut self, cpu: usize, group: Option<usize>, e: Ent, zero_positive: bool) {
        let avg = self.avg_vruntime(cpu, group);
        let tick = self.tick;
        let slice = self.base_slice;
        let se = self.se_mut(cpu, e);
        let limit = fair((2 * slice).max(tick), se.weight);
        let mut lag = (avg - se.vruntime).clamp(-limit, limit);
        if zero_positive && lag > 0 {
            lag = 0;
        }
        se.vlag = lag;
        se.on_rq = false;
        se.delayed = false;
        let rq = self.rq_mut(cpu, group);
        rq.queue.retain(|&x| x != e);
        if rq.curr == Some(e) {
            rq.curr = None;
        }
        self.update_min_vruntime(cpu, group);
    }

    /// Sets a group entity's weight on `cpu` from its threads' weight there against the group's on all pCPUs
    /// (`calc_group_shares`, on runnable weight), keeping its lag (`reweight_entity`).
    fn update_group_shares(&mut self, g: usize) {
        let pcpus = self.root.len();
        let mut local = vec![0u64; pcpus];
        for t in &self.threads {
            if t.group == Some(g) && t.se.on_rq && !t.se.delayed {
                local[t.cpu] += t.se.weight;
            }
        }
        let total: u64 = local.iter().sum();
        let shares = self.groups[g].shares;
        for (cpu, &load) in local.iter().enumerate() {
            let w =
                if total == 0 { shares } else { (u128::from(shares) * u128::from(load) / u128::from(total)) as u64 }
                    .clamp(MIN_SHARES, shares.max(MIN_SHARES));
            self.reweight(cpu, Ent::Group(g), w);
        }
    }

    fn reweight(&mut self, cpu: usize, e: Ent, w: u64) {
        let old = self.se(cpu, e).weight;
        if old == w {
            return;
        }
        let se = *self.se(cpu, e);
        if se.on_rq && old > 0 {
            let avg = self.avg_vruntime(cpu, None);
            let lag = i128::from(avg - se.vruntime) * i128::from(old) / i128::from(w);
            let rel_deadline = i128::from(se.deadline - se.vruntime) * i128::from(old) / i128::from(w);
            let s = self.se_mut(cpu, e);
            s.weight = w;
            s.vruntime = avg - lag as i64;
            s.deadline = s.vruntime + rel_deadline as i64;
        } else {
            self.se_mut(cpu, e).weight = w;
        }
    }

    /// The entity this queue would run now (`pick_eevdf`, or CFS's leftmost), protecting the running one when
    /// `protect` and RUN_TO_PARITY say so.
    fn pick_in(&self, cpu: usize, group: Option<usize>, protect: bool) -> Option<Ent> {
        let rq = self.rq(cpu, group);
        if rq.queue.is_empty() {
            return None;
        }
        match self.params.kernel {
            Kernel::Cfs => rq.queue.iter().copied().min_by_key(|&e| (self.se(cpu, e).vruntime, self.order(e))),
            Kernel::Eevdf => {
                let curr = rq.curr.filter(|&c| self.se(cpu, c).on_rq && self.eligible(cpu, group, c));
                if let Some(c) = curr {
                    let s = self.se(cpu, c);
                    if protect && self.params.run_to_parity && s.vruntime < s.vprot {
                        return Some(c);
                    }
                }
                let best = rq
                    .queue
                    .iter()
                    .copied()
                    .filter(|&e| self.eligible(cpu, group, e))
                    .min_by_key(|&e| (self.se(cpu, e).deadline, self.order(e)));
                // Nothing eligible cannot happen with exact averages; the least vruntime is the kernel's fallback.
                best.or_else(|| rq.queue.iter().copied().min_by_key(|&e| (self.se(cpu, e).vruntime, self.order(e))))
            }
        }
    }

    /// A fixed order among equals, so picks do not depend on queue insertion history.
    fn order(&self, e: Ent) -> (usize, usize) {
        match e {
            Ent::Group(g) => (0, g),
            Ent::Thread(t) => (1, t),
        }
    }

    /// The thread halt-polling on `cpu`, if any.
    fn poller(&self, cpu: usize) -> Option<usize> {
        self.running[cpu].filter(|&t| self.threads[t].polling.is_some())
    }

    /// Ends thread `t`'s poll at `now`: a wake-up ended it (`hit`), or it gives up and blocks.
    fn end_poll(&mut self, t: usize, now: Nanos, hit: bool) {
        if let Some((since, until)) = self.threads[t].polling.take() {
            self.threads[t].polled_ns += now.min(until).saturating_sub(since).0;
            self.threads[t].poll_hits += u64::from(hit);
        }
    }

    /// A wake-up ended thread `t`'s poll at `now`, and with it its halt.
    fn poll_woken(&mut self, t: usize, now: Nanos) {
        self.end_poll(t, now, true);
        self.halt_ended(t, now);
    }

    /// Whether thread `t`'s cgroup is throttled.
    fn group_throttled(&self, t: usize) -> bool {
        self.threads[t].group.is_some_and(|g| self.groups[g].throttled)
    }

    /// Thread `t`'s halt ended at `now`: its poll interval is kept when the halt ended within it, shrunk after a
    /// halt longer than `halt_poll_ns`, grown after a shorter one (`kvm_vcpu_halt`, `grow_halt_poll_ns`,
    /// `shrink_halt_poll_ns`).
    fn halt_ended(&mut self, t: usize, now: Nanos) {
        let Some(at) = self.threads[t].halted_at.take() else { return };
        let halt_ns = now.saturating_sub(at).0;
        let p = &self.params;
        let (max, grow, start, shrink) =
            (p.halt_poll_ns, p.halt_poll_ns_grow, p.halt_poll_ns_grow_start, p.halt_poll_ns_shrink);
        let th = &mut self.threads[t];
        if max == 0 {
            th.poll_ns = 0;
        } else if halt_ns <= th.poll_ns {
        } else if th.poll_ns > 0 && halt_ns > max {
            th.poll_ns = th.poll_ns.checked_div(shrink).unwrap_or(0);
        } else if th.poll_ns < max && halt_ns < max && grow > 0 {
            th.poll_ns = th.poll_ns.saturating_mul(grow).max(start).min(max);
        }
    }

    /// Walks down from `cpu`'s root to a thread, dequeuing delayed sleepers it meets (`pick_task_fair`).
    fn pick_thread(&mut self, cpu: usize) -> Option<usize> {
        if let Some(b) = self.take_buddy(cpu) {
            return Some(b);
        }
        // Each pass removes a delayed entity or an empty group, so this ends.
        for _ in 0..=4 * (self.threads.len() + self.groups.len()) + 4 {
            let top = self.pick_in(cpu, None, true)?;
            let found = match top {
                Ent::Thread(t) => Ok(t),
                Ent::Group(g) => match self.pick_in(cpu, Some(g), true) {
                    Some(Ent::Thread(t)) => Ok(t),
                    _ => Err(Some(g)),
                },
            };
            match found {
                Ok(t) if self.threads[t].se.delayed => {
                    let group = self.threads[t].group;
                    self.dequeue_entity(cpu, group, Ent::Thread(t), true);
                    if let Some(g) = group {
                        if self.groups[g].rq[cpu].queue.is_empty() && self.groups[g].se[cpu].on_rq {
                            self.dequeue_entity(cpu, None, Ent::Group(g), false);
                        }
                        self.update_group_shares(g);
                    }
                }
                Ok(t) => return Some(t),
                Err(Some(g)) => self.dequeue_entity(cpu, None, Ent::Group(g), false),
                Err(None) => return None,
            }
        }
        None
    }

    /// Makes `t` the running entity at every level of `cpu` (`set_next_entity`).
    fn set_next(&mut self, cpu: usize, t: usize) {
        let mut e = Ent::Thread(t);
        loop {
            let parent = self.parent_of(e);
            let changed = self.rq(cpu, parent).curr != Some(e);
            self.rq_mut(cpu, parent).curr = Some(e);
            if changed {
                let s = self.se_mut(cpu, e);
                s.picked_at_exec = s.sum_exec;
                // Protected up to its deadline (equal requests: `set_protect_slice`).
                s.vprot = s.deadline;
            }
            match parent {
                Some(g) => e = Ent::Group(g),
                None => break,
            }
        }
    }

    /// The pCPU a waking thread runs on (`select_task_rq_fair`, simplified as the module header says).
    fn select_cpu(&self, t: usize, ctx: &Ctx) -> usize {
        let prev = self.threads[t].cpu;
        let idle = |c: usize| ctx.host.running[c].is_none() && self.root[c].queue.is_empty();
        if !self.params.balance || idle(prev) {
            return prev;
        }
        let n = self.root.len();
        (1..n).map(|i| (prev + i) % n).find(|&c| idle(c)).unwrap_or(prev)
    }

    /// Queues a runnable thread on `cpu` with its group's entity, as a wake-up does (`enqueue_task_fair`).
    fn enqueue_thread(&mut self, t: usize, cpu: usize, initial: bool) {
        self.threads[t].cpu = cpu;
        self.threads[t].runnable = true;
        let group = self.threads[t].group;
        if self.threads[t].se.delayed && self.rq(cpu, group).queue.contains(&Ent::Thread(t)) {
            // Woken while still queued (ENQUEUE_DELAYED): kept where it is unless it has become eligible.
            self.threads[t].se.delayed = false;
            if self.eligible(cpu, group, Ent::Thread(t)) {
                self.threads[t].se.vlag = 0;
                let avg = self.avg_vruntime(cpu, group);
                let s = &mut self.threads[t].se;
                s.vruntime = avg;
                s.deadline = avg + fair(self.base_slice, s.weight);
            }
        } else {
            self.enqueue_entity(cpu, group, Ent::Thread(t), initial);
        }
        if let Some(g) = group {
            self.update_group_shares(g);
            if !self.groups[g].se[cpu].on_rq && !self.groups[g].throttled {
                self.enqueue_entity(cpu, None, Ent::Group(g), false);
            }
        }
        self.versions.touch(PcpuId(cpu));
    }

    /// Takes a thread off its queue (`dequeue_task_fair`): one that went to sleep owing time stays queued,
    /// delayed; one that migrates always leaves.
    fn dequeue_thread(&mut self, t: usize, sleeping: bool) {
        let cpu = self.threads[t].cpu;
        let group = self.threads[t].group;
        self.threads[t].runnable = false;
        if !self.threads[t].se.on_rq {
            return;
        }
        let delay = sleeping
            && self.params.kernel == Kernel::Eevdf
            && self.params.delay_dequeue
            && !self.eligible(cpu, group, Ent::Thread(t));
        if delay {
            self.threads[t].se.delayed = true;
            if self.rq(cpu, group).curr == Some(Ent::Thread(t)) {
                self.rq_mut(cpu, group).curr = None;
            }
        } else {
            self.dequeue_entity(cpu, group, Ent::Thread(t), false);
            if let Some(g) = group {
                if self.groups[g].rq[cpu].queue.is_empty() && self.groups[g].se[cpu].on_rq {
                    self.dequeue_entity(cpu, None, Ent::Group(g), false);
                }
            }
        }
        if let Some(g) = group {
            self.update_group_shares(g);
        }
        self.versions.touch(PcpuId(cpu));
    }

    /// Whether entity `e`, just queued on `cpu`, preempts what runs there (`check_preempt_wakeup_fair`), at the
    /// level where the two meet.
    fn check_preempt(&mut self, cpu: usize, e: Ent, ctx: &mut Ctx) {
        let Some(cur) = self.running[cpu] else {
            ctx.resched(PcpuId(cpu));
            return;
        };
        if !self.params.wakeup_preemption {
            return;
        }
        // The two entities that share a queue: the woken thread's group entity (or itself) and the running one's.
        let (mut a, mut b) = (e, Ent::Thread(cur));
        if self.parent_of(a) != self.parent_of(b) {
            if let Some(g) = self.parent_of(a) {
                a = Ent::Group(g);
            }
            if let Some(g) = self.parent_of(b) {
                b = Ent::Group(g);
            }
        }
        let level = self.parent_of(a);
        if a == b || level != self.parent_of(b) || !self.se(cpu, a).on_rq {
            return;
        }
        let preempt = match self.params.kernel {
            Kernel::Eevdf => self.pick_in(cpu, level, true) == Some(a),
            Kernel::Cfs => {
                let gran = fair(self.wakeup_gran, self.se(cpu, a).weight);
                self.se(cpu, b).vruntime - self.se(cpu, a).vruntime > gran
            }
        };
        if preempt {
            ctx.resched(PcpuId(cpu));
        }
    }

    /// CFS's tick preemption (`check_preempt_tick`) at every level of `cpu`.
    fn cfs_tick_preempt(&self, cpu: usize) -> bool {
        let Some(t) = self.running[cpu] else { return false };
        let mut e = Ent::Thread(t);
        loop {
            let parent = self.parent_of(e);
            let rq = self.rq(cpu, parent);
            let nr = rq.queue.len() as u64;
            if nr > 1 && rq.curr == Some(e) {
                let load: u64 = rq.queue.iter().map(|&o| self.se(cpu, o).weight).sum();
                let period = if nr > self.latency / self.min_gran.max(1) { nr * self.min_gran } else { self.latency };
                let s = self.se(cpu, e);
                let ideal = (u128::from(period) * u128::from(s.weight) / u128::from(load.max(1))) as u64;
                let ran = s.sum_exec - s.picked_at_exec;
                if ran > ideal {
                    return true;
                }
                if ran >= self.min_gran {
                    let left = rq.queue.iter().copied().min_by_key(|&o| self.se(cpu, o).vruntime);
                    if let Some(l) = left {
                        if s.vruntime - self.se(cpu, l).vruntime > ideal as i64 {
                            return true;
                        }
                    }
                }
            }
            match parent {
                Some(g) => e = Ent::Group(g),
                None => return false,
            }
        }
    }

    /// Runnable threads queued on a pCPU, the running one included, delayed ones not.
    fn nr_running(&self, cpu: usize) -> usize {
        self.threads.iter().filter(|t| t.cpu == cpu && t.runnable).count()
    }

    /// A runnable thread's load as the balancer weighs it: its share of its group's weight (the group's shares
    /// times its weight over its group's runnable threads' weight), its own weight in the root group
    /// (`task_h_load`, on runnable weight rather than PELT averages).
    fn h_load(&self, t: usize) -> u64 {
        let th = &self.threads[t];
        match th.group {
            None => th.se.weight,
            Some(g) => {
                let total: u64 =
                    self.threads.iter().filter(|o| o.group == Some(g) && o.runnable).map(|o| o.se.weight).sum();
                (u128::from(self.groups[g].shares) * u128::from(th.se.weight) / u128::from(total.max(1))) as u64
            }
        }
    }

    /// A pCPU's load: its runnable threads' [`Kvm::h_load`].
    fn cpu_load(&self, cpu: usize) -> u64 {
        (0..self.threads.len())
            .filter(|&t| self.threads[t].cpu == cpu && self.threads[t].runnable)
            .map(|t| self.h_load(t))
            .sum()
    }

    /// Whether thread `t` may move: queued, not running, its group not throttled.
    fn movable(&self, t: usize, src: usize) -> bool {
        let th = &self.threads[t];
        th.cpu == src
            && th.runnable
            && self.running[src] != Some(t)
            && !th.group.is_some_and(|g| self.groups[g].throttled)
    }

    /// Moves waiting thread `t` from `src` to `cpu`.
    fn migrate(&mut self, t: usize, src: usize, cpu: usize, ctx: &mut Ctx) {
        self.dequeue_thread(t, false);
        self.enqueue_thread(t, cpu, false);
        self.migrations += 1;
        let name = &ctx.host.vcpu_name[t];
        ctx.note(PcpuId(cpu), |w| write!(w, "balance: {name} moves from pCPU{src} to pCPU{cpu}"));
    }

    /// New-idle balance: a pCPU with nothing to run takes the waiting thread that waited longest from the pCPU with
    /// the most runnable threads, when that one has two or more (`detach_tasks` takes from the cold end).
    fn pull_idle(&mut self, cpu: usize, ctx: &mut Ctx) -> bool {
        let busiest = (0..self.root.len()).filter(|&c| c != cpu).max_by_key(|&c| (self.nr_running(c), usize::MAX - c));
        let Some(src) = busiest else { return false };
        if self.nr_running(src) < 2 {
            return false;
        }
        let cand =
            (0..self.threads.len()).filter(|&t| self.movable(t, src)).min_by_key(|&t| (self.threads[t].last_ran, t));
        let Some(t) = cand else { return false };
        self.migrate(t, src, cpu, ctx);
        true
    }

    /// Periodic balance: when the busiest pCPU's load exceeds this one's by more than the domain's
    /// `imbalance_pct` (117%), move the coldest waiting thread whose load is at most half the difference
    /// (`calculate_imbalance` aims at the average; `detach_tasks` skips a task heavier than the imbalance).
    fn pull_load(&mut self, cpu: usize, ctx: &mut Ctx) -> bool {
        let mine = self.cpu_load(cpu);
        let busiest = (0..self.root.len()).filter(|&c| c != cpu).max_by_key(|&c| (self.cpu_load(c), usize::MAX - c));
        let Some(src) = busiest else { return false };
        let theirs = self.cpu_load(src);
        if theirs * 100 <= mine * 117 || self.nr_running(src) < 2 {
            return false;
        }
        let imbalance = (theirs - mine) / 2;
        let cand = (0..self.threads.len())
            .filter(|&t| self.movable(t, src) && self.h_load(t) <= imbalance)
            .min_by_key(|&t| (self.threads[t].last_ran, t));
        let Some(t) = cand else { return false };
        self.migrate(t, src, cpu, ctx);
        true
    }
}

impl Policy for Kvm {
    fn timers(&self) -> Timers {
        Timers { tick: Some(Nanos(self.tick)), tick_stops_idle: true, ..Timers::default() }
    }

    fn init_vcpu(&mut self, v: VcpuId, ctx: &mut Ctx) -> PcpuId {
        let p = v.0 % ctx.host.pcpus.max(1);
        self.threads[v.0].cpu = p;
        PcpuId(p)
    }

    fn wake(&mut self, v: VcpuId, cause: WakeCause, ctx: &mut Ctx) {
        let t = v.0;
        if self.threads[t].runnable {
            return;
        }
        self.halt_ended(t, ctx.now);
        if !self.period_timer_armed {
            // The groups' period timers run on one grid from boot (`start_cfs_bandwidth` forwards by periods).
            self.period_timer_armed = true;
            if let Some(at) = self.groups.iter().filter(|g| g.quota > 0).map(|g| g.next_refill).min() {
                ctx.timer_at(at);
            }
        }
        // A vCPU that blocked and woke again before its pCPU rescheduled is still on that pCPU: it stays there
        // (the engine runs a vCPU on one pCPU at a time).
        let cpu = match ctx.host.running.iter().position(|r| *r == Some(v)) {
            Some(p) => p,
            None => self.select_cpu(t, ctx),
        };
        let from = self.threads[t].cpu;
        if cpu != from && self.threads[t].se.delayed {
            // A delayed sleeper woken elsewhere leaves its old queue first, with its (negative) lag.
            let group = self.threads[t].group;
            self.dequeue_entity(from, group, Ent::Thread(t), false);
            if let Some(g) = group {
                if self.groups[g].rq[from].queue.is_empty() && self.groups[g].se[from].on_rq {
                    self.dequeue_entity(from, None, Ent::Group(g), false);
                }
                self.update_group_shares(g);
            }
        }
        self.update_curr(cpu, ctx.now, ctx);
        self.enqueue_thread(t, cpu, cause == WakeCause::Boot);
        if !self.group_throttled(t) {
            self.check_preempt(cpu, Ent::Thread(t), ctx);
        }
        // A poll lasts only while its thread is the only runnable one (`single_task_running`).
        if self.poller(cpu).is_some() {
            ctx.resched(PcpuId(cpu));
        }
    }

    fn sleep(&mut self, v: VcpuId, ctx: &mut Ctx) {
        let t = v.0;
        let now = ctx.now;
        let cpu = self.threads[t].cpu;
        let on_cpu = self.running[cpu] == Some(t);
        if on_cpu {
            self.update_curr(cpu, now, ctx);
        }
        if self.threads[t].polling.is_some() {
            // Woken during its last poll without the engine saying so: that halt ended then.
            self.poll_woken(t, now);
        }
        if self.params.halt_poll_ns > 0 && self.threads[t].vcpu {
            let max = self.params.halt_poll_ns;
            let throttled = self.group_throttled(t);
            let th = &mut self.threads[t];
            th.halted_at = Some(now);
            th.poll_ns = th.poll_ns.min(max);
            if on_cpu && th.poll_ns > 0 && !throttled && self.nr_running(cpu) == 1 {
                // It keeps its pCPU, queued and running, until a wake-up, another thread or the interval's end.
                let th = &mut self.threads[t];
                th.polling = Some((now, now + Nanos(th.poll_ns)));
                th.polls += 1;
                return;
            }
        }
        self.dequeue_thread(t, true);
    }

    fn woke_on_pcpu(&mut self, v: VcpuId, ctx: &mut Ctx) {
        if self.threads[v.0].polling.is_some() {
            self.poll_woken(v.0, ctx.now);
            ctx.note(PcpuId(self.threads[v.0].cpu), |w| {
                write!(w, "{} woken while halt-polling: it runs on without a switch", ctx.host.vcpu_name[v.0])
            });
        }
    }

    fn do_schedule(&mut self, p: PcpuId, cur: Option<VcpuId>, cur_runnable: bool, ctx: &mut Ctx) -> Pick {
        let cpu = p.0;
        let now = ctx.now;
        self.update_curr(cpu, now, ctx);
        if let Some(c) = cur.filter(|c| self.threads[c.0].polling.is_some()) {
            let (t, until) = (c.0, self.threads[c.0].polling.map_or(now, |p| p.1));
            if cur_runnable {
                self.poll_woken(t, now);
            } else if now < until && !self.group_throttled(t) && self.nr_running(cpu) == 1 {
                let reason = if ctx.explain { format!("{} halt-polls on", ctx.name(c)) } else { String::new() };
                return Pick { next: Some(c), slice: until - now, reason };
            } else {
                self.end_poll(t, now, false);
            }
        }
        if let Some(c) = cur {
            self.threads[c.0].last_ran = now;
            if !cur_runnable && self.threads[c.0].runnable {
                self.dequeue_thread(c.0, true);
            }
        }
        // put_prev_entity: the running entity is no longer any queue's current one.
        if let Some(t) = self.running[cpu].take() {
            let group = self.threads[t].group;
            if self.rq(cpu, group).curr == Some(Ent::Thread(t)) {
                self.rq_mut(cpu, group).curr = None;
            }
            if let Some(g) = group {
                self.root[cpu].curr = self.root[cpu].curr.filter(|&e| e != Ent::Group(g));
            } else {
                self.root[cpu].curr = None;
            }
        }
        let mut next = self.pick_thread(cpu);
        let mut how = "earliest eligible deadline";
        if self.params.kernel == Kernel::Cfs {
            how = "least vruntime";
        }
        if next.is_none() && self.params.balance && self.pull_idle(cpu, ctx) {
            next = self.pick_thread(cpu);
            how = "pulled from a busier pCPU (new-idle balance)";
        }
        self.versions.touch(p);
        let Some(t) = next else {
            let reason = if ctx.explain { format!("pCPU{cpu} goes idle") } else { String::new() };
            return Pick { next: None, slice: Nanos::ZERO, reason };
        };
        self.set_next(cpu, t);
        if cur != Some(VcpuId(t)) {
            self.ple_sched_in(t);
        }
        self.running[cpu] = Some(t);
        self.exec_start[cpu] = now;
        let reason = if ctx.explain {
            let s = &self.threads[t].se;
            format!("runs {}: {how} (vruntime {} us, lag {} us)", ctx.name(VcpuId(t)), s.vruntime / 1000, {
                let avg = self.avg_vruntime(cpu, self.threads[t].group);
                (avg - s.vruntime) / 1000
            })
        } else {
            String::new()
        };
        // No slice timer (HRTICK is off): the tick and wake-ups preempt. A long backstop keeps the engine's
        // slice bookkeeping meaningful.
        Pick { next: Some(VcpuId(t)), slice: Nanos::from_ms(1000), reason }
    }

    fn tick(&mut self, p: PcpuId, ctx: &mut Ctx) {
        let cpu = p.0;
        let now = ctx.now;
        let mut resched = self.update_curr(cpu, now, ctx);
        for g in 0..self.groups.len() {
            if self.groups[g].rq[cpu].queue.len() + usize::from(self.groups[g].se[cpu].on_rq) > 0 {
                self.update_group_shares(g);
            }
        }
        // EEVDF reschedules when the running entity reaches its deadline (`update_curr` said so above); CFS when it
        // has had its share of the latency period.
        if self.params.kernel == Kernel::Cfs {
            resched |= self.cfs_tick_preempt(cpu);
        }
        if self.params.balance && now >= self.next_balance[cpu] {
            let busy = self.running[cpu].is_some();
            let interval = self.balance_interval * if busy { 16 } else { 1 };
            self.next_balance[cpu] = now + Nanos(interval);
            if self.pull_load(cpu, ctx) && !busy {
                resched = true;
            }
        }
        // A thread balanced onto this pCPU ends a poll here.
        resched |= self.poller(cpu).is_some() && self.nr_running(cpu) > 1;
        if resched {
            ctx.resched(p);
        }
    }

    fn timer(&mut self, ctx: &mut Ctx) {
        self.refill(ctx.now, ctx);
    }

    fn set_param(&mut self, param: &str, value: &Value) -> Result<(), String> {
        let mut p = self.params.clone();
        params::change(&mut p, param, value)?;
        let factor = p.factor(self.root.len());
        self.base_slice = p.base_slice_ns * factor;
        self.latency = p.latency_ns * factor;
        self.min_gran = p.min_granularity_ns * factor;
        self.wakeup_gran = p.wakeup_granularity_ns * factor;
        for (name, spec) in &p.domains {
            if let Some(g) = self.groups.iter().position(|g| &g.name == name) {
                let grp = &mut self.groups[g];
                if let Some(s) = spec.cpu_shares.or(spec.cpu_weight.map(|w| (w * NICE_0_LOAD).div_ceil(100))) {
                    grp.shares = s.max(MIN_SHARES);
                }
                if let Some([q, per]) = spec.cpu_max_us {
                    grp.quota = q * 1000;
                    grp.period = per * 1000;
                }
                grp.burst = spec.cpu_max_burst_us * 1000;
            }
        }
        self.params = p;
        Ok(())
    }

    fn domain_times(&self, dom: usize, now: Nanos) -> Option<DomainTimes> {
        let mut out = DomainTimes { polls: self.params.halt_poll_ns > 0, ..DomainTimes::default() };
        let mut group = None;
        for th in self.threads.iter().filter(|th| th.dom == dom) {
            group = group.or(th.group);
            out.polls &= th.vcpu;
            let open = th.polling.map_or(0, |(since, until)| now.min(until).saturating_sub(since).0);
            out.halt_poll_ns += th.polled_ns + open;
            out.halt_attempted_poll += th.polls;
            out.halt_successful_poll += th.poll_hits;
        }
        if let Some(g) = group.map(|g| &self.groups[g]).filter(|g| g.quota > 0) {
            out.limited = true;
            out.nr_throttled = g.nr_throttled;
            out.throttled_ns = g.throttled_ns + if g.throttled { now.saturating_sub(g.throttled_since).0 } else { 0 };
        }
        Some(out)
    }

    fn vcpu_sched(&self, v: VcpuId) -> VcpuSched {
        let t = &self.threads[v.0];
        if t.group.is_some_and(|g| self.groups[g].throttled) {
            return VcpuSched { pri: Pri::new(PriClass::Parked, "THROTTLED"), credit: None };
        }
        let label = if t.se.delayed { "DELAYED" } else { "FAIR" };
        VcpuSched { pri: Pri::new(PriClass::Other, label), credit: Some(t.se.vlag / 1000) }
    }

    fn runqueue(&self, p: PcpuId) -> Vec<VcpuId> {
        let cpu = p.0;
        let mut q: Vec<usize> = (0..self.threads.len())
            .filter(|&t| self.threads[t].cpu == cpu && self.threads[t].runnable && self.running[cpu] != Some(t))
            .collect();
        q.sort_by_key(|&t| (self.threads[t].se.deadline, t));
        q.into_iter().map(VcpuId).collect()
    }

    fn runqueue_versions(&self) -> &[u64] {
        self.versions.all()
    }

    fn ple_window(&self, v: VcpuId) -> Option<u64> {
        self.ple_window_of(v.0)
    }

    fn pause_exit(&mut self, v: VcpuId, owes_ipi: &[bool], ctx: &mut Ctx) {
        self.on_pause_exit(v, owes_ipi, ctx);
    }

    fn share_rule(&self) -> ShareBasis {
        // Each VM is a cgroup whose weight is split among its threads: weights count per domain.
        ShareBasis::DomainWeight
    }
}

/// The KVM host's registry row.
pub const ROW: Scheduler = Scheduler {
    name: "kvm",
    caps: Caps::PLAIN,
    build: |s| registry::boxed(Kvm::new(s.params, s.pcpus, s.domains)),
    check_param: KvmParams::check_change,
    check_scenario: |sc, i, p| registry::check_named(sc, i, p, check_params),
    params: params::declared::<KvmParams>(),
};

crate::size::no_heap!(Se, Ent, Thread);
crate::size::heap_size!(CfsRq { queue });

impl crate::size::HeapSize for Group {
    fn heap_size(&self) -> usize {
        self.name.heap_size() + self.se.heap_size() + self.rq.heap_size()
    }
}

crate::size::heap_size!(Kvm {
    root,
    running,
    exec_start,
    next_balance,
    threads,
    groups,
    versions,
    buddy,
    last_boosted
});

pub mod ple;

#[cfg(test)]
mod tests;
