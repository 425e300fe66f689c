import { useEffect, useRef, useState } from 'react';

/** Least time between refreshes of a text view while playing [ms]: readable, and a few layouts a second. */
export const PLAYING_REFRESH_MS = 100;

export interface QueryState<T> {
  readonly value: T | null;
  readonly error: string | null;
}

/**
 * Runs `query` (a memoised closure over what to ask, e.g. the playhead time) at most once per animation frame
 * and with at most one call in flight; while one is in flight only the newest closure waits. So a playing
 * playhead costs one worker round trip per frame, never a growing queue. `null` clears the value.
 * `minIntervalMs` spaces calls further apart (text views while playing: nobody reads 60 updates a second, and
 * each one re-lays out the page); 0 answers every frame.
 */
export function useLatestQuery<T>(query: (() => Promise<T>) | null, minIntervalMs = 0): QueryState<T> {
  const [state, setState] = useState<QueryState<T>>({ value: null, error: null });
  const wanted = useRef(query);
  const inFlight = useRef(false);
  const frame = useRef(0);
  const alive = useRef(true);
  const lastStart = useRef(-Infinity);
  const timer = useRef(0);
  const interval = useRef(minIntervalMs);
  useEffect(() => {
    interval.current = minIntervalMs;
  }, [minIntervalMs]);

  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
      cancelAnimationFrame(frame.current);
      clearTimeout(timer.current);
      frame.current = 0;
    };
  }, []);

  useEffect(() => {
    wanted.current = query;
    const pump = () => {
      frame.current = 0;
      const q = wanted.current;
      if (!alive.current) return;
      const wait = lastStart.current + interval.current - performance.now();
      if (q && wait > 0) {
        // Too soon: come back when the interval is over (frame.current stays set, so nothing else schedules).
        frame.current = -1;
        timer.current = window.setTimeout(() => {
          frame.current = requestAnimationFrame(pump);
        }, wait);
        return;
      }
      lastStart.current = performance.now();
      if (!q) {
        setState({ value: null, error: null });
        return;
      }
      inFlight.current = true;
      q()
        .then(
          (value) => alive.current && setState({ value, error: null }),
          (e: unknown) =>
            alive.current && setState({ value: null, error: e instanceof Error ? e.message : String(e) }),
        )
        .finally(() => {
          inFlight.current = false;
          if (alive.current && wanted.current !== q && frame.current === 0)
            frame.current = requestAnimationFrame(pump);
        })
        .catch(() => {});
    };
    if (!inFlight.current && frame.current === 0) frame.current = requestAnimationFrame(pump);
  }, [query]);

  return state;
}
