import { describe, expect, it } from 'vitest';
import { lastAtOrBefore, selectWindow, splitValues, toNs, type Decision } from './decisions';

const at = (...times: number[]): Decision[] => times.map((t_ns, i) => ({ t_ns, pcpu: 0, text: `d${i}` }));

describe('decision window', () => {
  const list = at(10, 20, 20, 30, 40, 50, 60);

  it('finds the last decision at or before a time', () => {
    expect(lastAtOrBefore(list, 5)).toBe(-1);
    expect(lastAtOrBefore(list, 10)).toBe(0);
    expect(lastAtOrBefore(list, 20)).toBe(2); // the later of two at the same time
    expect(lastAtOrBefore(list, 35)).toBe(3);
    expect(lastAtOrBefore(list, 1000)).toBe(6);
    expect(lastAtOrBefore([], 10)).toBe(-1);
  });

  it('keeps `before` up to and including the current one and `after` after it', () => {
    const w = selectWindow(list, 35, 2, 2);
    expect(w.items.map((d) => d.t_ns)).toEqual([20, 30, 40, 50]);
    expect(w.current).toBe(1);
    expect(w.items[w.current]!.t_ns).toBe(30);
  });

  it('is cut short at either end of the trace', () => {
    const start = selectWindow(list, 10, 13, 2);
    expect(start.items.map((d) => d.t_ns)).toEqual([10, 20, 20]);
    expect(start.current).toBe(0);
    const end = selectWindow(list, 999, 3, 12);
    expect(end.items.map((d) => d.t_ns)).toEqual([40, 50, 60]);
    expect(end.current).toBe(2);
  });

  it('has no current decision before the first one', () => {
    const w = selectWindow(list, 0, 13, 3);
    expect(w.current).toBe(-1);
    expect(w.items.map((d) => d.t_ns)).toEqual([10, 20, 20]);
    expect(selectWindow([], 5, 13, 12)).toEqual({ items: [], current: -1 });
  });

  it('maps a decision time to ms and back exactly', () => {
    for (const t of [0, 1, 1040999653, 59_999_999_999, 123_456_789_012]) expect(toNs(t / 1e6)).toBe(t);
    expect(toNs(-3)).toBe(0);
  });
});

describe("a decision's values", () => {
  const values = (text: string) =>
    splitValues(text)
      .filter((p) => p.value)
      .map((p) => p.text);

  it('finds the numbers of a reason, not the digits of a name', () => {
    expect(values('runs dom1.v0 (UNDER, -120 cr)')).toEqual(['-120']);
    expect(values('web.v2 keeps pCPU1 (ratelimit: ran 500 us)')).toEqual(['500']);
    expect(values('runs io.v0 for 12.5 us: BOOST')).toEqual(['12.5']);
    expect(values('job.v3 blocked')).toEqual([]);
  });

  it('keeps the whole text, in order', () => {
    const text = 'runs a.v0 (credit 45 us), 3 queued';
    expect(
      splitValues(text)
        .map((p) => p.text)
        .join(''),
    ).toBe(text);
  });
});
