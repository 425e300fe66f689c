// What the pointer is over, for the views' tooltips: its position inside the element, and the nearest of a set of
// marks (lines, bars) within a few pixels.

/** The pointer's position inside the element that received the event [px]. */
export function pointerIn(e: { currentTarget: Element; clientX: number; clientY: number }): {
  px: number;
  py: number;
} {
  const rect = e.currentTarget.getBoundingClientRect();
  return { px: e.clientX - rect.left, py: e.clientY - rect.top };
}

/** Index in 0..n of the item with the smallest `dist`, if it is at most `within`; else -1. */
export function nearestIndex(n: number, dist: (i: number) => number, within: number): number {
  let best = -1;
  let bestD = within;
  for (let i = 0; i < n; i++) {
    const d = dist(i);
    if (d <= bestD) {
      best = i;
      bestD = d;
    }
  }
  return best;
}
