// The simulator's Web Worker: runs one policy at a time so the page never blocks. Exposed with comlink; the
// typed arrays are transferred, not copied. A finished run stays alive here, keyed by its run id, so the page can
// ask about the playhead (run queues, decisions) and the distributions until it releases the run.
import * as Comlink from 'comlink';
import init, { Simulation, evaluate_claims, last_panic, validate_scenario } from './pkg/schedsim_wasm.js';
import wasmUrl from './pkg/schedsim_wasm_bg.wasm?url';
import { selectWindow, type Decision, type DecisionWindow } from '../lib/decisions';
import type {
  BeliefRec,
  BoostRec,
  ClaimResult,
  DistributionMetric,
  Inference,
  IoRec,
  LagData,
  Meta,
  RunQueueSnap,
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

const ready = init({ module_or_path: wasmUrl });

/** Finished runs, by run id, until the page releases them. */
const sims = new Map<string, Simulation>();

function sim(runId: string): Simulation {
  const s = sims.get(runId);
  if (!s) throw new Error(`run ${runId} is no longer available`);
  return s;
}

function decisions(s: Simulation, fromNs: number, toNs: number, limit: number): Decision[] {
  return JSON.parse(s.decisions_json(fromNs, toNs, limit)) as Decision[];
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

async function runToEnd(
  sim: Simulation,
  policy: string,
  runId: string,
  bucketMs: number,
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
  return {
    policy,
    runId,
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

  /** Runs one policy to the end and keeps the run as `runId` until `release`. */
  async run(
    json: string,
    policy: string,
    runId: string,
    bucketMs: number,
    onProgress?: (fraction: number) => void,
  ): Promise<RunResult> {
    await ready;
    let sim: Simulation | undefined;
    try {
      sim = new Simulation(json, policy);
      const result = await runToEnd(sim, policy, runId, bucketMs, onProgress);
      sims.get(runId)?.free();
      sims.set(runId, sim);
      sim = undefined;
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

  /** Frees the named runs (all of them without a list). */
  release(runIds?: readonly string[]): void {
    for (const id of runIds ?? [...sims.keys()]) {
      sims.get(id)?.free();
      sims.delete(id);
    }
  },

  /** Every pCPU's run queue at `tNs` (null for a pCPU before its first snapshot). */
  runqueues(runId: string, tNs: number): (RunQueueSnap | null)[] {
    try {
      return JSON.parse(sim(runId).runqueues_json(tNs)) as (RunQueueSnap | null)[];
    } catch (e) {
      throw explain(e);
    }
  },

  /** Decisions in [fromNs, toNs), at most `limit` (the trace window export). */
  decisionsBetween(runId: string, fromNs: number, toNs: number, limit: number): Decision[] {
    try {
      return decisions(sim(runId), fromNs, toNs, limit);
    } catch (e) {
      throw explain(e);
    }
  },

  /** The `before` decisions up to the one at or before `tNs`, and the `after` ones following it. */
  decisionsAround(runId: string, tNs: number, before: number, after: number): DecisionWindow {
    try {
      const s = sim(runId);
      const earlier = decisionsBefore(s, tNs + 1, before);
      const later = decisions(s, tNs + 1, END_NS, after);
      return selectWindow([...earlier, ...later], tNs, before, after);
    } catch (e) {
      throw explain(e);
    }
  },

  /** Time [ns] of the first decision after `tNs` (dir 1) or the last one before it (dir -1), or null. */
  adjacentDecision(runId: string, tNs: number, dir: 1 | -1): number | null {
    try {
      const s = sim(runId);
      const found = dir > 0 ? decisions(s, tNs + 1, END_NS, 1) : decisionsBefore(s, tNs, 1);
      return found[0]?.t_ns ?? null;
    } catch (e) {
      throw explain(e);
    }
  },

  /** The policy's task inference over the whole run (beliefs, BelThreshold, partial boosts), or null. */
  inference(runId: string): Inference | null {
    try {
      const s = sim(runId);
      const threshold = s.belief_threshold();
      if (threshold === undefined) return null;
      return {
        threshold,
        beliefs: JSON.parse(s.beliefs_json(-1)) as BeliefRec[],
        boosts: JSON.parse(s.boosts_json()) as BoostRec[],
      };
    } catch (e) {
      throw explain(e);
    }
  },

  /** Event-channel notifications with `fromNs <= t < toNs`, at most `limit`. */
  ioEvents(runId: string, fromNs: number, toNs: number, limit: number): IoRec[] {
    try {
      return JSON.parse(sim(runId).io_events_json(fromNs, toNs, limit)) as IoRec[];
    } catch (e) {
      throw explain(e);
    }
  },

  /** A domain's distribution as flattened (value_ms, count) pairs in increasing value. */
  distribution(runId: string, domain: number, metric: DistributionMetric): Float64Array {
    try {
      const d = sim(runId).distribution(domain, metric);
      return Comlink.transfer(d, [d.buffer]);
    } catch (e) {
      throw explain(e);
    }
  },

  /** Every vCPU's Lag over time (paper 001, equation 1). */
  lag(runId: string): LagData {
    try {
      return JSON.parse(sim(runId).lag_json()) as LagData;
    } catch (e) {
      throw explain(e);
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
