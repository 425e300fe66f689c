//! Credit's parameters: their declaration ([`CreditSpec`], with a preset per Xen release), how a release weighs
//! domains in the accounting ([`ShareRule`]), and the tunables they resolve to ([`CreditParams`]).

use super::*;

/// How CPU use is charged in credits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
#[schemars(inline)]
pub enum Accounting {
    // Elapsed time at every schedule and tick, 10 credits per ms (4.x; also 000's modified 3.2).
    Exact,
    // 100 credits taken from whichever vCPU is running when a tick fires (stock 3.0/3.2 sampling).
    Tick,
}

/// A Xen release whose Credit behaviour a preset reproduces.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, JsonSchema)]
#[schemars(inline)]
pub enum CreditVersion {
    #[serde(rename = "3.0.3")]
    V3_0_3,
    #[serde(rename = "3.2")]
    V3_2,
    #[serde(rename = "4.x")]
    V4,
}

/// Driver-domain-aware scheduling (paper 000, 4.2).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
#[schemars(inline)]
pub struct IddSpec {
    /// The driver domain inherits the priority of a guest that sends it a request (Algorithm 2), until
    /// descheduled.
    pub priority_inheritance: bool,
    /// A vCPU preempted by the driver domain goes back to the head of its priority list, not the tail.
    pub keep_on_runq: bool,
}

/// Xen's Credit scheduler (credit1) with paper 000's task-aware scheduling and driver-domain extensions and
/// paper 002's xBalloon.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
#[serde(default, deny_unknown_fields)]
pub struct CreditSpec {
    /// Preset for a Xen release: 3.0.3 (no BOOST, tick-sampled accounting), 3.2 (BOOST, tick-sampled), 4.x (exact
    /// accounting, 1 ms ratelimit, credit halved on deactivation). Other keys override it. Without it: 3.2 with
    /// exact accounting, as paper 000 ran it.
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "CreditVersion")]
    pub version: Option<CreditVersion>,
    /// BOOST on wake of an UNDER vCPU (Xen 3.0.4 and later).
    pub boost: bool,
    /// Charge elapsed time (exact) or 100 credits to whoever runs at each tick (3.x sampling).
    pub accounting: Accounting,
    /// Time slice and accounting period [ms]; the tick is a third of it.
    #[schemars(range(min = 1, max = 1000))]
    pub tslice_ms: u64,
    /// Minimum run time before preemption [us] (Xen 4.2 default 1000); 0 = off.
    #[schemars(range(min = 0, max = 500_000))]
    pub ratelimit_us: u64,
    /// Boost a vCPU on every event sent to it, whatever its priority or state (the naive scheme of paper 000 Fig.
    /// 1b).
    pub aggressive_boost: bool,
    /// Credit's upper bound on credits (csched_acct: a vCPU past one slice of credit stops earning and has its
    /// credit cut). Every Xen release has it; false is a model ablation, not a Xen setting, that shows what the
    /// bound costs weighted shares.
    pub credit_ceiling: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    #[schemars(with = "TavsSpec")]
    pub tavs: Option<TavsSpec>,
    /// xBalloon (paper 002): semi-work-conserving scheduling with the guests' CPU balloons (guest.balloon). At
    /// each accounting period a balloon is re-armed; while it runs its vCPU is paused and burns no credit, any
    /// event unpauses it at once, and once the vCPU has spent period x (1 - its Credit share) off-CPU behind its
    /// balloon (the balloon's run time: the CPU it reserves for later) the balloon sleeps and the VM is
    /// work-conserving until the next period. An uncapped VM's balloon also sleeps when a pCPU idles while it is
    /// paused (nobody competes: see xballoon_idle_release).
    pub xballoon: bool,
    /// With xballoon: when a pCPU goes idle while an uncapped vCPU's balloon pauses it, the balloon sleeps until
    /// the next period (the CPU it gives back goes to nobody, so the VM is not CPU-constrained and the reservation
    /// protects nothing). false is an ablation: the balloon reserves whatever the load.
    pub xballoon_idle_release: bool,
    pub idd: IddSpec,
    /// Scheduling granularity (Xen's `sched-gran`, 4.13+): "cpu" schedules each hardware thread on its own; "core"
    /// (or "socket") makes all threads of a core (socket) one unit that only runs vCPUs of one domain at a time,
    /// leaving threads idle when that domain has too few runnable vCPUs. Needs host.threads_per_core above 1 to
    /// matter. Fixed at boot.
    #[serde(skip_serializing_if = "crate::policy::gran::Gran::is_cpu")]
    pub sched_gran: crate::policy::gran::Gran,
}

impl Default for CreditSpec {
    /// Xen 3.2 as paper 000 ran it: BOOST, 30 ms slices, no rate limit, fine-grained accounting.
    fn default() -> CreditSpec {
        CreditSpec {
            version: None,
            boost: true,
            accounting: Accounting::Exact,
            tslice_ms: 30,
            ratelimit_us: 0,
            aggressive_boost: false,
            credit_ceiling: true,
            tavs: None,
            xballoon: false,
            xballoon_idle_release: true,
            idd: IddSpec::default(),
            sched_gran: Default::default(),
        }
    }
}

/// How `csched_acct` weighs a domain against the others. Xen 3.x (`__csched_vcpu_acct_start`) adds a domain's
/// weight to the total once, when its first vCPU becomes active, and gives the domain credit_total x weight /
/// weight_total split among its active vCPUs: domains share by weight whatever their vCPU counts. Xen 4.1 ("Make
/// weight per-vcpu") adds the weight once per active vCPU: a domain's share is weight x active vCPUs.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ShareRule {
    DomainWeight,
    VcpuWeight,
}

impl ShareRule {
    /// The rule of the release a policy's `params.version` names (3.x when it names none: the default is 3.2).
    pub fn of(params: &Value) -> ShareRule {
        match params.get("version").and_then(Value::as_str) {
            Some("4.x") => ShareRule::VcpuWeight,
            _ => ShareRule::DomainWeight,
        }
    }

    /// The rule of the release `version` names, as [`ShareRule::of`] reads it from a file.
    pub fn of_version(version: Option<CreditVersion>) -> ShareRule {
        match version {
            Some(CreditVersion::V4) => ShareRule::VcpuWeight,
            _ => ShareRule::DomainWeight,
        }
    }
}

impl Params for CreditSpec {
    const SCHEDULER: &'static str = "credit";
    const DEF: &'static str = "credit_params";
    const FIXED: &'static [&'static str] = &["sched_gran"];
    const PRESET: Option<&'static str> = Some("version");

    fn preset(value: &Value) -> Result<CreditSpec, String> {
        let version: CreditVersion = serde_json::from_value(value.clone()).map_err(|e| format!("version: {e}"))?;
        let d = CreditSpec { version: Some(version), ..CreditSpec::default() };
        Ok(match version {
            CreditVersion::V3_0_3 => CreditSpec { boost: false, accounting: Accounting::Tick, ..d },
            CreditVersion::V3_2 => CreditSpec { accounting: Accounting::Tick, ..d },
            CreditVersion::V4 => CreditSpec { ratelimit_us: 1000, ..d },
        })
    }

    fn check(&self) -> Result<(), String> {
        self.resolve().map(drop)
    }
}

impl CreditSpec {
    /// The tunables the policy runs with.
    pub fn resolve(&self) -> Result<CreditParams, String> {
        let v4 = self.version == Some(CreditVersion::V4);
        Ok(CreditParams {
            boost: self.boost,
            tslice_ms: self.tslice_ms,
            ratelimit_us: self.ratelimit_us,
            accounting: self.accounting,
            halve_on_deactivate: v4,
            aggressive_boost: self.aggressive_boost,
            tavs: self.tavs.as_ref().map(TavsSpec::resolve).transpose()?,
            idd_priority_inheritance: self.idd.priority_inheritance,
            keep_on_runq: self.idd.keep_on_runq,
            xballoon: self.xballoon,
            xballoon_idle_release: self.xballoon_idle_release,
            master_ticker: v4,
            tick_suspend: v4,
            credit_ceiling: self.credit_ceiling,
        })
    }

    /// Checks a run-time change of `param` (on the defaults).
    pub fn check_param(param: &str, value: &Value) -> Result<(), String> {
        params::set(&mut CreditSpec::default(), param, value)
    }
}

/// Tunables of the credit scheduler as it runs with them: what [`CreditSpec`] (the declaration, with its
/// defaults and presets) resolves to.
#[derive(Debug, Clone, PartialEq)]
pub struct CreditParams {
    /// BOOST a vCPU woken while UNDER (3.0.4 and later; 3.0.3 had none).
    pub boost: bool,
    /// Time slice and accounting period [ms]; the tick is a third of it.
    pub tslice_ms: u64,
    /// A runnable vCPU keeps its pCPU for at least this long [us]; 0 = off.
    pub ratelimit_us: u64,
    pub accounting: Accounting,
    /// On leaving the active list with more than a slice of credit: halve it (4.1+) or zero it (3.x).
    pub halve_on_deactivate: bool,
    /// Boost a vCPU on every event sent to it, whatever its priority or state (the naive scheme of 000 Fig. 1b).
    pub aggressive_boost: bool,
    /// Task-aware scheduling (paper 000, 3.2-3.4): inference and partial boosting; None = off.
    pub tavs: Option<TavsParams>,
    /// Driver-domain priority inheritance (000 Algorithm 2).
    pub idd_priority_inheritance: bool,
    /// A vCPU preempted by the driver domain goes back to the head of its priority list (000 4.2).
    pub keep_on_runq: bool,
    /// xBalloon (paper 002): guests' CPU balloons pause their vCPUs until each period's reservation is met.
    pub xballoon: bool,
    /// With xBalloon: an uncapped vCPU's balloon sleeps when a pCPU idles while it is paused (nobody competes).
    pub xballoon_idle_release: bool,
    /// Accounting on the master pCPU's own timer, re-armed every tslice (4.1+ `master_ticker`); otherwise inside
    /// the master's tick, every `TICKS_PER_ACCT` ticks (3.x `csched_tick`).
    pub master_ticker: bool,
    /// A pCPU's tick stops while it idles and restarts on the tick grid (3.4+ `csched_tick_suspend/resume`).
    pub tick_suspend: bool,
    /// The upper bound on credits (`csched_acct`: a vCPU past one slice of credit leaves the active list, stops
    /// earning and has its credit cut). Every Xen release has it; `false` is an ablation, not a Xen setting: the
    /// vCPU keeps its credit and keeps earning. It exists to show what the bound costs weighted shares.
    pub credit_ceiling: bool,
}

impl Default for CreditParams {
    /// [`CreditSpec`]'s defaults.
    fn default() -> CreditParams {
        CreditSpec::default().resolve().expect("the defaults resolve")
    }
}

impl CreditParams {
    /// Reads `params` of a scenario policy.
    pub fn from_value(v: &Value) -> Result<CreditParams, String> {
        params::from_value::<CreditSpec>(v)?.resolve()
    }

    pub(super) fn tslice(&self) -> Nanos {
        Nanos::from_ms(self.tslice_ms)
    }
    pub(super) fn credits_per_tslice(&self) -> i64 {
        CREDITS_PER_MSEC * self.tslice_ms as i64
    }
    /// Ticks per time slice (`CSCHED_TICKS_PER_TSLICE`, 1 for slices under 3 ms); 3.x accounts every as many.
    pub(super) fn ticks_per_tslice(&self) -> u64 {
        if self.tslice_ms < 3 {
            1
        } else {
            3
        }
    }
    pub(super) fn tick(&self) -> Nanos {
        Nanos(self.tslice().0 / self.ticks_per_tslice())
    }
}
