// Helpers for the belief view: the trace's belief changes (all tasks, time order) split into one step series per
// task, and lookups by time for the playhead legend and the hover tooltip. Pure, so they are unit-tested.
import { bisectRight } from 'd3-array';
import type { BeliefRec } from '../sim/types';

/** One task's degree of belief as a step function: `belief[i]` holds from `t[i]` until `t[i + 1]` (ms). */
export interface BeliefSeries {
  /** Index into meta.tasks. */
  readonly task: number;
  readonly t: Float64Array;
  readonly belief: Float64Array;
  /** Highest degree of belief reached. */
  readonly peak: number;
}

/**
 * The series of every task with at least one change, in task order. Each starts at 0 at time 0, the inference's
 * initial degree of belief (paper 000 3.3), so a line covers the whole run.
 */
export function beliefSeries(records: readonly BeliefRec[]): BeliefSeries[] {
  const byTask = new Map<number, BeliefRec[]>();
  for (const r of records) {
    const list = byTask.get(r.task);
    if (list) list.push(r);
    else byTask.set(r.task, [r]);
  }
  return [...byTask.keys()]
    .sort((a, b) => a - b)
    .map((task) => {
      const list = byTask.get(task)!;
      const t = new Float64Array(list.length + 1);
      const belief = new Float64Array(list.length + 1);
      let peak = 0;
      list.forEach((r, i) => {
        t[i + 1] = r.t_ns / 1e6;
        belief[i + 1] = r.belief;
        peak = Math.max(peak, r.belief);
      });
      return { task, t, belief, peak };
    });
}

/** The degree of belief in force at `tMs`. */
export function beliefAt(s: BeliefSeries, tMs: number): number {
  const i = bisectRight(s.t, tMs) - 1;
  return s.belief[Math.max(0, i)] ?? 0;
}

/** Index of the time in the sorted `times` nearest to `t`, if it is within `tolerance`; else -1. */
export function nearestWithin(times: ArrayLike<number>, t: number, tolerance: number): number {
  let lo = 0;
  let hi = times.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (times[mid]! < t) lo = mid + 1;
    else hi = mid;
  }
  let best = -1;
  let bestD = tolerance;
  for (const i of [lo - 1, lo]) {
    if (i < 0 || i >= times.length) continue;
    const d = Math.abs(times[i]! - t);
    if (d <= bestD) {
      best = i;
      bestD = d;
    }
  }
  return best;
}
