import { useEffect, useRef, useState } from 'react';

export interface QueryState<T> {
  readonly value: T | null;
  readonly error: string | null;
}

/**
 * Runs `query` (a memoised closure over what to ask, e.g. the playhead time) at most once per animation frame
 * and with at most one call in flight; while one is in flight only the newest closure waits. So a playing
 * playhead costs one worker round trip per frame, never a growing queue. `null` clears the value.
 */
export function useLatestQuery<T>(query: (() => Promise<T>) | null): QueryState<T> {
  const [state, setState] = useState<QueryState<T>>({ value: null, error: null });
  const wanted = useRef(query);
  const inFlight = useRef(false);
  const frame = useRef(0);
  const alive = useRef(true);

  useEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
      cancelAnimationFrame(frame.current);
      frame.current = 0;
    };
  }, []);

  useEffect(() => {
    wanted.current = query;
    const pump = () => {
      frame.current = 0;
      const q = wanted.current;
      if (!alive.current) return;
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
