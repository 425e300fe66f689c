// Scheduling decisions on the page: the event log's window around the playhead (picked in the worker,
// sim/decisionWindow.ts) and the playhead's time in the trace's nanoseconds.

import type { Decision } from '../sim/types';

/** One scheduling decision with its one-line reason (the simulator's `decisions_json`). */
export type { Decision };

export { lastAtOrBefore, selectWindow, type DecisionWindow } from '../sim/decisionWindow';

/** Playhead [ms] -> trace time [ns], rounded so a decision's own time maps back onto it exactly. */
export function toNs(ms: number): number {
  return Math.max(0, Math.round(ms * 1e6));
}
