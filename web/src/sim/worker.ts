// The simulator's Web Worker: runs one policy at a time so the page never blocks. Exposed with comlink; the
// typed arrays are transferred, not copied.
import * as Comlink from 'comlink';
import init, { Simulation, evaluate_claims, last_panic, validate_scenario } from './pkg/schedsim_wasm.js';
import wasmUrl from './pkg/schedsim_wasm_bg.wasm?url';
import type { ClaimResult, Meta, RunReport, RunResult } from './types';

/** Events per `step` call: small enough to report progress often, large enough to keep the overhead low. */
const STEP_EVENTS = 20_000;
/** Least time between progress messages [ms]. */
const PROGRESS_EVERY_MS = 50;

const ready = init({ module_or_path: wasmUrl });

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

function runToEnd(
  sim: Simulation,
  policy: string,
  bucketMs: number,
  onProgress?: (fraction: number) => void,
): RunResult {
  let last = 0;
  while (!sim.step(STEP_EVENTS)) {
    const now = performance.now();
    if (onProgress && now - last >= PROGRESS_EVERY_MS) {
      last = now;
      void onProgress(sim.progress());
    }
  }
  return {
    policy,
    report: JSON.parse(sim.report_json()) as RunReport,
    meta: JSON.parse(sim.meta_json()) as Meta,
    segments: sim.segments(),
    shares: sim.share_series(bucketMs),
    bucketMs,
  };
}

const api = {
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

  async run(
    json: string,
    policy: string,
    bucketMs: number,
    onProgress?: (fraction: number) => void,
  ): Promise<RunResult> {
    await ready;
    let sim: Simulation | undefined;
    try {
      sim = new Simulation(json, policy);
      const result = runToEnd(sim, policy, bucketMs, onProgress);
      return Comlink.transfer(result, [result.segments.buffer, result.shares.buffer]);
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

  /** Evaluates the scenario's claims over the run objects of its policies. */
  async claims(json: string, reports: readonly RunReport[]): Promise<ClaimResult[]> {
    await ready;
    try {
      return JSON.parse(evaluate_claims(json, JSON.stringify(reports))) as ClaimResult[];
    } catch (e) {
      throw explain(e);
    }
  },
};

export type WorkerApi = typeof api;

Comlink.expose(api);
