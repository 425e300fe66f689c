// The shared time window of the timelines [ms], and the window of detail [ns] the views ask the worker for.
import type { DetailWindow } from '../sim/types';

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

/** How far ahead a playing window reaches, in wall-clock time of playback [ms]: its detail is asked for well before
 * the view gets there, so the views never wait for it at the edge. */
const LEAD_WALL_MS = 1000;
/** The most view widths that lead adds to a window: a window's detail stays small enough to draw. */
const LEAD_MAX_WIDTHS = 60;

/** What the window of detail depends on: the playhead and the window on screen, and playback. */
export interface WindowState {
  /** [ms] */
  readonly view: View;
  /** Playhead [ms]. */
  readonly time: number;
  readonly playing: boolean;
  /** Simulated ms per wall-clock ms. */
  readonly speed: number;
}

/**
 * The window of detail [ns] every view of a column asks for while the timelines show `view` (the one place it
 * is decided; the worker replays and keeps each window asked for). Four view widths from the grid cell the view
 * starts in, plus, while playing, what playback covers in LEAD_WALL_MS; the grid's step is a width, or half the
 * lead when it is longer, so a view that follows the playhead needs a new window once per step, not per frame.
 * Cut to `capMs` (the longest window the run replays, for its memory): when not even two widths fit, `capMs`
 * from the view's start in quarter steps (the view is covered only in part); when not even one fits, `capMs`
 * around the playhead, within the view (so the lanes show the time the run queues and the log show). Within
 * [0, durationMs].
 */
export function detailWindow(s: WindowState, capMs: number, durationMs: number): DetailWindow {
  const [t0, t1] = s.view;
  const w = Math.max(t1 - t0, MIN_WINDOW_MS);
  const lead = s.playing ? Math.min(s.speed * LEAD_WALL_MS, LEAD_MAX_WIDTHS * w) : 0;
  const len = Math.max(MIN_WINDOW_MS, Math.min(capMs, 4 * w + lead));
  // Steps of a quarter window when it is shorter than two views, so that it still moves in steps, not per frame.
  const step = len >= 2 * w ? Math.max(w, (len - 2 * w) / 2) : len / 4;
  // Centred on the playhead to the nearest step (a quarter window: the playhead stays inside).
  const t = s.time;
  const from =
    len < w
      ? Math.round(Math.min(Math.max(t - len / 2, t0), t1 - len) / step) * step
      : Math.floor(t0 / step) * step;
  return nsWindow(Math.max(0, from), Math.min(durationMs, from + len));
}

/**
 * The window of detail for a question about the playhead (run queues, the log, stepping): the timelines' window
 * when it holds the playhead (the same window, so no second replay), else the one a view of the same width
 * following the playhead would ask for.
 */
export function playheadWindow(s: WindowState, capMs: number, durationMs: number): DetailWindow {
  const shown = detailWindow(s, capMs, durationMs);
  const t = Math.round(s.time * 1e6);
  if (shown.from_ns <= t && t < shown.to_ns) return shown;
  const w = s.view[1] - s.view[0];
  return detailWindow({ ...s, view: follow([s.time, s.time + w], s.time, durationMs) }, capMs, durationMs);
}

/** [from, to] [ms] as a window in whole nanoseconds. */
export function nsWindow(fromMs: number, toMs: number): DetailWindow {
  return { from_ns: Math.round(fromMs * 1e6), to_ns: Math.round(toMs * 1e6) };
}

/** Whether window `a` holds all of window `b` (null holds nothing). */
export function covers(a: DetailWindow | null, b: DetailWindow): boolean {
  return a !== null && a.from_ns <= b.from_ns && b.to_ns <= a.to_ns;
}

/** A window as text (a React key, a store selector's value: equal windows, equal text). */
export function windowKey(w: DetailWindow): string {
  return `${w.from_ns} ${w.to_ns}`;
}

/** The window a key was made from. */
export function parseWindowKey(key: string): DetailWindow {
  const [a, b] = key.split(' ').map(Number) as [number, number];
  return { from_ns: a, to_ns: b };
}
