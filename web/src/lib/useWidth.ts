import { useLayoutEffect, useState, type RefObject } from 'react';

/** The element's content width in CSS pixels, kept current with a ResizeObserver. */
export function useWidth(ref: RefObject<HTMLElement | null>, fallback = 600): number {
  const [width, setWidth] = useState(fallback);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return;
    const observer = new ResizeObserver((entries) => {
      const w = entries[0]?.contentRect.width;
      // Round so sub-pixel layout jitter does not redraw every chart.
      if (w !== undefined && w > 0) setWidth(Math.round(w));
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return width;
}
