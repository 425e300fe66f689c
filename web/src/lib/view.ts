// The shared time window of the timelines [ms].

export type View = readonly [number, number];

/** Opening window: long enough to see several time slices, short enough to tell them apart. */
export function defaultView(durationMs: number): View {
  const w = Math.min(durationMs, Math.max(Math.min(durationMs, 100), Math.min(durationMs / 20, 2000)));
  return [0, w];
}

/** Where the playhead sits in a window that follows it while playing (fraction of the width). */
export const FOLLOW_AT = 0.3;

/** The window that keeps `t` at FOLLOW_AT of its width, clamped to the run; the same object if unchanged. */
export function follow(view: View, t: number, durationMs: number): View {
  const w = view[1] - view[0];
  if (w >= durationMs) return view;
  const t0 = Math.min(Math.max(t - FOLLOW_AT * w, 0), durationMs - w);
  return t0 === view[0] ? view : [t0, t0 + w];
}

/** A window clamped into [0, durationMs] keeping its width where possible. */
export function clampView(view: View, durationMs: number): View {
  const w = Math.min(Math.max(view[1] - view[0], 1e-6), durationMs);
  const t0 = Math.min(Math.max(view[0], 0), durationMs - w);
  return [t0, t0 + w];
}

/** Narrowest window the zoom allows [ms] (the timeline's wheel zoom stops there too). */
export const MIN_WINDOW_MS = 0.05;

/**
 * The window `factor` times as wide (0.5 zooms in, 2 out), keeping the playhead `t` at the same place on screen
 * when it is inside the window (else zooming about the window's centre); clamped to the run.
 */
export function zoomView(view: View, t: number, factor: number, durationMs: number): View {
  const [a, b] = view;
  const w = b - a;
  const next = Math.min(Math.max(w * factor, Math.min(MIN_WINDOW_MS, durationMs)), durationMs);
  const anchor = t >= a && t <= b ? t : (a + b) / 2;
  const t0 = anchor - (anchor - a) * (next / w);
  return clampView([t0, t0 + next], durationMs);
}

/**
 * The window [from, to] of a replay run's detail to hold for the view `[t0, t1]` [ms] (issue 19): the grid cell
 * of the view's width that the view starts in and the next one, so a view that follows the playhead needs a new
 * window once per width, and up to two widths more ahead as far as `capMs` (the longest window the run replays,
 * for its memory) allows. When not even two widths fit, `capMs` from the view's start (in quarter steps): the
 * view is covered only in part; when not even one fits, `capMs` around the playhead `t` if it is given (so the
 * lanes show the time the run queues and the log show), within the view. Within [0, durationMs].
 */
export function detailWindow([t0, t1]: View, capMs: number, durationMs: number, t?: number): View {
  const w = Math.max(t1 - t0, MIN_WINDOW_MS);
  const len = Math.max(MIN_WINDOW_MS, Math.min(capMs, 4 * w));
  // Steps of a quarter window when it is shorter than two views, so that it still moves in steps, not per frame.
  const step = len >= 2 * w ? w : len / 4;
  // Centred on the playhead to the nearest step (a quarter window: the playhead stays inside).
  const from =
    len < w && t !== undefined
      ? Math.round(Math.min(Math.max(t - len / 2, t0), t1 - len) / step) * step
      : Math.floor(t0 / step) * step;
  return [Math.max(0, from), Math.min(durationMs, from + len)];
}

/** Slack of `covers` [ms]: windows cross to the worker in whole nanoseconds. */
const COVER_SLACK_MS = 1e-3;

/** Whether the held window [from, to] covers the one wanted [ms] (to within a microsecond of rounding). */
export function covers(held: View | null, wanted: View): boolean {
  return held !== null && held[0] <= wanted[0] + COVER_SLACK_MS && wanted[1] <= held[1] + COVER_SLACK_MS;
}
