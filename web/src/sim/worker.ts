// The simulator's Web Worker: runs one policy at a time so the page never blocks. Exposed with comlink; the
// typed arrays are transferred, not copied. A finished run stays alive here, keyed by its run id, so the page can
// ask about it (the detail of a window: lanes, run queues, decisions, I/O, states; the whole run: distributions,
// Lag, the inference) until it releases the run: every such question is an entry of `queries` (name -> arguments
// -> result), asked through the one `query` call. Every detail question names the window it asks about; the
// worker replays a window's detail from the run's checkpoints once and keeps the last few (`windowOf`), so
// answers never depend on what was asked before. A run is one `Simulation` (see `run`): another kind of column
// (a recorded trace) plugs in as another way of making a `Run`, answering the same queries.
import * as Comlink from 'comlink';
import init, {
  Simulation,
  ReplayWindow,
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
import { selectWindow, type DecisionWindow } from './decisionWindow';
import { laneBuffers, splitSegments, type Lane } from './lanes';
import type { ScriptProblem, ScriptTemplate } from '../lib/script';
import type {
  Ablation,
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
  RunOpening,
  RunQueueChange,
  RunReport,
  RunResult,
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

/** Most windows of detail kept per run: the opening one, and the view's as it moves and comes back. */
const WINDOWS_PER_RUN = 4;
/** Most memory the windows kept over all of this worker's runs take [bytes]; each run's newest stays anyway. */
const WINDOW_BUDGET_BYTES = 64 << 20;

/** A window of detail kept, and when it was last asked for (a counter: larger is later). */
interface Kept {
  readonly window: ReplayWindow;
  used: number;
}

/** A finished run: its simulation and the windows of its detail replayed so far (most recently used first). */
interface Run {
  readonly sim: Simulation;
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
function windowOf(run: Run, w: DetailWindow): ReplayWindow {
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
function keep(run: Run, window: ReplayWindow): void {
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

function runOf(runId: string): Run {
  const r = runs.get(runId);
  if (!r) throw new Error(`run ${runId} is no longer available`);
  return r;
}

/** Frees the run `runId`, its windows with it, and forgets it. */
function release(runId: string): void {
  const r = runs.get(runId);
  if (!r) return;
  for (const k of r.windows) k.window.free();
  r.sim.free();
  runs.delete(runId);
}

/** A window's segments split into the run's lanes (transferred with the answer: the page does no per-segment work). */
function lanesOf(run: Run, w: ReplayWindow): { window: DetailWindow; lanes: Lane[] } {
  return { window: { from_ns: w.fromNs, to_ns: w.toNs }, lanes: splitSegments(w.segments(), run.pcpus) };
}

/** JSON text from the simulator, parsed as the type its Rust side declares (see ./generated). */
function parse<T>(json: string): T {
  return JSON.parse(json) as T;
}

function decisions(s: ReplayWindow, fromNs: number, toNs: number, limit: number): Decision[] {
  return parse<Decision[]>(s.decisions_json(fromNs, toNs, limit));
}

/**
 * The last `count` decisions strictly before `tNs` (fewer near the start). The wasm API reads decisions forwards
 * from a time, so this bisects for the latest start time with `count` decisions before `tNs`, each probe capped at
 * `count` decisions: a dense trace is never read whole, nor a long quiet stretch before the playhead.
 */
function decisionsBefore(s: ReplayWindow, tNs: number, count: number): Decision[] {
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

/**
 * Runs `sim` to the end and packs its result but for the opening window's lanes (see `api.run`); `passed` is
 * called after each step until it returns true (the run has passed its opening window).
 */
async function runToEnd(
  sim: Simulation,
  policy: string,
  runId: string,
  bucketMs: number,
  called: number,
  passed: () => boolean,
  onProgress?: (fraction: number) => void,
): Promise<Omit<RunResult, 'lanes' | 'opening' | 'capNs'>> {
  let last = 0;
  let opened = false;
  while (!sim.step(STEP_EVENTS)) {
    if (!opened) opened = passed();
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
    shares: sim.share_series(bucketMs),
    bucketMs,
  };
  return { ...result, timing: { wasmReady: await wasmReadyAt, called, simulated, packed: epochMs() } };
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
const byName: { [K in QueryName]: (r: Run, ...args: QueryArgs<K>) => QueryResult<K> } = queries;

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

  /**
   * Runs one policy to the end and keeps the run as `runId` until `release`. `opening` is the window the page
   * opens at (cut to the run's longest window): a window from 0 is recorded as the run passes it, any other
   * replayed once the run is done; its lanes come with the result and it is kept for the page's first questions.
   * A window from 0 is also sent to `onOpening` as soon as the run has passed it, so the page can draw it first.
   */
  async run(
    json: string,
    policy: string,
    runId: string,
    bucketMs: number,
    opening: DetailWindow,
    onProgress?: (fraction: number) => void,
    onOpening?: (o: RunOpening) => void,
  ): Promise<RunResult> {
    const called = epochMs();
    await ready;
    let sim: Simulation | undefined;
    try {
      const cost = parse<Cost>(estimate_cost(json, JSON.stringify([policy])));
      const capNs = Math.max(
        1e6,
        Math.floor((cost.duration_ms * 1e6 * WINDOW_EVENTS) / Math.max(1, cost.events_per_run)),
      );
      const first = { from_ns: opening.from_ns, to_ns: Math.min(opening.to_ns, opening.from_ns + capNs) };
      const recordMs = first.from_ns === 0 ? first.to_ns / 1e6 : 0;
      sim = Simulation.withReplay(json, policy, CHECKPOINT_MS, recordMs);
      const live = sim;
      // The opening window, taken as soon as the run has recorded it: sent ahead of the run when asked for.
      let recorded: ReplayWindow | undefined;
      const meta = () => parse<Meta>(live.meta_json());
      const passed = () => {
        if (recordMs <= 0) return true;
        recorded = live.takeWindow();
        if (!recorded) return false;
        if (onOpening) {
          const lanes = splitSegments(recorded.segments(), meta().pcpus);
          const window = { from_ns: recorded.fromNs, to_ns: recorded.toNs };
          void onOpening(
            Comlink.transfer(
              { policy, runId, meta: meta(), lanes, opening: window, capNs },
              laneBuffers(lanes),
            ),
          );
        }
        return true;
      };
      const result = await runToEnd(sim, policy, runId, bucketMs, called, passed, onProgress);
      release(runId);
      const run: Run = { sim, capNs, pcpus: result.meta.pcpus, windows: [] };
      sim = undefined;
      runs.set(runId, run);
      const held = recorded ?? run.sim.takeWindow();
      if (held) keep(run, held);
      const { window, lanes } = lanesOf(run, windowOf(run, first));
      const out = { ...result, lanes, opening: window, capNs };
      return Comlink.transfer(out, [...laneBuffers(lanes), result.shares.buffer]);
    } catch (e) {
      if (sim === undefined) release(runId);
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
    for (const id of runIds ?? [...runs.keys()]) release(id);
  },

  /** Asks the finished run `runId` the question `name` (see `queries`). */
  query<K extends QueryName>(runId: string, name: K, ...args: QueryArgs<K>): Promise<QueryResult<K>> {
    const ask = byName[name];
    return explained(() => ask(runOf(runId), ...args));
  },

  /** Evaluates the scenario's claims over the run objects of its policies. */
  async claims(json: string, reports: readonly RunReport[]): Promise<ClaimResult[]> {
    await ready;
    return explained(() => parse<ClaimResult[]>(evaluate_claims(json, JSON.stringify(reports))));
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
