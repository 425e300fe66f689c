import { describe, expect, it } from 'vitest';
import { beliefAt, beliefSeries, nearestWithin } from './belief';

describe('beliefSeries', () => {
  const series = beliefSeries([
    { t_ns: 1e6, task: 2, belief: 5 },
    { t_ns: 2e6, task: 0, belief: -20 },
    { t_ns: 3e6, task: 2, belief: 25 },
    { t_ns: 4e6, task: 2, belief: 5 },
  ]);

  it('splits the records per task, in task order, starting at 0 at time 0', () => {
    expect(series.map((s) => s.task)).toEqual([0, 2]);
    expect(Array.from(series[1]!.t)).toEqual([0, 1, 3, 4]);
    expect(Array.from(series[1]!.belief)).toEqual([0, 5, 25, 5]);
    expect(series[1]!.peak).toBe(25);
    expect(series[0]!.peak).toBe(0);
  });

  it('reads the step value in force at a time', () => {
    const s = series[1]!;
    expect(beliefAt(s, 0.5)).toBe(0);
    expect(beliefAt(s, 1)).toBe(5);
    expect(beliefAt(s, 3.5)).toBe(25);
    expect(beliefAt(s, 100)).toBe(5);
  });
});

describe('nearestWithin', () => {
  const times = [1, 5, 9];
  it('finds the nearest time inside the tolerance', () => {
    expect(nearestWithin(times, 5.4, 1)).toBe(1);
    expect(nearestWithin(times, 8.2, 1)).toBe(2);
    expect(nearestWithin(times, 0, 1)).toBe(0);
  });
  it('returns -1 when nothing is close enough', () => {
    expect(nearestWithin(times, 3, 1)).toBe(-1);
    expect(nearestWithin([], 3, 1)).toBe(-1);
  });
});
