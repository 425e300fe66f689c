import { describe, expect, it } from 'vitest';
import { LOG_FLOOR_MS, cdfAt, cdfFromPairs, logDomain } from './cdf';

describe('cdfFromPairs', () => {
  it('accumulates counts into fractions, starting at zero', () => {
    expect(cdfFromPairs(new Float64Array([1, 1, 2, 2, 5, 1]))).toEqual([
      { x: 1, y: 0 },
      { x: 1, y: 0.25 },
      { x: 2, y: 0.75 },
      { x: 5, y: 1 },
    ]);
  });

  it('gives a single step for a single value', () => {
    expect(cdfFromPairs([0.3, 103])).toEqual([
      { x: 0.3, y: 0 },
      { x: 0.3, y: 1 },
    ]);
  });

  it('is empty without samples and skips empty or broken pairs', () => {
    expect(cdfFromPairs([])).toEqual([]);
    expect(cdfFromPairs([1, 0, 2, 0])).toEqual([]);
    expect(cdfFromPairs([1, 0, 2, 2, Number.NaN, 1, 3, 2])).toEqual([
      { x: 2, y: 0 },
      { x: 2, y: 0.5 },
      { x: 3, y: 1 },
    ]);
    // A trailing half pair is ignored.
    expect(cdfFromPairs([2, 1, 7])).toHaveLength(2);
  });

  it('lifts zero values onto the log floor as one step', () => {
    const pts = cdfFromPairs([0, 2, 0.0001, 2, 10, 4]);
    expect(pts).toEqual([
      { x: LOG_FLOOR_MS, y: 0 },
      { x: LOG_FLOOR_MS, y: 0.5 },
      { x: 10, y: 1 },
    ]);
  });

  it('ends at exactly 1 and never decreases', () => {
    const pairs: number[] = [];
    for (let i = 1; i <= 50; i++) pairs.push(i * 0.7, (i * 7) % 5);
    const pts = cdfFromPairs(pairs);
    expect(pts[pts.length - 1]!.y).toBe(1);
    for (let i = 1; i < pts.length; i++) {
      expect(pts[i]!.y).toBeGreaterThanOrEqual(pts[i - 1]!.y);
      expect(pts[i]!.x).toBeGreaterThanOrEqual(pts[i - 1]!.x);
    }
  });
});

describe('logDomain', () => {
  it('widens to whole decades', () => {
    expect(logDomain([0.3, 223])).toEqual([0.1, 1000]);
    expect(logDomain([4, 9])).toEqual([1, 10]);
  });

  it('keeps exact powers of ten and gives a lone decade its width', () => {
    expect(logDomain([1, 1000])).toEqual([1, 1000]);
    expect(logDomain([10, 10])).toEqual([10, 100]);
    expect(logDomain([0.3])).toEqual([0.1, 1]);
  });

  it('ignores values a log axis cannot show', () => {
    expect(logDomain([0, -1, Number.NaN, Infinity, 5])).toEqual([1, 10]);
    expect(logDomain([])).toEqual([0.1, 1000]);
  });
});

describe('cdfAt', () => {
  const pts = cdfFromPairs([1, 1, 2, 2, 4, 1]);
  it('reads the fraction of samples at or below a value', () => {
    expect(cdfAt(pts, 0.5)).toBe(0);
    expect(cdfAt(pts, 1)).toBeCloseTo(0.25);
    expect(cdfAt(pts, 3)).toBeCloseTo(0.75);
    expect(cdfAt(pts, 10)).toBe(1);
    expect(cdfAt([], 1)).toBe(0);
  });
});
