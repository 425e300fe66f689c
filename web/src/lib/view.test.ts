import { describe, expect, it } from 'vitest';
import { clampView, defaultView, follow, zoomView } from './view';

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
