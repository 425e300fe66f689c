// The shared playhead and its playback: play/pause at a speed of simulated time, seek, zoom, and stepping to
// the previous or next scheduling decision. The playhead lives outside React state (lib/playhead.ts); the page
// shell reads it only when playback is not moving it.
import { useCallback, useEffect, useState, type Dispatch, type SetStateAction } from 'react';
import type { SimClient } from '../sim/client';
import { toNs } from '../lib/decisions';
import { Playhead, selectTime, selectView, usePlayhead } from '../lib/playhead';
import { START_SPEED } from '../lib/speed';
import { clampView, defaultView, follow, playheadWindow, zoomView, type View } from '../lib/view';
import type { RunResult } from '../sim/types';

/** The page shell follows the playhead only when playback is not moving it. */
const SHELL = { playingMs: Infinity } as const;
/** Longest frame step: a tab coming back from the background does not jump [ms]. */
const MAX_FRAME_MS = 100;

export interface Playback {
  readonly playhead: Playhead;
  readonly playing: boolean;
  readonly setPlaying: Dispatch<SetStateAction<boolean>>;
  /** Simulated ms per wall-clock ms. */
  readonly speed: number;
  readonly setSpeed: Dispatch<SetStateAction<number>>;
  /** The scenario's duration [ms]; 0 before one is loaded. */
  readonly durationMs: number;
  /** Playhead and window as of the last time playback stopped moving them (for the share link, exports). */
  readonly time: number;
  readonly view: View;
  /** A new scenario: stopped, at `time` (clamped), showing `view` or the default window around the playhead. */
  readonly load: (durationMs: number, time?: number | null, view?: View | null) => void;
  /** Stops and moves the playhead to `t` (clamped); shows `view` when given, else follows the playhead. */
  readonly jump: (t: number, view?: View | null) => void;
  /** Plays or pauses; playing from the end starts over. */
  readonly toggle: () => void;
  /** Moves the playhead; the window follows it. */
  readonly seek: (t: number) => void;
  /** Zooms the window around the playhead (factor < 1 zooms in). */
  readonly zoom: (factor: number) => void;
  /** A view's pan or zoom, clamped to the run. */
  readonly onViewChange: (v: View) => void;
}

/** `initialSpeed`: the link's speed, else the page's default. */
export function usePlayback(initialSpeed: number | null = null): Playback {
  const [playhead] = useState(() => new Playhead());
  const [playing, setPlaying] = useState(false);
  const [speed, setSpeed] = useState(initialSpeed ?? START_SPEED);
  const [durationMs, setDurationMs] = useState(0);
  const time = usePlayhead(playhead, selectTime, SHELL);
  const view = usePlayhead(playhead, selectView, SHELL);
  useEffect(() => playhead.set({ playing }), [playhead, playing]);
  useEffect(() => playhead.set({ speed }), [playhead, speed]);

  // Advance the playhead every frame while playing; the timelines' window follows it.
  useEffect(() => {
    if (!playing || durationMs <= 0) return;
    let raf = 0;
    let last = performance.now();
    const tick = (now: number) => {
      const dt = Math.min(now - last, MAX_FRAME_MS);
      last = now;
      const t = Math.min(durationMs, playhead.time + dt * speed);
      playhead.set({ time: t, view: follow(playhead.view, t, durationMs) });
      if (t >= durationMs) setPlaying(false);
      else raf = requestAnimationFrame(tick);
    };
    raf = requestAnimationFrame(tick);
    return () => cancelAnimationFrame(raf);
  }, [playing, speed, durationMs, playhead]);

  const load = useCallback(
    (duration: number, at?: number | null, span?: View | null) => {
      setDurationMs(duration);
      setPlaying(false);
      const t0 = Math.min(Math.max(at ?? 0, 0), duration);
      playhead.set({
        time: t0,
        view: span ? clampView(span, duration) : follow(defaultView(duration), t0, duration),
      });
    },
    [playhead],
  );

  const jump = useCallback(
    (at: number, span?: View | null) => {
      setPlaying(false);
      const t = Math.min(at, durationMs);
      playhead.set({
        time: t,
        view: span ? clampView(span, durationMs) : follow(playhead.view, t, durationMs),
      });
    },
    [durationMs, playhead],
  );

  const toggle = useCallback(() => {
    if (!playing && playhead.time >= durationMs) playhead.set({ time: 0 });
    setPlaying(!playing);
  }, [playing, durationMs, playhead]);

  const seek = useCallback(
    (t: number) => playhead.set({ time: t, view: follow(playhead.view, t, durationMs) }),
    [durationMs, playhead],
  );

  const zoom = useCallback(
    (factor: number) => playhead.set({ view: zoomView(playhead.view, playhead.time, factor, durationMs) }),
    [durationMs, playhead],
  );

  const onViewChange = useCallback(
    (v: View) => playhead.set({ view: clampView(v, durationMs) }),
    [durationMs, playhead],
  );

  return {
    playhead,
    playing,
    setPlaying,
    speed,
    setSpeed,
    durationMs,
    time,
    view,
    load,
    jump,
    toggle,
    seek,
    zoom,
    onViewChange,
  };
}

/**
 * Moves the playhead to the previous (-1) or next (1) scheduling decision of `run` (the first column shown) within
 * the window of detail around the playhead; does nothing without a run.
 */
export function useDecisionStep(
  client: SimClient,
  run: RunResult | undefined,
  playback: Pick<Playback, 'playhead' | 'setPlaying' | 'seek'>,
): (dir: 1 | -1) => Promise<void> {
  const { playhead, setPlaying, seek } = playback;
  return useCallback(
    async (dir: 1 | -1) => {
      if (run === undefined) return;
      setPlaying(false);
      try {
        const w = playheadWindow(playhead.get(), run.capNs / 1e6, run.meta.duration_ns / 1e6);
        const t = await client.query(run.runId, 'adjacentDecision', w, toNs(playhead.time), dir);
        if (t !== null) seek(t / 1e6);
      } catch {
        // The run was released (a new scenario is loading): nothing to step through.
      }
    },
    [client, run, seek, playhead, setPlaying],
  );
}
