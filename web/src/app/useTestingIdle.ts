// `?testing=1`: window.__schedlabIdle turns true once nothing is in flight and the last results
// have been painted (two frames later), so browser tests wait for that instead of guessing.
import { useEffect } from 'react';

declare global {
  interface Window {
    /** `?testing=1`: true once every run is done and drawn. */
    __schedlabIdle?: boolean;
  }
}

export interface IdleInput {
  readonly testing: boolean;
  /** Runs, loads or playhead queries are in flight. */
  readonly inFlight: boolean;
  /** What is drawn: a change waits two more frames before idle again. */
  readonly runs: unknown;
  readonly claims: unknown;
  readonly columns: unknown;
}

export function useTestingIdle({ testing, inFlight, runs, claims, columns }: IdleInput): void {
  useEffect(() => {
    if (!testing) return;
    if (inFlight) {
      window.__schedlabIdle = false;
      return;
    }
    let second = 0;
    const first = requestAnimationFrame(() => {
      second = requestAnimationFrame(() => {
        window.__schedlabIdle = true;
      });
    });
    return () => {
      cancelAnimationFrame(first);
      cancelAnimationFrame(second);
    };
  }, [testing, inFlight, runs, claims, columns]);
}
