// The shared playhead and time window, outside React. Playback moves them every animation frame; if they were
// React state the whole page (four columns of charts, tables and logs) would re-render 60 times a second. Each
// view subscribes instead, at the rate it needs: playhead lines and the timeline every frame, text views a few
// times a second, the page shell only when playback stops.
import { useCallback, useEffect, useLayoutEffect, useRef, useState } from 'react';
import type { View } from './view';

export interface PlayheadState {
  /** Playhead [ms]. */
  readonly time: number;
  /** Visible time window of the timelines [ms]. */
  readonly view: View;
  /** Playback is moving them every frame. */
  readonly playing: boolean;
  /** Playback speed [simulated ms per wall-clock ms]. */
  readonly speed: number;
}

export class Playhead {
  private state: PlayheadState;
  private readonly listeners = new Set<(s: PlayheadState) => void>();

  constructor(time = 0, view: View = [0, 1]) {
    this.state = { time, view, playing: false, speed: 1 };
  }

  get(): PlayheadState {
    return this.state;
  }

  get time(): number {
    return this.state.time;
  }

  get view(): View {
    return this.state.view;
  }

  /** Moves the playhead and/or the window; listeners hear of it only when something changed. */
  set(next: Partial<PlayheadState>): void {
    const time = next.time ?? this.state.time;
    const view = next.view ?? this.state.view;
    const playing = next.playing ?? this.state.playing;
    const speed = next.speed ?? this.state.speed;
    const same = time === this.state.time && view === this.state.view && playing === this.state.playing;
    if (same && speed === this.state.speed) return;
    this.state = { time, view, playing, speed };
    for (const l of this.listeners) l(this.state);
  }

  subscribe(listener: (s: PlayheadState) => void): () => void {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
}

export interface PlayheadOptions {
  /**
   * Least time between updates while playing [ms]: 0 follows every frame, Infinity waits for playback to stop
   * (a page shell). Whenever playback is stopped every change shows at once (scrubbing, stepping).
   */
  readonly playingMs?: number;
  /** Whether the view is on screen: off screen it skips playback, and catches up when it comes back. */
  readonly visible?: boolean;
}

/**
 * Calls `draw(state)` on playhead changes at the rate the caller needs (see PlayheadOptions), outside React: for
 * views that write the DOM or a canvas themselves, so a playing frame costs them no render. Throttled updates are
 * trailing, so the last position always shows; `draw` also runs on subscribing (catching up with whatever moved
 * meanwhile) and whenever it changes (off screen while playing: once back in sight or stopped).
 */
export function usePlayheadEffect(
  playhead: Playhead,
  draw: (s: PlayheadState) => void,
  { playingMs = 0, visible = true }: PlayheadOptions = {},
): void {
  const drawRef = useRef(draw);
  const shown = useRef(visible);
  useLayoutEffect(() => {
    shown.current = visible;
  }, [visible]);
  // A new `draw` (new data, a new size) draws at once, except off screen while playing: then it waits until the
  // view scrolls into sight or playback stops (the subscription below draws then), as playing frames do.
  useLayoutEffect(() => {
    drawRef.current = draw;
    const s = playhead.get();
    if (shown.current || !s.playing) draw(s);
  }, [draw, playhead]);

  useLayoutEffect(() => {
    let last = -Infinity;
    let timer = 0;
    const apply = () => {
      clearTimeout(timer);
      timer = 0;
      last = performance.now();
      drawRef.current(playhead.get());
    };
    apply();
    const unsubscribe = playhead.subscribe((s) => {
      if (!s.playing) apply();
      else if (!visible || timer !== 0) return;
      else {
        const wait = last + playingMs - performance.now();
        if (wait <= 0) apply();
        else if (Number.isFinite(wait)) timer = window.setTimeout(apply, wait);
      }
    });
    return () => {
      unsubscribe();
      clearTimeout(timer);
    };
  }, [playhead, playingMs, visible]);
}

/**
 * `select(state)` of the playhead, re-rendering the caller at the rate it needs (see PlayheadOptions). Throttled
 * updates are trailing, so the last position always shows. `select` should return equal (===) values for
 * states the caller draws alike: unchanged selections cost no render.
 */
export function usePlayhead<T>(
  playhead: Playhead,
  select: (s: PlayheadState) => T,
  options: PlayheadOptions = {},
): T {
  const [value, setValue] = useState(() => select(playhead.get()));
  const selectRef = useRef(select);
  useEffect(() => {
    selectRef.current = select;
  }, [select]);
  const update = useCallback((s: PlayheadState) => setValue(() => selectRef.current(s)), []);
  usePlayheadEffect(playhead, update, options);
  return value;
}

export const selectTime = (s: PlayheadState): number => s.time;
export const selectView = (s: PlayheadState): View => s.view;
export const selectPlaying = (s: PlayheadState): boolean => s.playing;
