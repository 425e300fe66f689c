import { describe, expect, it } from 'vitest';
import {
  clampView,
  covers,
  defaultView,
  detailWindow,
  follow,
  nsWindow,
  parseWindowKey,
  playheadWindow,
  windowKey,
  zoomView,
} from './view';

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

/** A stopped playhead at `time` showing `view`. */
function at(view: readonly [number, number], time = view[0]) {
  return { view, time, playing: false, speed: 1 };
}
/** A window [ms] as the worker is asked for it [ns]. */
const ms = (a: number, b: number) => nsWindow(a, b);

describe('detailWindow', () => {
  it("holds the view's grid cell and the ones ahead, the same window while the view stays in the cell", () => {
    expect(detailWindow(at([2100, 3100]), 10_000, 60_000)).toEqual(ms(2000, 6000));
    expect(detailWindow(at([2900, 3900]), 10_000, 60_000)).toEqual(ms(2000, 6000));
    expect(detailWindow(at([3000, 4000]), 10_000, 60_000)).toEqual(ms(3000, 7000));
    // Up to the cap, and never past the run.
    expect(detailWindow(at([2100, 3100]), 2500, 60_000)).toEqual(ms(2000, 4500));
    expect(detailWindow(at([58_500, 59_500]), 10_000, 60_000)).toEqual(ms(58_000, 60_000));
  });

  it('covers the view when two widths fit, else starts at it in quarter steps of the cap', () => {
    for (const view of [
      [2100, 3100],
      [17_345, 18_345],
    ] as const) {
      const held = detailWindow(at(view), 2000, 60_000);
      expect(covers(held, ms(view[0], view[1]))).toBe(true);
    }
    const wide = detailWindow(at([10_100, 20_100], 10_100), 4000, 60_000);
    expect(wide).toEqual(ms(10_000, 14_000));
    expect(covers(wide, ms(10_100, 20_100))).toBe(false);
  });

  it('holds the part of a view wider than the cap around the playhead, within the view', () => {
    // Quarter steps of 1000 ms; the playhead stays inside as it moves.
    expect(detailWindow(at([10_100, 20_100], 15_000), 4000, 60_000)).toEqual(ms(13_000, 17_000));
    expect(detailWindow(at([10_100, 20_100], 15_400), 4000, 60_000)).toEqual(ms(13_000, 17_000));
    expect(detailWindow(at([10_100, 20_100], 15_600), 4000, 60_000)).toEqual(ms(14_000, 18_000));
    // At the run's end (a whole-run view with the playhead at the end): the last stretch.
    expect(detailWindow(at([0, 30_000], 30_000), 8000, 30_000)).toEqual(ms(22_000, 30_000));
    // Near the view's start: from it.
    expect(detailWindow(at([10_100, 20_100], 10_200), 4000, 60_000)).toEqual(ms(10_000, 14_000));
  });

  it('reaches ahead while playing, in steps of half the lead, and still covers the view', () => {
    // The lessons' 1 ms zoom at 0.25x: a second of playback ahead is 250 ms, at most 60 widths.
    const playing = { view: [2041.5, 2042.5] as const, time: 2041.8, playing: true, speed: 0.25 };
    const w = detailWindow(playing, 10_000, 60_000);
    // 4 widths and 60 of lead, on a grid of 31 widths: 2015 is the cell the view starts in.
    expect(w).toEqual(ms(2015, 2079));
    // One window per 31 widths of playback, not one per width, and each covers the view.
    const seen = new Set<string>();
    for (let t0 = 2041.5; t0 < 2200; t0 += 0.37) {
      const next = detailWindow({ ...playing, view: [t0, t0 + 1] as const }, 10_000, 60_000);
      expect(covers(next, ms(t0, t0 + 1))).toBe(true);
      seen.add(windowKey(next));
    }
    expect(seen.size).toBe(6);
  });

  it('asks about the playhead in the timelines’ window when it holds it, else in one that follows it', () => {
    expect(playheadWindow(at([2100, 3100], 2500), 10_000, 60_000)).toEqual(ms(2000, 6000));
    const away = playheadWindow(at([2100, 3100], 9000), 10_000, 60_000);
    expect(covers(away, ms(9000, 9000.001))).toBe(true);
  });

  it('covers only what the held window holds', () => {
    expect(covers(null, ms(0, 1))).toBe(false);
    expect(covers(ms(0, 10), ms(2, 10))).toBe(true);
    expect(covers(ms(0, 10), ms(2, 11))).toBe(false);
    expect(parseWindowKey(windowKey(ms(2, 11)))).toEqual(ms(2, 11));
  });
});
