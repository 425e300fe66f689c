import { describe, expect, it } from 'vitest';
import { clampView, covers, defaultView, detailWindow, follow, zoomView } from './view';

describe('view', () => {
  it('opens on a window that scales with the run', () => {
    expect(defaultView(30000)).toEqual([0, 1500]);
    expect(defaultView(1000)).toEqual([0, 100]);
    expect(defaultView(50)).toEqual([0, 50]);
    expect(defaultView(3_600_000)).toEqual([0, 2000]);
  });

  it('follows the playhead and stays inside the run', () => {
    const v = [0, 100] as const;
    expect(follow(v, 10, 1000)).toBe(v); // already in place: same object, no re-render
    expect(follow(v, 500, 1000)).toEqual([470, 570]);
    expect(follow(v, 990, 1000)).toEqual([900, 1000]);
    const all = [0, 1000] as const;
    expect(follow(all, 500, 1000)).toBe(all);
  });

  it('clamps a window into the run', () => {
    expect(clampView([-10, 40], 100)).toEqual([0, 50]);
    expect(clampView([90, 140], 100)).toEqual([50, 100]);
    expect(clampView([0, 500], 100)).toEqual([0, 100]);
  });

  it('zooms about the playhead and stays inside the run', () => {
    expect(zoomView([0, 100], 50, 0.5, 1000)).toEqual([25, 75]);
    expect(zoomView([0, 100], 20, 2, 1000)).toEqual([0, 200]);
    // The playhead keeps its place on screen: 20 is at 20% before and after.
    expect(zoomView([0, 100], 20, 0.5, 1000)).toEqual([10, 60]);
    // Outside the window: about its centre.
    expect(zoomView([100, 200], 900, 0.5, 1000)).toEqual([125, 175]);
    expect(zoomView([0, 800], 400, 4, 1000)).toEqual([0, 1000]);
    expect(zoomView([0, 0.06], 0.03, 0.5, 1000)[1]).toBeCloseTo(0.055);
  });
});

describe('detailWindow', () => {
  it("holds the view's grid cell and the ones ahead, the same window while the view stays in the cell", () => {
    expect(detailWindow([2100, 3100], 10_000, 60_000)).toEqual([2000, 6000]);
    expect(detailWindow([2900, 3900], 10_000, 60_000)).toEqual([2000, 6000]);
    expect(detailWindow([3000, 4000], 10_000, 60_000)).toEqual([3000, 7000]);
    // Up to the cap, and never past the run.
    expect(detailWindow([2100, 3100], 2500, 60_000)).toEqual([2000, 4500]);
    expect(detailWindow([58_500, 59_500], 10_000, 60_000)).toEqual([58_000, 60_000]);
  });

  it('covers the view when two widths fit, else starts at it in quarter steps of the cap', () => {
    for (const view of [
      [2100, 3100],
      [17_345, 18_345],
    ] as const) {
      const held = detailWindow(view, 2000, 60_000);
      expect(covers(held, view)).toBe(true);
    }
    const wide = detailWindow([10_100, 20_100], 4000, 60_000);
    expect(wide).toEqual([10_000, 14_000]);
    expect(covers(wide, [10_100, 20_100])).toBe(false);
  });

  it('holds the part of a view wider than the cap around the playhead, within the view', () => {
    // Quarter steps of 1000 ms; the playhead stays inside as it moves.
    expect(detailWindow([10_100, 20_100], 4000, 60_000, 15_000)).toEqual([13_000, 17_000]);
    expect(detailWindow([10_100, 20_100], 4000, 60_000, 15_400)).toEqual([13_000, 17_000]);
    expect(detailWindow([10_100, 20_100], 4000, 60_000, 15_600)).toEqual([14_000, 18_000]);
    // At the run's end (a whole-run view with the playhead at the end): the last stretch.
    expect(detailWindow([0, 30_000], 8000, 30_000, 30_000)).toEqual([22_000, 30_000]);
    // Near the view's start: from it, as without a playhead.
    expect(detailWindow([10_100, 20_100], 4000, 60_000, 10_200)).toEqual([10_000, 14_000]);
  });

  it('covers only what the held window holds', () => {
    expect(covers(null, [0, 1])).toBe(false);
    expect(covers([0, 10], [2, 10])).toBe(true);
    expect(covers([0, 10], [2, 11])).toBe(false);
    // Windows cross to the worker in whole nanoseconds.
    expect(covers([29_029.5, 31_609.499_999_9], [29_029.500_000_1, 31_609.5])).toBe(true);
  });
});
