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

/** A number in a decision's reason: a credit, a time, a count (not a digit inside a name such as dom0 or pCPU1). */
const VALUE = /(?<![\w.])[-−+]?\d+(?:\.\d+)?(?![\w.])/g;

/**
 * A decision's reason cut into its words and its values, in order, so a lesson can hide the values (what a
 * prediction asks about) and keep the words (what the scheduler did).
 */
export function splitValues(text: string): { readonly text: string; readonly value: boolean }[] {
  const out: { text: string; value: boolean }[] = [];
  let at = 0;
  for (const m of text.matchAll(VALUE)) {
    if (m.index > at) out.push({ text: text.slice(at, m.index), value: false });
    out.push({ text: m[0], value: true });
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push({ text: text.slice(at), value: false });
  return out;
}
