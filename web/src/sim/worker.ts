// The simulator's Web Worker: runs one policy at a time so the page never blocks. Exposed with comlink; the
// typed arrays are transferred, not copied. A finished run stays alive here, keyed by its run id (./runs.ts), so
// the page can ask about it (the detail of a window it names; the whole run's distributions, Lag, inference)
// until it releases the run, through the one `query` call.
import * as Comlink from 'comlink';
import init, {
  RecordedTrace,
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
import { laneBuffers, splitSegments } from './lanes';
import {
  adopt,
  byName,
  lanesOf,
  parse,
  recordedSource,
  release,
  runIds as allRunIds,
  runOf,
  windowOf,
  type QueryArgs,
  type QueryName,
  type QueryResult,
} from './runs';
import type { ScriptProblem, ScriptTemplate } from '../lib/script';
import type {
  Ablation,
  AblationRuns,
  Cost,
  ClaimResult,
  DetailWindow,
  Meta,
  RunOpening,
  RunReport,
  RunResult,
  TraceOptions,
} from './types';

export type { QueryArgs, QueryName, QueryResult } from './runs';

/** Events per `step` call: small enough to report progress often, large enough to keep the overhead low. */
const STEP_EVENTS = 20_000;
/** Least time between progress messages [ms]. */
const PROGRESS_EVERY_MS = 50;

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
 * boosts in time buckets) and replays the detail of the window on screen from checkpoints: it runs at
 * untraced speed, and no timeline goes blank where a whole trace would have spent its memory budget (the
 * priority-inheritance run of Fig. 7a did at about 14 s).
 */
/** Simulated time between a replay run's checkpoints [ms] (further apart once their memory budget is reached). */
const CHECKPOINT_MS = 500;
/** Most events (as the cost estimate counts them) a replayed window may span: bounds its detail's memory. */
const WINDOW_EVENTS = 600_000;

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

/** How long a run that has sent its opening window waits at most for the other columns' [ms]. */
const HOLD_MAX_MS = 1500;
/** Runs told to wait once they have sent their opening window, until `api.resume` (by run id). */
const holds = new Map<string, () => void>();
const holding = new Set<string>();

/** Waits while the run is held (see `api.run`'s `hold`), at most HOLD_MAX_MS. */
function held(runId: string): Promise<void> {
  if (!holding.has(runId)) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      holds.delete(runId);
      holding.delete(runId);
      clearTimeout(timer);
      resolve();
    };
    const timer = setTimeout(done, HOLD_MAX_MS);
    holds.set(runId, done);
  });
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
    if (!opened && (opened = passed())) await held(runId);
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

/** Runs `work`, turning a wasm trap into an error that says the simulator crashed (see `explain`). */
async function explained<T>(work: () => T | Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw explain(e);
  }
}

/** The recorded traces opened here, by run id (freed with their runs). */
const traces = new Map<string, RecordedTrace>();

function traceOf(runId: string): RecordedTrace {
  const t = traces.get(runId);
  if (!t) throw new Error(`recorded run ${runId} is no longer available`);
  return t;
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

  /** The simulator's script templates, for "New scheduler from template". */
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
   * A window from 0 is also sent to `onOpening` as soon as the run has passed it, so the page can draw it first;
   * with `hold` the run then waits (at most HOLD_MAX_MS) until `resume`, leaving the cores to the other columns'
   * runs until every column on screen has its opening window.
   */
  async run(
    json: string,
    policy: string,
    runId: string,
    bucketMs: number,
    opening: DetailWindow,
    onProgress?: (fraction: number) => void,
    onOpening?: (o: RunOpening) => void,
    hold = false,
  ): Promise<RunResult> {
    const called = epochMs();
    if (hold) holding.add(runId);
    await ready;
    const wasmReady = await wasmReadyAt;
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
          const openedTiming = { wasmReady, called, opened: epochMs() };
          const lanes = splitSegments(recorded.segments(), meta().pcpus);
          const window = { from_ns: recorded.fromNs, to_ns: recorded.toNs };
          void onOpening(
            Comlink.transfer(
              { policy, runId, meta: meta(), lanes, opening: window, capNs, openedTiming },
              laneBuffers(lanes),
            ),
          );
        }
        return true;
      };
      const result = await runToEnd(sim, policy, runId, bucketMs, called, passed, onProgress);
      const run = adopt(runId, sim, capNs, result.meta.pcpus, recorded ?? sim.takeWindow());
      sim = undefined;
      const { window, lanes } = lanesOf(run, windowOf(run, first));
      const out = { ...result, lanes, opening: window, capNs };
      return Comlink.transfer(out, [...laneBuffers(lanes), result.shares.buffer]);
    } catch (e) {
      if (sim === undefined) release(runId);
      throw explain(e);
    } finally {
      holding.delete(runId);
      try {
        sim?.free();
      } catch {
        // After a trap the handle stays borrowed and free() throws; keep the trap's error (the client drops
        // this worker anyway).
      }
    }
  },

  /**
   * Reads the trace file `bytes` (perf script text, perf.data or xentrace; gzip-compressed ones expanded by the
   * core within its bounds on the expanded size and the ratio, as the CLI and Python expand them) named
   * `title` and keeps it as the run `runId`, a column answering the same queries as a simulated run. Throws the
   * reader's message for a file that is not a trace.
   */
  async openTrace(
    bytes: Uint8Array<ArrayBuffer>,
    title: string,
    runId: string,
    bucketMs: number,
    options: TraceOptions = {},
  ): Promise<RunResult> {
    await ready;
    return explained(() => {
      const trace = new RecordedTrace(bytes, title, options.mapping, options.tscHz);
      let meta: Meta;
      try {
        meta = parse<Meta>(trace.meta_json());
      } catch (e) {
        trace.free();
        throw e;
      }
      const until = meta.trace_detail_until_ns ?? meta.duration_ns;
      const { sim, held } = recordedSource(trace, until);
      traces.set(runId, trace);
      const free = sim.free;
      sim.free = () => {
        traces.delete(runId);
        free();
      };
      const run = adopt(runId, sim, Math.max(1, until), meta.pcpus, held);
      const { window, lanes } = lanesOf(run, held);
      const result: RunResult = {
        policy: runId,
        runId,
        meta,
        lanes,
        opening: window,
        capNs: Math.max(1, until),
        report: parse<RunReport>(trace.report_json()),
        shares: trace.share_series(bucketMs),
        bucketMs,
      };
      return Comlink.transfer(result, [...laneBuffers(lanes), result.shares.buffer]);
    });
  },

  /** The mapping (JSON text) the recorded run `runId` was read with, to edit and open it again with. */
  traceMapping(runId: string): string {
    return traceOf(runId).mapping_json();
  },

  /** The scenario fitted to the recorded run `runId` (JSON text), its policies the scheduler ids `schedulers`. */
  fittedScenario(runId: string, schedulers: readonly string[]): Promise<string> {
    const trace = traceOf(runId);
    return explained(() => trace.fitted_scenario_json(JSON.stringify(schedulers)));
  },

  /**
   * The recorded run `runId`'s report beside the fitted scenario's runs under `schedulers` (`schedsim trace report
   * --simulate`), each run with its domains' wake-to-run summary.
   */
  compareRecorded(runId: string, schedulers: readonly string[]): Promise<readonly RunReport[]> {
    const trace = traceOf(runId);
    return explained(() => parse<{ runs: RunReport[] }>(trace.compare_json(JSON.stringify(schedulers))).runs);
  },

  /** Lets the named held runs go on (see `run`'s `hold`). */
  resume(runIds: readonly string[]): void {
    for (const id of runIds) {
      holding.delete(id);
      holds.get(id)?.();
    }
  },

  /** Frees the named runs (all of them without a list). */
  release(runIds?: readonly string[]): void {
    for (const id of runIds ?? allRunIds()) release(id);
  },

  /** Asks the finished run `runId` the question `name` (see `queries`). */
  query<K extends QueryName>(runId: string, name: K, ...args: QueryArgs<K>): Promise<QueryResult<K>> {
    const ask = byName[name];
    return explained(() => ask(runOf(runId), ...args));
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
