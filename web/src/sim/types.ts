// Types of the JSON that crosses the wasm boundary (DESIGN.md 5 and 6). Keys that do not apply to a run are
// omitted by the simulator, so they are optional here.

export interface MetaDomain {
  readonly name: string;
  readonly role: string;
  readonly vcpus: number;
  readonly weight: number;
  readonly cap_pct: number;
  readonly color_index: number;
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

export interface Meta {
  readonly pcpus: number;
  readonly duration_ns: number;
  readonly warmup_ns: number;
  readonly domains: readonly MetaDomain[];
  readonly vcpus: readonly MetaVcpu[];
  readonly tasks: readonly MetaTask[];
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
  readonly partial_boosts?: { readonly count: number; readonly hits: number; readonly pbhr: number };
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
