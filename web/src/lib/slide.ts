// The path of a playing timeline as keyframes: while playing, the window follows the playhead (lib/view
// `follow`), so the lanes drawn ahead only slide left and the playhead stays put, except at the run's start and
// end, where the window stops and the playhead moves instead. Both paths are piecewise linear in simulated time,
// so a few keyframes describe them exactly and the compositor can run them (Timeline's slide) with no work on
// the main thread per frame.
import { FOLLOW_AT, follow, type View } from './view';

/** One keyframe of a slide: where the strip and the playhead are at a point of it. */
export interface SlideFrame {
  /** Where it falls in the slide (0 to 1, linear in simulated time). */
  readonly offset: number;
  /** The strip's left edge relative to the plot's [px]: minus how far the window has moved into it. */
  readonly strip: number;
  /** The playhead's x in the plot [px]. */
  readonly mark: number;
}

export interface SlidePlan {
  /** Simulated time the slide starts at [ms]: the playhead's when it was planned. */
  readonly from: number;
  /** Simulated time it ends at [ms]: the window reaches the strip's end, or the run ends. */
  readonly to: number;
  readonly frames: readonly SlideFrame[];
}

/**
 * The slide of a playing `view` from the playhead at `time` until the window that follows it would leave the
 * strip drawn for [stripFrom, stripTo] (or the run ends), at `pxPerMs` plot pixels per simulated ms. Null when
 * there is nothing to slide: the window is not where following the playhead puts it (a pan; the next playing
 * frame moves it there), or it is already at the strip's end.
 */
export function slidePlan(
  view: View,
  time: number,
  durationMs: number,
  stripFrom: number,
  stripTo: number,
  pxPerMs: number,
): SlidePlan | null {
  const w = view[1] - view[0];
  if (Math.abs(follow(view, time, durationMs)[0] - view[0]) * pxPerMs > 0.5) return null;
  // The window starts at the playhead minus FOLLOW_AT of its width, clamped to the run: it leaves the strip
  // when its start passes stripTo - w (a window as wide as the run never moves).
  const to = Math.min(durationMs, w >= durationMs ? durationMs : stripTo - w + FOLLOW_AT * w);
  if (!(to > time)) return null;
  // Where the window starts moving and where it stops: the path's corners.
  const corners = w >= durationMs ? [] : [FOLLOW_AT * w, durationMs - w + FOLLOW_AT * w];
  const frames = [time, ...corners.filter((t) => t > time && t < to), to].map((t) => {
    const start = follow(view, t, durationMs)[0];
    return {
      offset: (t - time) / (to - time),
      strip: -(start - stripFrom) * pxPerMs,
      mark: (t - start) * pxPerMs,
    };
  });
  return { from: time, to, frames };
}

/**
 * Keyframes of a slide along x through `points` ([offset, x in CSS px]) in whole device pixels: each point
 * rounded to one, and between two of them a step per device pixel (`steps()` easing), so the compositor
 * always draws a layer at a whole-pixel offset (a fractional one is resampled: slower to draw in software, and
 * blurred) and hands the display no new frame while the slide has not moved a pixel.
 */
export function wholePixels(points: readonly (readonly [number, number])[], dpr: number): Keyframe[] {
  const px = points.map(([, x]) => Math.round(x * dpr));
  return points.map(([offset], i) => {
    const moved = i + 1 < px.length ? Math.abs(px[i + 1]! - px[i]!) : 0;
    return {
      offset,
      transform: `translateX(${px[i]! / dpr}px)`,
      easing: moved > 0 ? `steps(${moved}, end)` : 'linear',
    };
  });
}
