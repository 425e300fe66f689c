// The simulator's Web Worker: runs one policy at a time so the page never blocks. Exposed with comlink; the
// typed arrays are transferred, not copied. A finished run stays alive here, keyed by its run id, so the page can
// ask about the playhead (run queues, decisions) and the distributions until it releases the run: every such
// question is an entry of `queries` (name -> arguments -> result), asked through the one `query` call.
import * as Comlink from 'comlink';
import init, {
  Simulation,
  ablation_json,
  checkScript,
  estimate_cost,
  evaluate_claims,
  last_panic,
  scriptTemplates,
  validate_scenario,
  warm_up,
} from './pkg/schedsim_wasm.js';
import wasmUrl from './pkg/schedsim_wasm_bg.wasm?url';
import { selectWindow, type DecisionWindow } from '../lib/decisions';
import type { RunQueueChange } from '../lib/runqueueSteps';
import { laneBuffers, splitSegments } from '../lib/series';
import { defaultView, detailWindow } from '../lib/view';
import type { ScriptProblem, ScriptTemplate } from '../lib/script';
import type {
  Ablation,
  AblationRuns,
  Cost,
  ClaimResult,
  Decision,
  DetailWindow,
  DistributionMetric,
  Inference,
  InferenceSeries,
  IoRec,
  LagData,
  Meta,
  RunQueueSnap,
  RunReport,
  RunResult,
  WindowDetail,
} from './types';

/** Events per `step` call: small enough to report progress often, large enough to keep the overhead low. */
const STEP_EVENTS = 20_000;
/** Least time between progress messages [ms]. */
const PROGRESS_EVERY_MS = 50;

/** Look-back of the first, usually sufficient read for decisions before a time [ns]. */
const LOOKBACK_NS = 50e6;
/** Decisions at one instant beyond the ones asked for that a read still returns whole. */
const TIE_SLACK = 64;
/** Upper bound on trace time for "until the end" queries [ns] (2^53: exact in f64). */
const END_NS = Number.MAX_SAFE_INTEGER;

/** What the page (SimClient) loads every worker with: the module it compiled (null: load it here) and how much
 * simulated time the worker's warm-up runs [ms] (see `api.load`). */
interface Load {
  readonly module: WebAssembly.Module | null;
  readonly warmUpMs: number;
}
let loadModule!: (load: Load) => void;
const loaded = new Promise<Load>((resolve) => (loadModule = resolve));
const instantiated = loaded.then(({ module }) => init({ module_or_path: module ?? wasmUrl }));
/**
 * The instance, once warmed up (wasm `warm_up`): it has built the scenario validator, the first thing every run
 * and check needs and in a cold worker its costliest step (0.2-0.4 s), and, in the worker asked to, run a short
 * library scenario so that the engine's code is optimised before the first real run (the optimised code belongs
 * to the module, which every worker shares). Done while the page and its scenario are still loading.
 */
const ready = Promise.all([loaded, instantiated]).then(([{ warmUpMs }]) => warm_up(warmUpMs));

/** Now as epoch milliseconds: comparable with the page's clock (each worker's performance.now() has its own origin). */
function epochMs(): number {
  return performance.timeOrigin + performance.now();
}

/** When this worker's wasm instance became ready (epoch ms). */
const wasmReadyAt = instantiated.then(epochMs);

/**
 * Every run records only the overview (report, shares, distributions, Lag, the inference's beliefs and partial
 * boosts in time buckets) and replays the detail of the window on screen from checkpoints (issue 19): it runs at
 * untraced speed, and no timeline goes blank where a whole trace would have spent its memory budget (the
 * priority-inheritance run of Fig. 7a did at about 14 s).
 */
/** Simulated time between a replay run's checkpoints [ms] (further apart once their memory budget is reached). */
const CHECKPOINT_MS = 500;
/** Most events (as the cost estimate counts them) a replayed window may span: bounds its detail's memory. */
const WINDOW_EVENTS = 600_000;

/** Finished runs, by run id, until the page releases them. */
const sims = new Map<string, Simulation>();

/** A replay run's window of detail: the longest it may be and the one held now [ns]. */
interface Held {
  readonly capNs: number;
  /** The run's pCPUs: the lanes its windows' segments split into. */
  readonly pcpus: number;
  from: number;
  to: number;
}
/** The replay runs among `sims` (full-trace runs have no entry). */
const held = new Map<Simulation, Held>();

/**
 * Makes a replay run hold the detail of [fromNs, toNs) (capped at its longest window, from `fromNs`); nothing
 * for a full-trace run or a window already held. Returns the window held.
 */
function hold(s: Simulation, fromNs: number, toNs: number): Held | undefined {
  const h = held.get(s);
  if (!h) return undefined;
  const from = Math.max(0, Math.floor(fromNs));
  const to = Math.max(from, Math.min(Math.ceil(toNs), from + h.capNs));
  if (h.from <= from && to <= h.to) return h;
  s.focusWindow(from, to);
  h.from = from;
  h.to = to;
  return h;
}

/** A replay run holds a window around `tNs` (a quarter of its longest window before, the rest after). */
function holdAround(s: Simulation, tNs: number): void {
  const h = held.get(s);
  if (!h || (h.from <= tNs && tNs < h.to)) return;
  hold(s, tNs - h.capNs / 4, tNs + (3 * h.capNs) / 4);
}

function sim(runId: string): Simulation {
  const s = sims.get(runId);
  if (!s) throw new Error(`run ${runId} is no longer available`);
  return s;
}

/** Frees the run `runId` and forgets it. */
function release(runId: string): void {
  const s = sims.get(runId);
  if (!s) return;
  held.delete(s);
  s.free();
  sims.delete(runId);
}

/** JSON text from the simulator, parsed as the type its Rust side declares (see ./generated). */
function parse<T>(json: string): T {
  return JSON.parse(json) as T;
}

function decisions(s: Simulation, fromNs: number, toNs: number, limit: number): Decision[] {
  return parse<Decision[]>(s.decisions_json(fromNs, toNs, limit));
}

/**
 * The last `count` decisions strictly before `tNs` (fewer near the start). The wasm API reads decisions forwards
 * from a time, so this bisects for the latest start time with `count` decisions before `tNs`, each probe capped at
 * `count` decisions: a dense trace is never read whole, nor a long quiet stretch before the playhead.
 */
function decisionsBefore(s: Simulation, tNs: number, count: number): Decision[] {
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

function message(e: unknown): string {
  return e instanceof Error ? e.message : String(e);
}

/** A Rust panic surfaces as a bare wasm trap ("unreachable"); the panic hook kept its message. */
function explain(e: unknown): Error {
  if (e instanceof WebAssembly.RuntimeError) {
    let detail = e.message;
    try {
      detail = last_panic() ?? detail;
    } catch {
      // The instance is unusable after the trap; keep the trap's own message.
    }
    return new Error(`the simulator crashed (${detail}); this is a bug in schedsim`);
  }
  return e instanceof Error ? e : new Error(String(e));
}

/** Runs `sim` to the end and packs its result; `opening` is the window a replay run holds (recorded as it ran). */
async function runToEnd(
  sim: Simulation,
  opening: DetailWindow | null,
  policy: string,
  runId: string,
  bucketMs: number,
  called: number,
  onProgress?: (fraction: number) => void,
): Promise<RunResult> {
  let last = 0;
  while (!sim.step(STEP_EVENTS)) {
    const now = performance.now();
    if (now - last >= PROGRESS_EVERY_MS) {
      last = now;
      if (onProgress) void onProgress(sim.progress());
      // Lets queries about runs already finished in this worker through while this one continues.
      await new Promise((r) => setTimeout(r, 0));
    }
  }
  const simulated = epochMs();
  const meta = parse<Meta>(sim.meta_json());
  const result = {
    policy,
    runId,
    report: parse<RunReport>(sim.report_json()),
    meta,
    lanes: splitSegments(sim.segments(), meta.pcpus),
    shares: sim.share_series(bucketMs),
    bucketMs,
    detail: opening,
  };
  return { ...result, timing: { wasmReady: await wasmReadyAt, called, simulated, packed: epochMs() } };
}

/**
 * The questions a finished run answers, by name: each takes the run and the query's arguments. The page asks them
 * through `api.query(runId, name, ...args)`, typed by `QueryArgs` and `QueryResult`.
 */
const queries = {
  /**
   * A replay run's detail of [fromNs, toNs) (at most its longest window, from `fromNs`): the window it now holds
   * and its schedule segments split into lanes here (transferred: the page does no per-segment work), replayed
   * from the nearest checkpoint unless already held. null for a full-trace run (its lanes came with the run).
   */
  focus: (s: Simulation, fromNs: number, toNs: number): WindowDetail | null => {
    const h = hold(s, fromNs, toNs);
    if (!h) return null;
    const lanes = splitSegments(s.segments(), h.pcpus);
    return Comlink.transfer({ fromNs: h.from, toNs: h.to, capNs: h.capNs, lanes }, laneBuffers(lanes));
  },

  /** Every pCPU's run queue at `tNs` (null for a pCPU before its first snapshot). */
  runqueues: (s: Simulation, tNs: number) => {
    holdAround(s, tNs);
    return parse<(RunQueueSnap | null)[]>(s.runqueues_json(tNs));
  },

  /** Every pCPU's run-queue snapshots in (fromNs, toNs] in time order, several per instant when a decision took
   * several steps; null when there are more than `limit` (lib/runqueueSteps plays them). */
  runqueueChanges: (s: Simulation, fromNs: number, toNs: number, limit: number) => {
    hold(s, fromNs, toNs);
    return parse<RunQueueChange[] | null>(s.runqueue_changes_json(fromNs, toNs, limit));
  },

  /** Decisions in [fromNs, toNs), at most `limit` (the trace window export). */
  decisionsBetween: (s: Simulation, fromNs: number, toNs: number, limit: number): Decision[] => {
    hold(s, fromNs, toNs);
    return decisions(s, fromNs, toNs, limit);
  },

  /** The `before` decisions up to the one at or before `tNs`, and the `after` ones following it. */
  decisionsAround: (s: Simulation, tNs: number, before: number, after: number): DecisionWindow => {
    holdAround(s, tNs);
    const earlier = decisionsBefore(s, tNs + 1, before);
    const later = decisions(s, tNs + 1, END_NS, after);
    return selectWindow([...earlier, ...later], tNs, before, after);
  },

  /** Time [ns] of the first decision after `tNs` (dir 1) or the last one before it (dir -1), or null. */
  adjacentDecision: (s: Simulation, tNs: number, dir: 1 | -1): number | null => {
    holdAround(s, tNs);
    const found = dir > 0 ? decisions(s, tNs + 1, END_NS, 1) : decisionsBefore(s, tNs, 1);
    return found[0]?.t_ns ?? null;
  },

  /** The policy's task inference over the whole run (BelThreshold, beliefs and partial boosts in time buckets:
   * the run's overview), or null. */
  inference: (s: Simulation): Inference | null => {
    const threshold = s.belief_threshold();
    if (threshold === undefined) return null;
    return { threshold, ...parse<InferenceSeries>(s.inference_json()) };
  },

  /** Event-channel notifications with `fromNs <= t < toNs`, at most `limit`. */
  ioEvents: (s: Simulation, fromNs: number, toNs: number, limit: number) => {
    hold(s, fromNs, toNs);
    return parse<IoRec[]>(s.io_events_json(fromNs, toNs, limit));
  },

  /** Every vCPU's state in [fromNs, toNs) as rows of (vcpu, start_ns, end_ns, state code), at most `limit`
   * (transferred; lib/vcpuStates reads it). */
  vcpuStates: (s: Simulation, fromNs: number, toNs: number, limit: number): Float64Array => {
    hold(s, fromNs, toNs);
    const d = s.vcpu_states(fromNs, toNs, limit);
    return Comlink.transfer(d, [d.buffer]);
  },

  /** The state lanes at a zoom too dense for spans: [fromNs, toNs) in `buckets` equal columns, each vCPU's share
   * of each column's time per state at `(vcpu * buckets + column) * 4 + state` (transferred). */
  vcpuStateShares: (s: Simulation, fromNs: number, toNs: number, buckets: number): Float64Array => {
    hold(s, fromNs, toNs);
    const d = s.vcpu_state_shares(fromNs, toNs, buckets);
    return Comlink.transfer(d, [d.buffer]);
  },

  /** Delivered notifications per column of [fromNs, toNs) in `buckets` equal columns (transferred). */
  ioDeliveryCounts: (s: Simulation, fromNs: number, toNs: number, buckets: number): Uint32Array => {
    hold(s, fromNs, toNs);
    const d = s.io_delivery_counts(fromNs, toNs, buckets);
    return Comlink.transfer(d, [d.buffer]);
  },

  /** A domain's distribution as flattened (value_ms, count) pairs in increasing value (transferred). */
  distribution: (s: Simulation, domain: number, metric: DistributionMetric): Float64Array => {
    const d = s.distribution(domain, metric);
    return Comlink.transfer(d, [d.buffer]);
  },

  /** Every vCPU's Lag over time (paper 001, equation 1). */
  lag: (s: Simulation) => parse<LagData>(s.lag_json()),
};

type Queries = typeof queries;
/** The name of a question a finished run answers. */
export type QueryName = keyof Queries;
/** Its arguments after the run id. */
export type QueryArgs<K extends QueryName> = Queries[K] extends (s: Simulation, ...args: infer A) => unknown
  ? A
  : never;
/** Its answer. */
export type QueryResult<K extends QueryName> = ReturnType<Queries[K]>;
/** `queries` seen per name, so that one generic call of `queries[name]` type-checks. */
const byName: { [K in QueryName]: (s: Simulation, ...args: QueryArgs<K>) => QueryResult<K> } = queries;

/** Runs `work`, turning a wasm trap into an error that says the simulator crashed (see `explain`). */
async function explained<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw explain(e);
  }
}

const api = {
  /**
   * Instantiates the simulator from `module` (compiled once by the page), or from its URL when null, and warms it
   * up, running a library scenario for `warmUpMs` of simulated time first when that is above 0. The page calls it
   * first; every other call waits for it.
   */
  async load(module: WebAssembly.Module | null, warmUpMs = 0): Promise<void> {
    loadModule({ module, warmUpMs });
    await ready;
  },

  /** null when the scenario is valid, else the simulator's message (it names the field path). */
  async validate(json: string): Promise<string | null> {
    await ready;
    try {
      validate_scenario(json);
      return null;
    } catch (e) {
      if (e instanceof WebAssembly.RuntimeError) throw explain(e);
      return message(e);
    }
  },

  /** The simulator's script templates (DESIGN.md 10), for "New scheduler from template". */
  async scriptTemplates(): Promise<ScriptTemplate[]> {
    await ready;
    return explained(() => parse<ScriptTemplate[]>(scriptTemplates()));
  },

  /** null when the Rhai source compiles, else its first syntax error with its line and column. */
  async checkScript(source: string): Promise<ScriptProblem | null> {
    await ready;
    return explained(() => {
      const problem = checkScript(source);
      return problem == null ? null : parse<ScriptProblem>(problem);
    });
  },

  /** Runs one policy to the end and keeps the run as `runId` until `release`. */
  async run(
    json: string,
    policy: string,
    runId: string,
    bucketMs: number,
    onProgress?: (fraction: number) => void,
  ): Promise<RunResult> {
    const called = epochMs();
    await ready;
    let sim: Simulation | undefined;
    try {
      const cost = parse<Cost>(estimate_cost(json, JSON.stringify([policy])));
      const durationMs = cost.duration_ms;
      const capNs = Math.max(
        1e6,
        Math.floor((durationMs * 1e6 * WINDOW_EVENTS) / Math.max(1, cost.events_per_run)),
      );
      // The page's opening window (lib/view `detailWindow` of the default view, from 0) is recorded as the run
      // passes it, so the first frame needs no replay.
      const [, openMs] = detailWindow(defaultView(durationMs), capNs / 1e6, durationMs);
      sim = Simulation.withReplay(json, policy, CHECKPOINT_MS, openMs);
      // It holds that opening window once run.
      const opening = { fromNs: 0, toNs: Math.floor(openMs * 1e6), capNs };
      const result = await runToEnd(sim, opening, policy, runId, bucketMs, called, onProgress);
      release(runId);
      sims.set(runId, sim);
      held.set(sim, { capNs, pcpus: result.meta.pcpus, from: opening.fromNs, to: opening.toNs });
      sim = undefined;
      return Comlink.transfer(result, [...laneBuffers(result.lanes), result.shares.buffer]);
    } catch (e) {
      throw explain(e);
    } finally {
      try {
        sim?.free();
      } catch {
        // After a trap the handle stays borrowed and free() throws; keep the trap's error (the client drops
        // this worker anyway).
      }
    }
  },

  /** Frees the named runs (all of them without a list). */
  release(runIds?: readonly string[]): void {
    for (const id of runIds ?? [...sims.keys()]) release(id);
  },

  /** Asks the finished run `runId` the question `name` (see `queries`). */
  query<K extends QueryName>(runId: string, name: K, ...args: QueryArgs<K>): Promise<QueryResult<K>> {
    const ask = byName[name];
    return explained(() => ask(sim(runId), ...args));
  },

  /** Evaluates the scenario's claims over the run objects of its policies, each with its verdict (judged with
   * the claims' ablations as far as `ablations` gives them). */
  async claims(
    json: string,
    reports: readonly RunReport[],
    ablations?: Readonly<Record<number, AblationRuns>>,
  ): Promise<ClaimResult[]> {
    await ready;
    const ab = ablations ? JSON.stringify(ablations) : undefined;
    return explained(() => parse<ClaimResult[]>(evaluate_claims(json, JSON.stringify(reports), ab)));
  },

  /** The estimated events, memory and time of running `policies` (all when empty) on the scenario. */
  async cost(json: string, policies: readonly string[]): Promise<Cost> {
    await ready;
    return explained(() => parse<Cost>(estimate_cost(json, JSON.stringify(policies))));
  },

  /** Claim `k`'s ablated scenario, built by the simulator from the claim's `without` patch. */
  async ablation(json: string, k: number): Promise<Ablation> {
    await ready;
    return explained(() => parse<Ablation>(ablation_json(json, k)));
  },
};

export type WorkerApi = typeof api;

Comlink.expose(api);
