// Types of the JSON that crosses the wasm boundary. The report, run metadata and trace
// records are generated from the Rust types into ./generated (a Rust test fails when they drift); this file
// re-exports them and adds the types that only the page has.
export type { BeliefRec } from './generated/BeliefRec';
export type { BoostBucket } from './generated/BoostBucket';
export type { BoostRec } from './generated/BoostRec';
export type { Caps } from './generated/Caps';
export type { PriClass } from './generated/PriClass';
export type { Ablated } from './generated/Ablated';
export type { ClaimResult } from './generated/ClaimResult';
export type { Decision } from './generated/Decision';
export type { DomainReport } from './generated/DomainReport';
export type { Fairness } from './generated/Fairness';
export type { HostReport } from './generated/HostReport';
export type { InferenceSeries } from './generated/InferenceSeries';
export type { IoRec } from './generated/IoRec';
export type { JobReport } from './generated/JobReport';
export type { LagReport as LagData } from './generated/LagReport';
export type { Meta } from './generated/Meta';
export type { MetaDomain } from './generated/MetaDomain';
export type { MetaTask } from './generated/MetaTask';
export type { MetaVcpu } from './generated/MetaVcpu';
export type { PartialBoosts } from './generated/PartialBoosts';
export type { Report } from './generated/Report';
export type { RunQueueEntry } from './generated/RunQueueEntry';
export type { RunQueueSnap } from './generated/RunQueueSnap';
export type { RunReport } from './generated/RunReport';
export type { Summary } from './generated/Summary';
export type { TaskReport } from './generated/TaskReport';
export type { Throughput } from './generated/Throughput';
export type { Values } from './generated/Values';
export type { VcpuLag } from './generated/VcpuLag';
export type { Verdict } from './generated/Verdict';

import type { InferenceSeries } from './generated/InferenceSeries';
import type { Meta } from './generated/Meta';
import type { RunReport } from './generated/RunReport';
import type { Lane } from './lanes';
import type { RunQueueSnap } from './generated/RunQueueSnap';

/**
 * A run's opening window, sent as soon as the run has passed it (before the run is done): enough to draw its
 * timeline's lanes. The whole run (`RunResult`) follows.
 */
export interface RunOpening {
  readonly policy: string;
  /** The worker keeps the finished run under this id for queries (SimClient.query), once it is done. */
  readonly runId: string;
  readonly meta: Meta;
  /** The schedule segments per pCPU of `opening` (split in the worker, sim/lanes `splitSegments`). */
  readonly lanes: readonly Lane[];
  /** The window whose detail `lanes` hold: the opening window the page asked for, cut to `capNs`. */
  readonly opening: DetailWindow;
  /** The longest window the run replays [ns]: its detail's memory (a longer window is cut to it). */
  readonly capNs: number;
  /** When the worker had its wasm, was called and had simulated past the window (epoch ms; cold-start marks). */
  readonly openedTiming?: { readonly wasmReady: number; readonly called: number; readonly opened: number };
}

/** What the worker returns for one policy's run. */
export interface RunResult extends RunOpening {
  readonly report: RunReport;
  /** Rows = buckets of `bucketMs`, cols = meta.domains. */
  readonly shares: Float64Array;
  readonly bucketMs: number;
  /** Where the run's wall time went in its worker (the page's cold-start marks read it). */
  readonly timing?: RunTiming;
}

/**
 * A window of a run's simulated time [ns], detail for `from_ns <= t < to_ns`: what every detail query asks for
 * (the worker replays and caches the run's detail by window) and what each answer says it holds.
 */
export interface DetailWindow {
  readonly from_ns: number;
  readonly to_ns: number;
}

/** A snapshot of one pCPU's run queue among the snapshots of a window (the worker's `runqueueChanges`). */
export type RunQueueChange = RunQueueSnap & { readonly pcpu: number };

/**
 * Wall-clock instants of one run in its worker, as epoch milliseconds (performance.timeOrigin + now()), so the
 * page can place them on its own timeline (each worker's performance.now() has its own origin).
 */
export interface RunTiming {
  /** The worker's wasm module was instantiated. */
  readonly wasmReady: number;
  /** The run call arrived in the worker (it starts once the wasm is ready too). */
  readonly called: number;
  /** The simulation reached the end of the scenario. */
  readonly simulated: number;
  /** The result (report, metadata, lanes, shares) was packed for the page. */
  readonly packed: number;
}

/** The parts of a (wasm-validated) scenario file the page reads itself. */
export interface ScenarioPolicy {
  readonly id: string;
  readonly label?: string;
  readonly scheduler: string;
}

/** The parts of a scenario's claim the page shows beside its verdict (scenarios/schema.json `$defs/claim`). */
export interface ScenarioClaim {
  readonly text: string;
  /** What the paper reports for it. */
  readonly paper?: string;
  /** The ablation that switches the credited mechanism off; the claim should fail on it. */
  readonly without?: { readonly label: string };
  readonly status?: 'not_reproduced';
  /** Why a `not_reproduced` claim does not come out of the model. */
  readonly reason?: string;
  /** Metric path the claim judges, and the policies it names. */
  readonly metric?: string;
  readonly lower?: string;
  readonly higher?: string;
  readonly than?: string;
  readonly than_metric?: string;
  readonly policy?: string;
  readonly near?: string | number;
}

/** What the page shows first (scenarios/schema.json `focus`). */
export interface ScenarioFocus {
  readonly policies?: readonly string[];
  readonly metrics?: readonly string[];
}

export interface ScenarioDoc {
  readonly id?: string;
  readonly title?: string;
  readonly summary?: string;
  readonly source?: string;
  readonly duration_ms: number;
  readonly warmup_ms?: number;
  readonly policies: readonly ScenarioPolicy[];
  readonly claims?: readonly ScenarioClaim[];
  readonly focus?: ScenarioFocus;
}

/** A claim's ablation as far as the page ran it, for its verdict (wasm `evaluate_claims`): the ablated runs'
 * reports, or why they could not be made. */
export type AblationRuns = { readonly runs: readonly RunReport[] } | { readonly error: string };

/** A claim's ablation, as the simulator builds it (wasm `ablation_json`). */
export interface Ablation {
  /** The ablated scenario file. */
  readonly scenario: string;
  readonly label: string;
  /** The claim's subject policy. */
  readonly policy: string | null;
  /** Every policy whose run the claim reads. */
  readonly reads: readonly string[];
}

/** The simulator's estimate of a run's cost before it starts (`schedsim_core::cost::Cost`). */
export interface Cost {
  /** Events of one policy's run (the largest). */
  readonly events_per_run: number;
  readonly runs: number;
  /** Events of all the runs. */
  readonly events: number;
  /** Memory of one run [bytes]. */
  readonly bytes_per_run: number;
  /** Interpreter operations of the script policies' hooks over all the runs, from a sample (0 without one). */
  readonly script_operations: number;
  /** Wall time of all the runs at a conservative wasm speed [s]. */
  readonly seconds: number;
  /** The estimate in words. */
  readonly text: string;
  /** The scenario's simulated duration [ms]. */
  readonly duration_ms: number;
}

/** `wake_to_run`: blocked until running, from the state lanes (recorded and simulated runs alike). */
export type DistributionMetric = 'response' | 'event_latency' | 'io_latency' | 'wake_to_run';

/**
 * What a policy infers about guest tasks over a whole run, in the run's time buckets (`bucket_ns`: beliefs as the
 * points of a step line per task, partial boosts counted per bucket); null for policies that do not infer.
 */
export interface Inference extends InferenceSeries {
  /** BelThreshold: a task above it is inferred I/O-bound. */
  readonly threshold: number;
}

/** How to read a trace file (a recorded column). */
export interface TraceOptions {
  /** The thread-to-domain mapping as JSON text (`schedsim trace mapping`); the proposed one when absent. */
  readonly mapping?: string;
  /** xentrace: the TSC frequency [Hz] (2.4 GHz when absent). */
  readonly tscHz?: number;
}
