// Types of the JSON that crosses the wasm boundary (DESIGN.md 5 and 6). Keys that do not apply to a run are
// omitted by the simulator, so they are optional here.

export interface MetaDomain {
  readonly name: string;
  readonly role: string;
  readonly vcpus: number;
  readonly weight: number;
  readonly cap_pct: number;
  readonly color_index: number;
  /** Declared concurrent (co-scheduled) in the scenario (paper 001). */
  readonly concurrent?: boolean;
}

export interface MetaVcpu {
  /** Index into meta.domains. */
  readonly domain: number;
  readonly index: number;
  readonly name: string;
}

export interface MetaTask {
  readonly domain: number;
  readonly name: string;
  /** "DOMAIN/TASK". */
  readonly path: string;
}

/** What the run's scheduler is, from the simulator's scheduler registry: views are chosen by these, never by
 * scheduler name. */
export interface Caps {
  /** Co-schedules a domain's vCPUs (paper 001's hybrid and gang schedulers). */
  readonly co_schedules: boolean;
  /** Infers guest tasks' I/O-boundness in this run (task-aware Credit, paper 000). */
  readonly beliefs: boolean;
  /** Lag against ideal processor sharing is the measure of interest (paper 001). */
  readonly lag: boolean;
}

export interface Meta {
  readonly pcpus: number;
  readonly duration_ns: number;
  readonly warmup_ns: number;
  readonly domains: readonly MetaDomain[];
  readonly vcpus: readonly MetaVcpu[];
  readonly tasks: readonly MetaTask[];
  /** Trace detail (segments, run queues, decisions) stops here: its memory budget was spent. Shares over time
   * stay complete. Null when the whole run is detailed [ns]. */
  readonly trace_detail_until_ns?: number | null;
  /** The scheduler's capabilities. */
  readonly caps?: Caps;
}

export interface Summary {
  readonly count: number;
  readonly mean: number;
  readonly p50?: number;
  readonly p90?: number;
  readonly p99?: number;
  readonly max?: number;
}

export interface DomainReport {
  readonly cpu_ms: number;
  readonly cpu_share: number;
  readonly fair_share: number;
  readonly context_switches?: number;
  readonly response_ms?: Summary;
  readonly event_latency_ms?: Summary;
  readonly throughput?: Readonly<Record<string, number>>;
  readonly underruns?: number;
}

export interface RunReport {
  readonly policy: string;
  readonly sim_ms: number;
  readonly events: number;
  readonly wall_ms?: number;
  readonly domains: Readonly<Record<string, DomainReport>>;
  readonly tasks?: Readonly<
    Record<string, { readonly cpu_ms: number; readonly belief?: number; readonly io_bound?: boolean }>
  >;
  readonly fairness?: { readonly jain?: number; readonly max_abs_lag_ms?: number };
  readonly partial_boosts?: { readonly count: number; readonly hits: number; readonly pbhr?: number };
  readonly jobs?: Readonly<
    Record<
      string,
      { readonly makespan_ms?: number; readonly phases_done?: number; readonly spin_ms?: number }
    >
  >;
}

export interface ClaimResult {
  readonly text: string;
  readonly holds: boolean;
  readonly values: unknown;
  readonly policy?: string;
}

/** What the worker returns for one policy's run. */
export interface RunResult {
  readonly policy: string;
  /** The worker keeps the finished run under this id for playhead queries (SimClient.runqueues etc.). */
  readonly runId: string;
  readonly report: RunReport;
  readonly meta: Meta;
  /** Rows of 5: pcpu, start_ns, end_ns, vcpu, task (-1 = guest idle). */
  readonly segments: Float64Array;
  /** Rows = buckets of `bucketMs`, cols = meta.domains. */
  readonly shares: Float64Array;
  readonly bucketMs: number;
}

/** The parts of a (wasm-validated) scenario file the page reads itself. */
export interface ScenarioPolicy {
  readonly id: string;
  readonly label?: string;
  readonly scheduler: string;
}

export interface ScenarioDoc {
  readonly id?: string;
  readonly title?: string;
  readonly summary?: string;
  readonly source?: string;
  readonly duration_ms: number;
  readonly warmup_ms?: number;
  readonly policies: readonly ScenarioPolicy[];
}

/** A vCPU in a run-queue snapshot, as the policy sees it. */
export interface RunQueueEntry {
  /** Index into meta.vcpus. */
  readonly vcpu: number;
  /** Priority class label: BOOST, UNDER, OVER, PARKED, ... */
  readonly pri: string;
  /** Credit in the policy's units, for policies with credits. */
  readonly credit?: number;
}

/** One pCPU's run queue from `t_ns` until its next snapshot. */
export interface RunQueueSnap {
  readonly t_ns: number;
  readonly running: RunQueueEntry | null;
  readonly queued: readonly RunQueueEntry[];
}

export type DistributionMetric = 'response' | 'event_latency' | 'io_latency';

/** Every vCPU's Lag (paper 001, equation 1) over the measured window: positive = behind its share [ns]. */
export interface LagData {
  readonly vcpus: readonly {
    readonly name: string;
    readonly domain: string;
    readonly t_ns: readonly number[];
    readonly lag_ns: readonly number[];
  }[];
}

/** A task's degree of belief changed (task-aware inference, paper 000 3.3). */
export interface BeliefRec {
  readonly t_ns: number;
  /** Index into meta.tasks. */
  readonly task: number;
  readonly belief: number;
}

/** A partial boost given to a vCPU, or revoked because its guest went back to a task that is not I/O-bound. */
export interface BoostRec {
  readonly t_ns: number;
  /** Index into meta.vcpus. */
  readonly vcpu: number;
  readonly kind: 'boost' | 'revoke';
}

/** What a policy infers about guest tasks over a whole run; null for policies that do not infer. */
export interface Inference {
  /** BelThreshold: a task above it is inferred I/O-bound. */
  readonly threshold: number;
  readonly beliefs: readonly BeliefRec[];
  readonly boosts: readonly BoostRec[];
}

/** An event-channel notification (DESIGN.md 6: I/O events in the trace). */
export interface IoRec {
  readonly t_ns: number;
  /** Index into meta.vcpus. */
  readonly vcpu: number;
  readonly kind: string;
  /** "pending" (the vCPU was not running) or "delivered". */
  readonly phase: 'pending' | 'delivered';
  /** For deliveries: how long it waited for the vCPU to run [ns]. */
  readonly wait_ns: number;
}
