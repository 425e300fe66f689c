// The event log's window of scheduling decisions around the playhead, as the worker picks it from the decisions
// a detail window holds.
import type { Decision } from './types';

export interface DecisionWindow {
  readonly items: readonly Decision[];
  /** Index in `items` of the decision at or before the playhead, or -1 if the playhead is before all of them. */
  readonly current: number;
}

/** Index of the last decision at or before `tNs` in a list sorted by time, or -1. */
export function lastAtOrBefore(list: readonly Decision[], tNs: number): number {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (list[mid]!.t_ns <= tNs) lo = mid + 1;
    else hi = mid;
  }
  return lo - 1;
}

/**
 * The `before` decisions up to and including the one at or before `tNs` and the `after` decisions following it,
 * from a time-sorted list that covers at least that much around `tNs`.
 */
export function selectWindow(
  list: readonly Decision[],
  tNs: number,
  before: number,
  after: number,
): DecisionWindow {
  const at = lastAtOrBefore(list, tNs);
  const from = Math.max(0, at - Math.max(0, before - 1));
  const to = Math.min(list.length, at + 1 + Math.max(0, after));
  return { items: list.slice(from, to), current: at < 0 ? -1 : at - from };
}
