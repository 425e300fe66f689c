// Response-time CDFs from the simulator's distributions: (value_ms, count) pairs in increasing value, drawn on a
// log-scaled time axis (paper 000 Fig. 1a, 10a).

export interface CdfPoint {
  /** [ms] */
  readonly x: number;
  /** Fraction of samples <= x (0..1). */
  readonly y: number;
}

/** Smallest value the log axis shows [ms]: a zero (or sub-nanosecond) sample sits on the axis's left edge. */
export const LOG_FLOOR_MS = 1e-3;

/**
 * The empirical CDF of flattened (value, count) pairs as step points for `curveStepAfter`: it starts at (v0, 0),
 * rises at each value and ends at (vLast, 1). Pairs with a non-positive count are skipped; values below
 * `LOG_FLOOR_MS` are lifted to it so the points stay drawable on a log axis. Empty input gives no points.
 */
export function cdfFromPairs(pairs: ArrayLike<number>): CdfPoint[] {
  let total = 0;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const c = pairs[i + 1]!;
    if (c > 0 && Number.isFinite(c) && Number.isFinite(pairs[i]!)) total += c;
  }
  if (total <= 0) return [];
  const out: CdfPoint[] = [];
  let seen = 0;
  for (let i = 0; i + 1 < pairs.length; i += 2) {
    const v = pairs[i]!;
    const c = pairs[i + 1]!;
    if (!(c > 0) || !Number.isFinite(c) || !Number.isFinite(v)) continue;
    const x = Math.max(v, LOG_FLOOR_MS);
    if (out.length === 0) out.push({ x, y: 0 });
    seen += c;
    const y = seen / total;
    const last = out[out.length - 1]!;
    // Values lifted to the floor collapse into one step.
    if (last.x === x && out.length > 1) out[out.length - 1] = { x, y };
    else out.push({ x, y });
  }
  return out;
}

/**
 * A log axis's domain covering every value, widened to whole decades so the ticks read 0.1, 1, 10, 100 ms. Values
 * that are not positive and finite are ignored; with none left the domain is [0.1, 1000] ms. A single decade
 * (all values equal a power of ten) still gets one decade of width.
 */
export function logDomain(values: Iterable<number>): [number, number] {
  let lo = Infinity;
  let hi = -Infinity;
  for (const v of values) {
    if (!(v > 0) || !Number.isFinite(v)) continue;
    lo = Math.min(lo, v);
    hi = Math.max(hi, v);
  }
  if (lo === Infinity) return [0.1, 1000];
  // The tiny epsilon keeps float noise (log10(1000) = 2.9999999999999996) from adding a decade.
  const a = 10 ** Math.floor(Math.log10(lo) + 1e-9);
  let b = 10 ** Math.ceil(Math.log10(hi) - 1e-9);
  if (b <= a) b = a * 10;
  return [a, b];
}

/** The CDF's value at `v` [ms]: the fraction of samples <= v (0 before the first point). */
export function cdfAt(points: readonly CdfPoint[], v: number): number {
  let lo = 0;
  let hi = points.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (points[mid]!.x <= v) lo = mid + 1;
    else hi = mid;
  }
  return lo === 0 ? 0 : points[lo - 1]!.y;
}
