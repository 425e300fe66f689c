// Helpers over the flat typed arrays the simulator hands back (DESIGN.md 6): schedule segments as rows of 5
// numbers and share series as a buckets x domains matrix. Pure functions, so they are unit-tested and cheap
// to memoize.
import { bisectRight } from 'd3-array';

/** Columns of one row of `Simulation.segments()`. */
export const SEGMENT_COLS = 5;

/** One pCPU's segments, sorted by start; times in ms. Segments on one pCPU never overlap, so `end` is sorted too. */
export interface Lane {
  readonly start: Float64Array;
  readonly end: Float64Array;
  readonly vcpu: Int32Array;
  /** Task index into meta.tasks, -1 for the guest's idle loop. */
  readonly task: Int32Array;
}

/**
 * Splits flat segments `[pcpu, start_ns, end_ns, vcpu, task]*` into per-pCPU lanes sorted by start (ms). The run's
 * worker does it (sim/worker.ts), so that a replayed window reaches the page ready to draw. A trace records each
 * pCPU's segments in time order, so a lane is sorted only when it is not already (by start in ns, stably, as the
 * rows come).
 */
export function splitSegments(flat: Float64Array, pcpus: number): Lane[] {
  const rows = Math.floor(flat.length / SEGMENT_COLS);
  const counts = new Int32Array(Math.max(0, pcpus));
  for (let r = 0; r < rows; r++) {
    const p = flat[r * SEGMENT_COLS]!;
    if (p >= 0 && p < pcpus) counts[p]! += 1;
  }
  const lanes = Array.from(counts, emptyLane);
  const filled = new Int32Array(counts.length);
  const lastNs = new Float64Array(counts.length).fill(-Infinity);
  const unsorted = new Uint8Array(counts.length);
  for (let r = 0; r < rows; r++) {
    const o = r * SEGMENT_COLS;
    const p = flat[o]!;
    if (!(p >= 0 && p < pcpus)) continue;
    if (flat[o + 1]! < lastNs[p]!) unsorted[p] = 1;
    lastNs[p] = flat[o + 1]!;
    copyRow(flat, o, lanes[p]!, filled[p]!);
    filled[p]! += 1;
  }
  return lanes.map((lane, p) => (unsorted[p] ? sortedLane(flat, rows, p) : lane));
}

function emptyLane(n: number): Lane {
  return {
    start: new Float64Array(n),
    end: new Float64Array(n),
    vcpu: new Int32Array(n),
    task: new Int32Array(n),
  };
}

/** Copies the flat row at offset `o` into the lane's `i`-th segment (times in ms). */
function copyRow(flat: Float64Array, o: number, lane: Lane, i: number): void {
  lane.start[i] = flat[o + 1]! / 1e6;
  lane.end[i] = flat[o + 2]! / 1e6;
  lane.vcpu[i] = flat[o + 3]!;
  lane.task[i] = flat[o + 4]!;
}

/** pCPU `p`'s lane of the first `rows` rows of `flat`, sorted by start in ns (rows of equal start as they come). */
function sortedLane(flat: Float64Array, rows: number, p: number): Lane {
  const order: number[] = [];
  for (let r = 0; r < rows; r++) if (flat[r * SEGMENT_COLS] === p) order.push(r);
  order.sort((a, b) => flat[a * SEGMENT_COLS + 1]! - flat[b * SEGMENT_COLS + 1]!);
  const lane = emptyLane(order.length);
  order.forEach((r, i) => copyRow(flat, r * SEGMENT_COLS, lane, i));
  return lane;
}

/** The buffers that hold `lanes`, to transfer them to another thread rather than copy them. */
export function laneBuffers(lanes: readonly Lane[]): ArrayBuffer[] {
  return lanes.flatMap((l) => [l.start.buffer, l.end.buffer, l.vcpu.buffer, l.task.buffer] as ArrayBuffer[]);
}

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
