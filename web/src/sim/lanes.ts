// Schedule segments as the worker hands them to the page: the flat rows of `segments()` split into one lane per
// pCPU, in the worker (so a replayed window reaches the page ready to draw) and transferred, not copied.

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
 * worker does it (worker.ts), so that a replayed window reaches the page ready to draw. A trace records each
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
