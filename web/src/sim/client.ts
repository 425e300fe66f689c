// The page's side of the simulator: a small pool of Web Workers (one run each at a time) plus one spare worker
// for validation and claims, so checking a pasted scenario never waits behind a long run. Cancelling
// terminates the run workers: a wasm run is one synchronous loop and cannot be interrupted any other way.
// Finished runs stay alive in the worker that ran them (see worker.ts) and answer playhead queries by run id
// (`query`) until `reset()` releases them for the next scenario. The wasm module is compiled once, here, and
// handed to every worker (a compiled module is shared, not copied), and `warm()` starts the workers before the
// scenario arrives: on a fresh link the page no longer waits for one compile per worker (cold start).
import * as Comlink from 'comlink';
import wasmUrl from './pkg/schedsim_wasm_bg.wasm?url';
import type { QueryArgs, QueryName, QueryResult, WorkerApi } from './worker';
import type {
  Ablation,
  AblationRuns,
  ClaimResult,
  Cost,
  DetailWindow,
  RunOpening,
  RunReport,
  RunResult,
  TraceOptions,
} from './types';
import { markOnce } from '../lib/marks';
import type { ScriptProblem, ScriptTemplate } from '../lib/script';

let compiled: Promise<WebAssembly.Module | null> | null = null;

/**
 * The simulator's wasm module, compiled once per page (off the main thread: compileStreaming compiles while it
 * downloads). null when this browser cannot (no streaming compile, a server without the wasm MIME type): each
 * worker then fetches and compiles it itself, as it did before.
 */
export function simulatorModule(): Promise<WebAssembly.Module | null> {
  compiled ??= (async () => {
    try {
      const module = await WebAssembly.compileStreaming(fetch(wasmUrl));
      markOnce('wasm-compiled');
      return module;
    } catch {
      return null;
    }
  })();
  return compiled;
}

/** Rejection reason of calls cut short by `cancel()`. */
export class Cancelled extends Error {
  constructor() {
    super('cancelled');
    this.name = 'Cancelled';
  }
}

interface Slot {
  readonly worker: Worker;
  readonly api: Comlink.Remote<WorkerApi>;
  /** Rejects when the worker dies (script failed to load, uncaught error) or is stopped here (`kill`). */
  readonly failed: Promise<never>;
  readonly stop: (e: Error) => void;
}

interface Abort {
  readonly promise: Promise<never>;
  readonly reject: (e: Error) => void;
}

function makeAbort(): Abort {
  let reject!: (e: Error) => void;
  const promise = new Promise<never>((_, r) => (reject = r));
  promise.catch(() => {}); // observed through race(); never an unhandled rejection
  return { promise, reject };
}

/**
 * A worker. It builds the scenario validator as it starts (worker.ts `load`) but runs no engine warm-up: on two
 * cores shared with the page, a warm-up's half second of CPU competed with the first runs it was to speed up (the
 * runs tier the shared module's code up themselves), delaying the first frame.
 */
function spawn(): Slot {
  const worker = new Worker(new URL('./worker.ts', import.meta.url), { type: 'module', name: 'schedsim' });
  const api = Comlink.wrap<WorkerApi>(worker);
  // The worker waits for its module before anything else it is asked (worker.ts `load`).
  void simulatorModule().then((module) => api.load(module).catch(() => {}));
  let stop!: (e: Error) => void;
  const failed = new Promise<never>((_, reject) => {
    stop = reject;
    worker.addEventListener('error', (ev) => {
      ev.preventDefault();
      reject(new Error(`The simulation worker failed: ${ev.message || 'it could not be loaded'}`));
    });
  });
  failed.catch(() => {});
  return { worker, api, failed, stop };
}

/**
 * Workers started before the page's first render (`prewarm`), taken by the first client's `warm`: a fresh link's
 * runs then find their workers up, instead of starting them once React has rendered (about 0.15-0.2 s later on a
 * busy 2-core machine).
 */
const early: { helper: Slot | null; runners: Slot[] } = { helper: null, runners: [] };

/** Starts the simulator's compile, the helper and the run workers for a link naming `columns` columns now, for
 * the first client's `warm` to take. */
export function prewarm(columns: number): void {
  void simulatorModule();
  early.helper ??= spawn();
  const n = runnerCount(defaultPoolSize(), columns);
  while (early.runners.length < n) early.runners.push(spawn());
}

/** Terminates the worker; calls still waiting on it reject (a run sharing the worker with one that failed). */
function kill(slot: Slot): void {
  slot.stop(new Error('the simulation worker was stopped after another run in it failed'));
  slot.api[Comlink.releaseProxy]();
  slot.worker.terminate();
}

export function defaultPoolSize(): number {
  const cores = typeof navigator !== 'undefined' ? navigator.hardwareConcurrency || 2 : 2;
  return Math.max(1, Math.min(4, cores));
}

/** Most columns that run at once, each in a worker of its own, however few cores the machine has: so that every
 * column on screen draws its opening window early (the system shares the cores between them). */
const MAX_SHOWN_RUNNERS = 4;

/** The run workers a page starts: the pool, or one per column the link names when more (at most MAX_SHOWN_RUNNERS). */
function runnerCount(poolSize: number, columns: number): number {
  return Math.max(poolSize, Math.min(columns, MAX_SHOWN_RUNNERS));
}

export interface RunAllCallbacks {
  /** Overall progress 0..1 over all policies. */
  readonly onProgress?: (fraction: number) => void;
  /** Each run's opening window as soon as the run has passed it (any order; before `onRun`). */
  readonly onOpening?: (opening: RunOpening) => void;
  /** How many of the policies (the first ones) are on screen: they all start at once, in workers of their own
   * (more than the pool when need be); the others wait for a free worker. */
  readonly shown?: number;
  /** Each run as soon as it finishes (any order). */
  readonly onRun?: (run: RunResult) => void;
  /**
   * A policy's run failed (a script's runtime error, a bad parameter): with this callback the other policies
   * still run and the result lists only the runs that finished; without it the first failure rejects the lot.
   */
  readonly onFail?: (policy: string, error: unknown) => void;
}

export class SimClient {
  private runners: (Slot | undefined)[] = [];
  private helper: Slot | null = null;
  /** The worker keeping the recorded traces opened (they outlive scenario changes), once one was opened. */
  private traces: Slot | null = null;
  private abort = makeAbort();
  /** Runners with runs in flight, and how many: the ones `cancel()` must terminate. */
  private busy = new Map<Slot, number>();
  /** Which worker keeps each finished run. */
  private handles = new Map<string, Slot>();
  private generation = 0;
  private queries = 0;
  private queryListener: ((inFlight: boolean) => void) | null = null;

  constructor(private readonly poolSize = defaultPoolSize()) {}

  private async call<T>(
    slot: Slot,
    fn: (api: Comlink.Remote<WorkerApi>) => Promise<T>,
    abort?: Abort,
  ): Promise<T> {
    const racers: Promise<T>[] = [fn(slot.api), slot.failed];
    if (abort) racers.push(abort.promise);
    return Promise.race(racers);
  }

  /**
   * Starts compiling the simulator and spawns the helper and the run workers before there is anything to run,
   * so a fresh link's scenario finds them ready: the pool, or one per column when the link names more columns
   * (at most MAX_SHOWN_RUNNERS; each column on screen runs in a worker of its own). Idempotent.
   */
  warm(columns = 0): void {
    void simulatorModule();
    this.getHelper();
    const n = runnerCount(this.poolSize, columns);
    for (let k = 0; k < n; k++) this.runners[k] ??= early.runners.shift() ?? spawn();
  }

  private getHelper(): Slot {
    if (!this.helper) {
      this.helper = early.helper ?? spawn();
      early.helper = null;
    }
    return this.helper;
  }

  /** A call on the helper worker. A helper that threw is dropped: after a wasm trap its instance cannot be trusted. */
  private async onHelper<T>(fn: (api: Comlink.Remote<WorkerApi>) => Promise<T>): Promise<T> {
    const slot = this.getHelper();
    try {
      return await this.call(slot, fn);
    } catch (e) {
      if (this.helper === slot) {
        kill(slot);
        this.helper = null;
      }
      throw e;
    }
  }

  /** null when valid, else the simulator's message naming the field path. */
  validate(json: string): Promise<string | null> {
    return this.onHelper((api) => api.validate(json));
  }

  /** The simulator's script templates. */
  scriptTemplates(): Promise<ScriptTemplate[]> {
    return this.onHelper((api) => api.scriptTemplates());
  }

  /** null when the script compiles, else its syntax error with line and column. */
  checkScript(source: string): Promise<ScriptProblem | null> {
    return this.onHelper((api) => api.checkScript(source));
  }

  /** The scenario's claims judged on `reports`, each with its verdict; `ablations` gives claim K's ablation as
   * far as it ran (its runs' reports, or why they failed), else it is judged as not run yet. */
  claims(
    json: string,
    reports: readonly RunReport[],
    ablations?: Readonly<Record<number, AblationRuns>>,
  ): Promise<ClaimResult[]> {
    return this.onHelper((api) => api.claims(json, reports, ablations));
  }

  /** The estimated cost of running `policies` (all when empty) on the scenario (see `Cost`). */
  cost(json: string, policies: readonly string[]): Promise<Cost> {
    return this.onHelper((api) => api.cost(json, policies));
  }

  /** Claim `k`'s ablation: the scenario with its `without` patch applied, and the policies the claim reads. */
  ablation(json: string, k: number): Promise<Ablation> {
    return this.onHelper((api) => api.ablation(json, k));
  }

  /**
   * Runs every policy (at most poolSize at once); resolves with the runs in `policies` order (those that
   * finished, when `callbacks.onFail` takes the failures). Each run comes with the detail of `opening`, the
   * window the page opens at (worker.ts `run`).
   */
  async runAll(
    json: string,
    policies: readonly string[],
    bucketMs: number,
    opening: DetailWindow,
    callbacks: RunAllCallbacks = {},
  ): Promise<RunResult[]> {
    const abort = this.abort;
    const gen = ++this.generation;
    const fractions = policies.map(() => 0);
    const report = () =>
      callbacks.onProgress?.(fractions.reduce((a, b) => a + b, 0) / Math.max(1, policies.length));
    const results: RunResult[] = new Array<RunResult>(policies.length);
    let next = 0;

    // The columns on screen that run at once wait, once they have sent their opening window, until every one has
    // (or one failed): the cores go to those still short of theirs, and the first complete frame comes sooner.
    const shownCount = Math.min(callbacks.shown ?? 0, MAX_SHOWN_RUNNERS, policies.length);
    const held = new Map<string, Slot>();
    const release = () => {
      for (const [id, slot] of held) void slot.api.resume([id]).catch(() => {});
      held.clear();
    };
    let opened = 0;
    const onOpening = callbacks.onOpening
      ? Comlink.proxy((o: RunOpening) => {
          callbacks.onOpening!(o);
          if (++opened >= shownCount) release();
        })
      : undefined;
    const lane = async (k: number) => {
      while (next < policies.length) {
        const i = next++;
        const policy = policies[i]!;
        const slot = (this.runners[k] ??= spawn());
        const onProgress = Comlink.proxy((f: number) => {
          fractions[i] = f;
          report();
        });
        const runId = `${gen}:${policy}`;
        const hold = onOpening !== undefined && i < shownCount && shownCount > 1 && opened < shownCount;
        if (hold) held.set(runId, slot);
        this.busy.set(slot, (this.busy.get(slot) ?? 0) + 1);
        try {
          const run = await this.call(
            slot,
            (api) => api.run(json, policy, runId, bucketMs, opening, onProgress, onOpening, hold),
            abort,
          );
          this.handles.set(runId, slot);
          fractions[i] = 1;
          report();
          results[i] = run;
          callbacks.onRun?.(run);
        } catch (e) {
          // A run that fails sends no opening window: the held ones need not wait for it.
          release();
          if (!(e instanceof Cancelled) && this.runners[k] === slot) this.drop(slot);
          if (e instanceof Cancelled || !callbacks.onFail || abort !== this.abort) throw e;
          fractions[i] = 1;
          report();
          callbacks.onFail(policy, e);
        } finally {
          const n = (this.busy.get(slot) ?? 1) - 1;
          if (n > 0) this.busy.set(slot, n);
          else this.busy.delete(slot);
        }
      }
    };

    const shown = Math.min(callbacks.shown ?? 0, MAX_SHOWN_RUNNERS);
    const lanes = Math.max(1, Math.min(Math.max(this.poolSize, shown), policies.length));
    await Promise.all(Array.from({ length: lanes }, (_, k) => lane(k)));
    return results.filter((r) => r !== undefined);
  }

  /**
   * Reads the trace file `bytes` named `title` into a recorded run `runId` (worker.ts `openTrace`), kept until
   * released; rejects with the reader's message for a file that is not a trace.
   */
  async openTrace(
    bytes: Uint8Array<ArrayBuffer>,
    title: string,
    runId: string,
    bucketMs: number,
    options: TraceOptions = {},
  ): Promise<RunResult> {
    const slot = (this.traces ??= spawn());
    const result = await this.call(slot, () =>
      slot.api.openTrace(Comlink.transfer(bytes, [bytes.buffer]), title, runId, bucketMs, options),
    );
    this.handles.set(runId, slot);
    return result;
  }

  /** The worker keeping the recorded run `runId`. */
  private traceSlot(runId: string): Slot {
    const slot = this.handles.get(runId);
    if (!slot || slot !== this.traces) throw new Error(`recorded run ${runId} is no longer available`);
    return slot;
  }

  /** The mapping (JSON text) the recorded run `runId` was read with. */
  async traceMapping(runId: string): Promise<string> {
    const slot = this.traceSlot(runId);
    return this.call(slot, (api) => api.traceMapping(runId));
  }

  /** The scenario fitted to the recorded run `runId` (JSON text), run under the scheduler ids `schedulers`. */
  async fittedScenario(runId: string, schedulers: readonly string[]): Promise<string> {
    const slot = this.traceSlot(runId);
    return this.call(slot, (api) => api.fittedScenario(runId, schedulers));
  }

  /** The recorded run's report object and the fitted scenario's runs under `schedulers` (worker.ts). */
  async compareRecorded(runId: string, schedulers: readonly string[]): Promise<readonly RunReport[]> {
    const slot = this.traceSlot(runId);
    return this.call(slot, (api) => api.compareRecorded(runId, schedulers));
  }

  /** Frees the named finished runs in the workers that keep them (runs replaced on screen). */
  release(runIds: readonly string[]): void {
    for (const id of runIds) {
      const slot = this.handles.get(id);
      if (!slot) continue;
      this.handles.delete(id);
      void slot.api.release([id]).catch(() => {});
    }
  }

  /** Terminates a runner and forgets the runs it kept. */
  private drop(slot: Slot): void {
    kill(slot);
    this.busy.delete(slot);
    const k = this.runners.indexOf(slot);
    if (k >= 0) this.runners[k] = undefined;
    for (const [id, s] of this.handles) if (s === slot) this.handles.delete(id);
  }

  /** Stops every run in flight; their promises reject with `Cancelled`. Finished runs stay queryable. */
  cancel(): void {
    // The runs hear of the cancel before their workers stop (which would reject them with another reason).
    const aborted = this.abort;
    this.abort = makeAbort();
    aborted.reject(new Cancelled());
    for (const slot of [...this.busy.keys()]) this.drop(slot);
  }

  /** Stops the runs in flight and frees every finished run (a new scenario is coming). */
  reset(): void {
    this.cancel();
    for (const slot of this.runners) if (slot) void slot.api.release().catch(() => {});
    for (const [id, s] of this.handles) if (s !== this.traces) this.handles.delete(id);
  }

  /** Told when queries start and stop being in flight (the testing idle hook waits for them). */
  onQueries(listener: ((inFlight: boolean) => void) | null): void {
    this.queryListener = listener;
  }

  /** Whether `runId` can still answer queries. */
  has(runId: string): boolean {
    return this.handles.has(runId);
  }

  /**
   * Asks the finished run `runId` a question (worker.ts `queries`: a window's lanes, run queues, decisions, I/O,
   * states and wake latencies, each for the window it names; the whole run's distributions, Lag and inference),
   * in the worker that keeps it.
   */
  async query<K extends QueryName>(runId: string, name: K, ...args: QueryArgs<K>): Promise<QueryResult<K>> {
    const slot = this.handles.get(runId);
    if (!slot) throw new Error(`run ${runId} is no longer available`);
    if (this.queries++ === 0) this.queryListener?.(true);
    try {
      // Comlink's Remote type loses the method's type parameter; the worker's signature is the one above.
      const ask = slot.api.query as unknown as (
        runId: string,
        name: K,
        ...args: QueryArgs<K>
      ) => Promise<QueryResult<K>>;
      return await this.call(slot, () => ask(runId, name, ...args));
    } finally {
      if (--this.queries === 0) this.queryListener?.(false);
    }
  }

  dispose(): void {
    this.reset();
    for (const slot of this.runners) if (slot) kill(slot);
    this.runners = [];
    if (this.helper) kill(this.helper);
    this.helper = null;
    if (this.traces) kill(this.traces);
    this.traces = null;
  }
}
