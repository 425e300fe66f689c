// Helpers over the flat typed arrays the simulator hands back: schedule segments as rows of 5
// numbers and share series as a buckets x domains matrix. Pure functions, so they are unit-tested and cheap
// to memoize.
import { bisectRight } from 'd3-array';

export { SEGMENT_COLS, laneBuffers, splitSegments, type Lane } from '../sim/lanes';
import type { Lane } from '../sim/lanes';

/** Index range [lo, hi) of the lane's segments that intersect the time window [t0, t1] (ms). */
export function visibleRange(lane: Lane, t0: number, t1: number): [number, number] {
  // First segment ending after t0, first segment starting after t1.
  const lo = bisectRight(lane.end, t0);
  const hi = bisectRight(lane.start, t1);
  return [lo, Math.max(lo, hi)];
}

/** Index of the segment running at time t (ms), or -1 if the pCPU is idle then. */
export function segmentAt(lane: Lane, t: number): number {
  const i = bisectRight(lane.start, t) - 1;
  return i >= 0 && t < lane.end[i]! ? i : -1;
}

/** Total number of segments over all lanes. */
export function segmentCount(lanes: readonly Lane[]): number {
  return lanes.reduce((n, l) => n + l.start.length, 0);
}

/** Splits a `share_series` matrix (rows = buckets, cols = domains) into one series per domain. */
export function shareColumns(flat: Float64Array, domains: number): Float64Array[] {
  if (domains <= 0) return [];
  const rows = Math.floor(flat.length / domains);
  return Array.from({ length: domains }, (_, d) => {
    const col = new Float64Array(rows);
    for (let r = 0; r < rows; r++) col[r] = flat[r * domains + d]!;
    return col;
  });
}

/** A share bucket width (ms) from a 1-2-5 ladder giving at most `target` buckets over the run. */
export function chooseBucketMs(durationMs: number, target = 100): number {
  const raw = Math.max(durationMs / target, 1);
  const pow = 10 ** Math.floor(Math.log10(raw));
  for (const m of [1, 2, 5, 10]) if (m * pow >= raw) return m * pow;
  return 10 * pow;
}

/** Bucket index holding time t (ms), clamped to the series. */
export function bucketAt(t: number, bucketMs: number, buckets: number): number {
  if (buckets <= 0) return -1;
  return Math.min(buckets - 1, Math.max(0, Math.floor(t / bucketMs)));
}
