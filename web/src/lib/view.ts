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
