import { describe, expect, it } from 'vitest';
import { nearestIndex } from './hover';

describe('nearestIndex', () => {
  const ys = [10, 50, 54];
  it('picks the closest item within the distance', () => {
    expect(nearestIndex(ys.length, (i) => Math.abs(ys[i]! - 53), 8)).toBe(2);
    expect(nearestIndex(ys.length, (i) => Math.abs(ys[i]! - 12), 8)).toBe(0);
  });
  it('returns -1 when every item is too far', () => {
    expect(nearestIndex(ys.length, (i) => Math.abs(ys[i]! - 30), 8)).toBe(-1);
    expect(nearestIndex(0, () => 0, 8)).toBe(-1);
  });
});
