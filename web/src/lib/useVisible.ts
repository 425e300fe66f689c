import { useEffect, useState, type RefObject } from 'react';

/**
 * Whether the element is on screen (inside the viewport and every scrolling ancestor), kept current with an
 * IntersectionObserver. Canvases use it to skip drawing what nobody can see, and draw when it scrolls into view.
 */
export function useVisible(ref: RefObject<Element | null>): boolean {
  const [visible, setVisible] = useState(true);
  useEffect(() => {
    const el = ref.current;
    if (!el || typeof IntersectionObserver !== 'function') return;
    const observer = new IntersectionObserver((entries) => {
      const last = entries[entries.length - 1];
      if (last) setVisible(last.isIntersecting);
    });
    observer.observe(el);
    return () => observer.disconnect();
  }, [ref]);
  return visible;
}
