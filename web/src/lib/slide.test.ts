import { describe, expect, it } from 'vitest';
import { slidePlan, wholePixels, type SlidePlan } from './slide';
import { FOLLOW_AT, follow, type View } from './view';

/** The strip's and the playhead's positions the plan gives at simulated time `t`, between its keyframes. */
function at(plan: SlidePlan, t: number): { strip: number; mark: number } {
  const u = (t - plan.from) / (plan.to - plan.from);
  const i = plan.frames.findIndex((f, j) => j > 0 && f.offset >= u);
  const a = plan.frames[i - 1]!;
  const b = plan.frames[i]!;
  const f = b.offset > a.offset ? (u - a.offset) / (b.offset - a.offset) : 0;
  return { strip: a.strip + f * (b.strip - a.strip), mark: a.mark + f * (b.mark - a.mark) };
}

/** Where a playing frame draws them: the window following the playhead at `t` (as usePlayback moves it). */
function drawn(view: View, t: number, durationMs: number, stripFrom: number, k: number) {
  const start = follow(view, t, durationMs)[0];
  return { strip: -(start - stripFrom) * k, mark: (t - start) * k };
}

describe('slidePlan', () => {
  const D = 12_000;
  const w = 600;
  const k = 400 / w;

  it('slides the strip under a still playhead until the window reaches the strip end', () => {
    const t = 2_000;
    const view = follow([0, w], t, D);
    const plan = slidePlan(view, t, D, 1_200, 3_600, k)!;
    expect(plan.frames).toHaveLength(2);
    expect(plan.to).toBeCloseTo(3_600 - w + FOLLOW_AT * w, 9);
    expect(plan.frames[0]).toEqual({ offset: 0, strip: -(view[0] - 1_200) * k, mark: FOLLOW_AT * w * k });
    // The window's right edge ends on the strip's: the strip's last pixel at the plot's right edge.
    expect(plan.frames[1]!.strip).toBeCloseTo(-(3_600 - 1_200 - w) * k, 9);
    expect(plan.frames[1]!.mark).toBeCloseTo(FOLLOW_AT * w * k, 9);
  });

  it('moves the playhead where the window stands still, at the start and at the end of the run', () => {
    const start = slidePlan([0, w], 50, D, -w, 3 * w, k)!;
    expect(start.frames.map((f) => f.offset)).toEqual([0, (FOLLOW_AT * w - 50) / (start.to - 50), 1]);
    expect(start.frames[0]).toEqual({ offset: 0, strip: -w * k, mark: 50 * k });
    const end = slidePlan(follow([0, w], 11_000, D), 11_000, D, 10_200, 12_600, k)!;
    expect(end.to).toBe(D);
    expect(end.frames).toHaveLength(3);
    expect(end.frames[2]!.mark).toBeCloseTo(w * k, 9);
  });

  it('puts the strip and the playhead where a playing frame draws them, at every time of the slide', () => {
    for (const [t, from] of [
      [50, -w],
      [2_000, 1_200],
      [11_000, 10_200],
      [11_700, 10_200],
    ] as const) {
      const view = follow([0, w], t, D);
      const plan = slidePlan(view, t, D, from, from + 4 * w, k)!;
      for (let i = 0; i <= 40; i++) {
        const u = plan.from + ((plan.to - plan.from) * i) / 40;
        const got = at(plan, u);
        const want = drawn(view, u, D, from, k);
        expect(got.strip).toBeCloseTo(want.strip, 6);
        expect(got.mark).toBeCloseTo(want.mark, 6);
      }
    }
  });

  it('plans nothing for a window away from the playhead, at the strip end, or for a window as wide as the run', () => {
    expect(slidePlan([5_000, 5_000 + w], 2_000, D, 4_400, 6_800, k)).toBeNull();
    const t = 3_600 - w + FOLLOW_AT * w;
    expect(slidePlan(follow([0, w], t, D), t, D, 1_200, 3_600, k)).toBeNull();
    const whole = slidePlan([0, D], 3_000, D, -D, 3 * D, 400 / D)!;
    expect(whole.to).toBe(D);
    expect(whole.frames.map((f) => f.strip)).toEqual([-400, -400]);
  });
});

describe('wholePixels', () => {
  it('rounds each point to a device pixel and steps one device pixel at a time between them', () => {
    const frames = wholePixels(
      [
        [0, -10.3],
        [0.25, -10.3],
        [1, -30.6],
      ],
      2,
    );
    expect(frames).toEqual([
      { offset: 0, transform: 'translateX(-10.5px)', easing: 'linear' },
      { offset: 0.25, transform: 'translateX(-10.5px)', easing: 'steps(40, end)' },
      { offset: 1, transform: 'translateX(-30.5px)', easing: 'linear' },
    ]);
  });
});
