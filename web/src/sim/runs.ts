// The finished runs a worker keeps (sim/worker.ts runs them), and the questions they answer: every detail
// question names the window it asks about (`DetailWindow`); a run replays a window's detail from its checkpoints
// once and keeps the last few (`windowOf`), so answers never depend on what was asked before. A run is one
// `Simulation` with its windows (`adopt`): another kind of column (a recorded trace) plugs in as another way of
// making a `Run` that answers the same queries.
import * as Comlink from 'comlink';
import type { RecordedTrace, ReplayWindow, Simulation } from './pkg/schedsim_wasm.js';
import { selectWindow, type DecisionWindow } from './decisionWindow';
import { laneBuffers, splitSegments, type Lane } from './lanes';
import type {
  Decision,
  DetailWindow,
  DistributionMetric,
  Inference,
  InferenceSeries,
  IoRec,
  LagData,
  RunQueueChange,
  RunQueueSnap,
} from './types';

/** Look-back of the first, usually sufficient read for decisions before a time [ns]. */
const LOOKBACK_NS = 50e6;
/** Decisions at one instant beyond the ones asked for that a read still returns whole. */
const TIE_SLACK = 64;
/** Upper bound on trace time for "until the end" queries [ns] (2^53: exact in f64). */
const END_NS = Number.MAX_SAFE_INTEGER;

/** Most windows of detail kept per run: the opening one, and the view's as it moves and comes back. */
const WINDOWS_PER_RUN = 4;
/** Most memory the windows kept over all of this worker's runs take [bytes]; each run's newest stays anyway. */
const WINDOW_BUDGET_BYTES = 64 << 20;

/** The detail of a window, as the queries read it: a replayed window, or a recorded trace (all of it held). */
export type Detail = Pick<
  ReplayWindow,
  | 'fromNs'
  | 'toNs'
  | 'bytes'
  | 'free'
  | 'segments'
  | 'runqueues_json'
  | 'runqueue_changes_json'
  | 'decisions_json'
  | 'io_events_json'
  | 'vcpu_states'
  | 'vcpu_state_shares'
  | 'io_delivery_counts'
  | 'wake_latency_map'
>;

/** What a run answers over its whole time: a simulation, or a recorded trace seen as one (`recordedSource`). */
export type Source = Pick<
  Simulation,
  'distribution' | 'lag_json' | 'belief_threshold' | 'inference_json' | 'free'
> & { replayWindow(fromNs: number, toNs: number): Detail | undefined };

/** A window of detail kept, and when it was last asked for (a counter: larger is later). */
interface Kept {
  readonly window: Detail;
  used: number;
}

/** A finished run: its source and the windows of its detail replayed so far (most recently used first). */
export interface Run {
  readonly sim: Source;
  /** The longest window it replays [ns]. */
  readonly capNs: number;
  /** Its pCPUs: the lanes its windows' segments split into. */
  readonly pcpus: number;
  readonly windows: Kept[];
}

/** Finished runs, by run id, until the page releases them. */
const runs = new Map<string, Run>();
let clock = 0;

/** `w` in whole nanoseconds within the run, cut to the run's longest window from its start. */
function cut(run: Run, w: DetailWindow): DetailWindow {
  const from = Math.max(0, Math.floor(w.from_ns));
  return { from_ns: from, to_ns: Math.max(from, Math.min(Math.ceil(w.to_ns), from + run.capNs)) };
}

/**
 * The detail of `w` (cut as `cut` says): a window kept that covers it, else replayed from the nearest checkpoint
 * and kept, the least recently used going once a run keeps WINDOWS_PER_RUN or all runs WINDOW_BUDGET_BYTES.
 */
export function windowOf(run: Run, w: DetailWindow): Detail {
  const { from_ns, to_ns } = cut(run, w);
  const hit = run.windows.find((k) => k.window.fromNs <= from_ns && to_ns <= k.window.toNs);
  if (hit) {
    hit.used = ++clock;
    return hit.window;
  }
  const fresh = run.sim.replayWindow(from_ns, to_ns);
  if (!fresh) throw new Error('this run keeps its whole trace: it has no windows to replay');
  keep(run, fresh);
  return fresh;
}

/** Keeps `window` for `run`, then frees the windows over the bounds (see `windowOf`). */
export function keep(run: Run, window: Detail): void {
  run.windows.unshift({ window, used: ++clock });
  run.windows.sort((a, b) => b.used - a.used);
  while (run.windows.length > WINDOWS_PER_RUN) run.windows.pop()!.window.free();
  const all = [...new Set([...runs.values(), run])];
  const spare = () => all.flatMap((r) => r.windows.slice(1).map((k) => ({ r, k })));
  let bytes = all.reduce((sum, r) => sum + r.windows.reduce((n, k) => n + k.window.bytes, 0), 0);
  while (bytes > WINDOW_BUDGET_BYTES) {
    const oldest = spare().sort((a, b) => a.k.used - b.k.used)[0];
    if (!oldest) break;
    bytes -= oldest.k.window.bytes;
    oldest.r.windows.splice(oldest.r.windows.indexOf(oldest.k), 1);
    oldest.k.window.free();
  }
}

export function runOf(runId: string): Run {
  const r = runs.get(runId);
  if (!r) throw new Error(`run ${runId} is no longer available`);
  return r;
}

/** Frees the run `runId`, its windows with it, and forgets it. */
export function release(runId: string): void {
  const r = runs.get(runId);
  if (!r) return;
  for (const k of r.windows) k.window.free();
  r.sim.free();
  runs.delete(runId);
}

/** A window's segments split into the run's lanes (transferred with the answer: the page does no per-segment work). */
export function lanesOf(run: Run, w: Detail): { window: DetailWindow; lanes: Lane[] } {
  return { window: { from_ns: w.fromNs, to_ns: w.toNs }, lanes: splitSegments(w.segments(), run.pcpus) };
}

/** JSON text from the simulator, parsed as the type its Rust side declares (see ./generated). */
export function parse<T>(json: string): T {
  return JSON.parse(json) as T;
}

function decisions(s: Detail, fromNs: number, toNs: number, limit: number): Decision[] {
  return parse<Decision[]>(s.decisions_json(fromNs, toNs, limit));
}

/**
 * The last `count` decisions strictly before `tNs` (fewer near the start). The wasm API reads decisions forwards
 * from a time, so this bisects for the latest start time with `count` decisions before `tNs`, each probe capped at
 * `count` decisions: a dense trace is never read whole, nor a long quiet stretch before the playhead.
 */
function decisionsBefore(s: Detail, tNs: number, count: number): Decision[] {
  if (count <= 0 || tNs <= 0) return [];
  // Room for decisions sharing the start time, which a capped read would otherwise cut off at the end.
  const limit = count + TIE_SLACK;
  const last = (found: Decision[]) => found.slice(Math.max(0, found.length - count));
  const near = decisions(s, Math.max(0, tNs - LOOKBACK_NS), tNs, limit);
  if (near.length < limit && (near.length >= count || tNs <= LOOKBACK_NS)) return last(near);
  const enough = (from: number) => decisions(s, from, tNs, count).length >= count;
  if (!enough(0)) return decisions(s, 0, tNs, count);
  let lo = 0; // enough(lo)
  let hi = tNs; // !enough(hi): the window is empty
  while (hi - lo > 1) {
    const mid = Math.floor((lo + hi) / 2);
    if (enough(mid)) lo = mid;
    else hi = mid;
  }
  return last(decisions(s, lo, tNs, limit));
}

/**
 * The questions a finished run answers, by name: each takes the run and the query's arguments. The page asks them
 * through `api.query(runId, name, ...args)`, typed by `QueryArgs` and `QueryResult`.
 */
const queries = {
  /**
   * The schedule segments of window `w` (cut to the run's longest window), split into lanes here and
   * transferred, with the window they hold.
   */
  lanes: (r: Run, w: DetailWindow): { window: DetailWindow; lanes: Lane[] } => {
    const out = lanesOf(r, windowOf(r, w));
    return Comlink.transfer(out, laneBuffers(out.lanes));
  },

  /** Every pCPU's run queue at `tNs` within `w` (null for a pCPU before its first snapshot). */
  runqueues: (r: Run, w: DetailWindow, tNs: number) =>
    parse<(RunQueueSnap | null)[]>(windowOf(r, w).runqueues_json(tNs)),

  /** Every pCPU's run-queue snapshots in (fromNs, toNs] of `w` in time order, several per instant when a decision
   * took several steps; null when there are more than `limit` (lib/runqueueSteps plays them). */
  runqueueChanges: (r: Run, w: DetailWindow, fromNs: number, toNs: number, limit: number) =>
    parse<RunQueueChange[] | null>(windowOf(r, w).runqueue_changes_json(fromNs, toNs, limit)),

  /** The decisions of `w`, at most `limit` (the trace window export). */
  decisionsBetween: (r: Run, w: DetailWindow, limit: number): Decision[] =>
    decisions(windowOf(r, w), w.from_ns, w.to_ns, limit),

  /** Of `w`'s decisions, the `before` ones up to the one at or before `tNs`, and the `after` ones following it. */
  decisionsAround: (r: Run, w: DetailWindow, tNs: number, before: number, after: number): DecisionWindow => {
    const d = windowOf(r, w);
    const earlier = decisionsBefore(d, tNs + 1, before);
    const later = decisions(d, tNs + 1, END_NS, after);
    return selectWindow([...earlier, ...later], tNs, before, after);
  },

  /** Time [ns] of `w`'s first decision after `tNs` (dir 1) or its last one before it (dir -1), or null. */
  adjacentDecision: (r: Run, w: DetailWindow, tNs: number, dir: 1 | -1): number | null => {
    const d = windowOf(r, w);
    const found = dir > 0 ? decisions(d, tNs + 1, END_NS, 1) : decisionsBefore(d, tNs, 1);
    return found[0]?.t_ns ?? null;
  },

  /** The policy's task inference over the whole run (BelThreshold, beliefs and partial boosts in time buckets:
   * the run's overview), or null. */
  inference: (r: Run): Inference | null => {
    const threshold = r.sim.belief_threshold();
    if (threshold === undefined) return null;
    return { threshold, ...parse<InferenceSeries>(r.sim.inference_json()) };
  },

  /** Event-channel notifications of `w`, at most `limit`. */
  ioEvents: (r: Run, w: DetailWindow, limit: number) =>
    parse<IoRec[]>(windowOf(r, w).io_events_json(w.from_ns, w.to_ns, limit)),

  /** Every vCPU's state in `w` as rows of (vcpu, start_ns, end_ns, state code), at most `limit` (transferred;
   * lib/vcpuStates reads it). */
  vcpuStates: (r: Run, w: DetailWindow, limit: number): Float64Array => {
    const d = windowOf(r, w).vcpu_states(w.from_ns, w.to_ns, limit);
    return Comlink.transfer(d, [d.buffer]);
  },

  /** The state lanes at a zoom too dense for spans: `w` at a resolution of `buckets` equal columns, each vCPU's
   * share of each column's time per state at `(vcpu * buckets + column) * 4 + state` (transferred). */
  vcpuStateShares: (r: Run, w: DetailWindow, buckets: number): Float64Array => {
    const d = windowOf(r, w).vcpu_state_shares(w.from_ns, w.to_ns, buckets);
    return Comlink.transfer(d, [d.buffer]);
  },

  /** Delivered notifications per column of `w` at a resolution of `buckets` equal columns (transferred). */
  ioDeliveryCounts: (r: Run, w: DetailWindow, buckets: number): Uint32Array => {
    const d = windowOf(r, w).io_delivery_counts(w.from_ns, w.to_ns, buckets);
    return Comlink.transfer(d, [d.buffer]);
  },

  /** Wake-to-run latency per domain over `w` at a resolution of `buckets` equal columns: at
   * `(domain * buckets + column) * 3` the wake-ups' count, summed and longest latency [ns] (transferred). */
  wakeLatency: (r: Run, w: DetailWindow, buckets: number): Float64Array => {
    const d = windowOf(r, w).wake_latency_map(w.from_ns, w.to_ns, buckets);
    return Comlink.transfer(d, [d.buffer]);
  },

  /** A domain's distribution as flattened (value_ms, count) pairs in increasing value (transferred). */
  distribution: (r: Run, domain: number, metric: DistributionMetric): Float64Array => {
    const d = r.sim.distribution(domain, metric);
    return Comlink.transfer(d, [d.buffer]);
  },

  /** Every vCPU's Lag over time (paper 001, equation 1). */
  lag: (r: Run) => parse<LagData>(r.sim.lag_json()),
};

type Queries = typeof queries;
/** The name of a question a finished run answers. */
export type QueryName = keyof Queries;
/** Its arguments after the run id. */
export type QueryArgs<K extends QueryName> = Queries[K] extends (r: Run, ...args: infer A) => unknown
  ? A
  : never;
/** Its answer. */
export type QueryResult<K extends QueryName> = ReturnType<Queries[K]>;
/** `queries` seen per name, so that one generic call of `queries[name]` type-checks. */
export const byName: { [K in QueryName]: (r: Run, ...args: QueryArgs<K>) => QueryResult<K> } = queries;

/** Keeps the finished run `sim` as `runId` (freeing a run kept under that id before), with the window it holds
 * (its opening window) if any. */
export function adopt(runId: string, sim: Source, capNs: number, pcpus: number, held?: Detail): Run {
  release(runId);
  const run: Run = { sim, capNs, pcpus, windows: [] };
  runs.set(runId, run);
  if (held) keep(run, held);
  return run;
}

/**
 * A recorded trace as a run's source and its one window, all of its time `[0, untilNs)`: it holds its whole
 * detail, so every window is that one; it has no Lag or inference (those belong to a policy's model).
 */
export function recordedSource(trace: RecordedTrace, untilNs: number): { sim: Source; held: Detail } {
  const held: Detail = {
    fromNs: 0,
    toNs: untilNs,
    bytes: 0,
    // The trace is freed once, with its source.
    free: () => {},
    segments: () => trace.segments(),
    runqueues_json: (t) => trace.runqueues_json(t),
    runqueue_changes_json: (a, b, n) => trace.runqueue_changes_json(a, b, n),
    decisions_json: (a, b, n) => trace.decisions_json(a, b, n),
    io_events_json: (a, b, n) => trace.io_events_json(a, b, n),
    vcpu_states: (a, b, n) => trace.vcpu_states(a, b, n),
    vcpu_state_shares: (a, b, n) => trace.vcpu_state_shares(a, b, n),
    io_delivery_counts: (a, b, n) => trace.io_delivery_counts(a, b, n),
    wake_latency_map: (a, b, n) => trace.wake_latency_map(a, b, n),
  };
  const sim: Source = {
    // Any window is within what it holds (a view past its end finds no detail there).
    replayWindow: () => held,
    distribution: (d, m) => trace.distribution(d, m),
    lag_json: () => JSON.stringify({ vcpus: [] } satisfies LagData),
    belief_threshold: () => undefined,
    inference_json: () => '{}',
    free: () => trace.free(),
  };
  return { sim, held };
}

/** The run ids kept now. */
export function runIds(): string[] {
  return [...runs.keys()];
}

/** The windows `runId` keeps now [ns], most recently used first (for tests). */
export function windowsKept(runId: string): DetailWindow[] {
  return runOf(runId).windows.map((k) => ({ from_ns: k.window.fromNs, to_ns: k.window.toNs }));
}
