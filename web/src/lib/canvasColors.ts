// The page's theme colours for canvas drawing. A canvas cannot use CSS variables, so it reads them here, and
// redraws when the theme switches (lib/theme.ts sets data-theme on <html>).
import { useEffect, useState } from 'react';

export interface CanvasColors {
  readonly fg: string;
  readonly muted: string;
  readonly line: string;
  readonly bg: string;
  /** A lane's or a slot's empty background: a step off the page's. */
  readonly empty: string;
  /** A second, fainter empty background (the timeline's I/O strip under the lanes). */
  readonly emptyAlt: string;
  /** The BOOST label (the page's --bad). */
  readonly bad: string;
  readonly dark: boolean;
}

function read(): CanvasColors {
  const root = document.documentElement;
  const css = getComputedStyle(root);
  const v = (name: string, fallback: string) => css.getPropertyValue(name).trim() || fallback;
  const dark = root.dataset.theme === 'dark';
  return {
    fg: v('--fg', '#1d1d1f'),
    muted: v('--muted', '#6b6b70'),
    line: v('--line', '#dddddd'),
    bg: v('--bg', '#fafafa'),
    empty: dark ? '#26262c' : '#f1f1f1',
    emptyAlt: dark ? '#1f1f24' : '#f6f6f6',
    bad: v('--bad', '#a3201a'),
    dark,
  };
}

/** The current theme's colours; a new object (so canvases redraw) whenever the theme changes. */
export function useCanvasColors(): CanvasColors {
  const [colors, setColors] = useState(read);
  useEffect(() => {
    // Same colours, same object: no canvas redraws for nothing.
    const update = () => {
      const next = read();
      setColors((prev) => (JSON.stringify(prev) === JSON.stringify(next) ? prev : next));
    };
    const observer = new MutationObserver(update);
    observer.observe(document.documentElement, { attributes: true, attributeFilter: ['data-theme'] });
    // The theme may have been applied between the first render and this effect.
    update();
    return () => observer.disconnect();
  }, []);
  return colors;
}

/** The page's font family, read once: getComputedStyle in every draw forces a style recalculation each time. */
let pageFont: string | null = null;
export function fontFamily(): string {
  pageFont ??= getComputedStyle(document.body).fontFamily || 'sans-serif';
  return pageFont;
}
