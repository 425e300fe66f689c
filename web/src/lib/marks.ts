// Cold-start marks: `performance.mark`s on the page's timeline from a fresh link to the first
// complete frame, so a benchmark (e2e/bench/) can read where the time went: the library and scenario fetched,
// the scenario validated, each run's wasm ready, started, simulated, packed and received, and the first frame
// with every column drawn. Marks cost next to nothing, so the page always sets them; nothing reads them but
// the benchmark and DevTools.
import { useEffect } from 'react';
import type { RunTiming } from '../sim/types';

/** Every mark's name starts with this. */
export const MARK_PREFIX = 'schedlab:';
/** The first frame in which every column on screen has its run drawn (`markOnce` name). */
export const FIRST_FRAME = 'first-frame';

const marked = new Set<string>();

/** Marks `name` now, or at `epochMs` (an instant from another thread); only the first call per name counts. */
export function markOnce(name: string, epochMs?: number): void {
  const full = `${MARK_PREFIX}${name}`;
  if (marked.has(full) || typeof performance === 'undefined' || !performance.mark) return;
  marked.add(full);
  const startTime = epochMs === undefined ? undefined : Math.max(0, epochMs - performance.timeOrigin);
  performance.mark(full, startTime === undefined ? undefined : { startTime });
}

/** Marks a run's instants in its worker and its arrival here (`run:POLICY:STAGE`), once per policy. */
export function markRun(policy: string, timing: RunTiming | undefined): void {
  if (timing) {
    markOnce(`run:${policy}:wasm-ready`, timing.wasmReady);
    markOnce(`run:${policy}:called`, timing.called);
    markOnce(`run:${policy}:simulated`, timing.simulated);
    markOnce(`run:${policy}:packed`, timing.packed);
  }
  markOnce(`run:${policy}:received`);
}

/**
 * Marks `name` once `drawn` is true and the browser has painted it: the mark goes in at the next animation frame
 * after the commit that drew it (canvases are drawn in layout effects, before that frame's paint), the way
 * `useTestingIdle` waits for a painted frame.
 */
export function useMarkWhenDrawn(name: string, drawn: boolean): void {
  useEffect(() => {
    if (!drawn) return;
    const frame = requestAnimationFrame(() => markOnce(name));
    return () => cancelAnimationFrame(frame);
  }, [name, drawn]);
}
