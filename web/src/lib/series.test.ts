import { describe, expect, it } from 'vitest';
import {
  bucketAt,
  chooseBucketMs,
  laneBuffers,
  segmentAt,
  segmentCount,
  shareColumns,
  splitSegments,
  visibleRange,
} from './series';

const MS = 1e6;
// pcpu, start_ns, end_ns, vcpu, task; deliberately out of order.
// prettier-ignore
const flat = new Float64Array([
  1, 5 * MS, 9 * MS, 2, -1,
  0, 10 * MS, 20 * MS, 1, 0,
  0, 0, 10 * MS, 0, 1,
  0, 25 * MS, 30 * MS, 0, -1,
  7, 0, 1, 0, 0, // pCPU out of range: dropped, not a crash
]);

describe('splitSegments', () => {
  const lanes = splitSegments(flat, 2);

  it('groups by pCPU, sorts by start and converts to ms', () => {
    expect(lanes).toHaveLength(2);
    expect([...lanes[0]!.start]).toEqual([0, 10, 25]);
    expect([...lanes[0]!.end]).toEqual([10, 20, 30]);
    expect([...lanes[0]!.vcpu]).toEqual([0, 1, 0]);
    expect([...lanes[0]!.task]).toEqual([1, 0, -1]);
    expect([...lanes[1]!.start]).toEqual([5]);
    expect(segmentCount(lanes)).toBe(4);
  });

  it('finds the segments in a window', () => {
    const lane = lanes[0]!;
    expect(visibleRange(lane, 12, 26)).toEqual([1, 3]);
    expect(visibleRange(lane, 21, 24)).toEqual([2, 2]); // a gap: nothing visible
    expect(visibleRange(lane, -5, 100)).toEqual([0, 3]);
    expect(visibleRange(lane, 40, 50)).toEqual([3, 3]);
  });

  it('finds the segment running at a time', () => {
    const lane = lanes[0]!;
    expect(segmentAt(lane, 0)).toBe(0);
    expect(segmentAt(lane, 10)).toBe(1);
    expect(segmentAt(lane, 22)).toBe(-1);
    expect(segmentAt(lane, 31)).toBe(-1);
    expect(segmentAt(lanes[1]!, 1)).toBe(-1);
  });

  it('keeps lanes that come in order as they come, zero-length segments too', () => {
    // prettier-ignore
    const ordered = new Float64Array([
      0, 0, 4 * MS, 3, 0,
      1, 2 * MS, 2 * MS, 5, -1,
      0, 4 * MS, 4 * MS, 2, -1,
      1, 2 * MS, 6 * MS, 4, 1,
      0, 4 * MS, 9 * MS, 1, 2,
    ]);
    const [a, b] = splitSegments(ordered, 2);
    expect([...a!.vcpu]).toEqual([3, 2, 1]);
    expect([...a!.end]).toEqual([4, 4, 9]);
    expect([...b!.vcpu]).toEqual([5, 4]);
    expect([...b!.task]).toEqual([-1, 1]);
  });

  it('sorts an out-of-order lane stably by start', () => {
    // prettier-ignore
    const shuffled = new Float64Array([
      0, 7 * MS, 8 * MS, 0, 0,
      0, 3 * MS, 3 * MS, 1, 0,
      0, 3 * MS, 5 * MS, 2, 0,
    ]);
    const [lane] = splitSegments(shuffled, 1);
    expect([...lane!.start]).toEqual([3, 3, 7]);
    expect([...lane!.vcpu]).toEqual([1, 2, 0]);
  });

  it('names every buffer of the lanes once, for a transfer', () => {
    const buffers = laneBuffers(lanes);
    expect(buffers).toHaveLength(4 * lanes.length);
    expect(new Set(buffers).size).toBe(buffers.length);
    expect(buffers[0]).toBe(lanes[0]!.start.buffer);
  });

  it('handles an empty trace', () => {
    const empty = splitSegments(new Float64Array(), 3);
    expect(empty.map((l) => l.start.length)).toEqual([0, 0, 0]);
    expect(visibleRange(empty[0]!, 0, 10)).toEqual([0, 0]);
    expect(segmentAt(empty[0]!, 1)).toBe(-1);
  });
});

describe('share helpers', () => {
  it('splits the buckets x domains matrix into columns', () => {
    const cols = shareColumns(new Float64Array([0.1, 0.9, 0.2, 0.8, 0.3, 0.7]), 2);
    expect(cols.map((c) => [...c])).toEqual([
      [0.1, 0.2, 0.3],
      [0.9, 0.8, 0.7],
    ]);
    expect(shareColumns(new Float64Array([1, 2]), 0)).toEqual([]);
  });

  it('picks bucket widths on a 1-2-5 ladder', () => {
    expect(chooseBucketMs(30000)).toBe(500);
    expect(chooseBucketMs(60000)).toBe(1000);
    expect(chooseBucketMs(1000)).toBe(10);
    expect(chooseBucketMs(3000, 300)).toBe(10);
    expect(chooseBucketMs(10)).toBe(1);
  });

  it('clamps bucket lookups', () => {
    expect(bucketAt(250, 100, 3)).toBe(2);
    expect(bucketAt(1e9, 100, 3)).toBe(2);
    expect(bucketAt(-1, 100, 3)).toBe(0);
    expect(bucketAt(5, 100, 0)).toBe(-1);
  });
});
