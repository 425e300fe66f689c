// Light and dark themes: the choice is the user's, kept in localStorage; the first visit follows the
// system's preference. The palette stays Okabe-Ito in both (lib/palette.ts).
import { createContext, useCallback, useContext, useEffect, useState } from 'react';
import { domainColor } from './palette';

export type Theme = 'light' | 'dark';
const KEY = 'schedlab.theme';

function initial(): Theme {
  try {
    const saved = localStorage.getItem(KEY);
    if (saved === 'light' || saved === 'dark') return saved;
  } catch {
    // Storage disabled: fall through to the system preference.
  }
  return typeof matchMedia === 'function' && matchMedia('(prefers-color-scheme: dark)').matches
    ? 'dark'
    : 'light';
}

export function useTheme(): [Theme, () => void] {
  const [theme, setTheme] = useState<Theme>(initial);
  useEffect(() => {
    document.documentElement.dataset.theme = theme;
    document.documentElement.style.colorScheme = theme;
  }, [theme]);
  const toggle = useCallback(() => {
    setTheme((t) => {
      const next = t === 'dark' ? 'light' : 'dark';
      try {
        localStorage.setItem(KEY, next);
      } catch {
        // Not kept across reloads; still switched now.
      }
      return next;
    });
  }, []);
  return [theme, toggle];
}

/** The theme on screen, for views whose colours are not CSS (canvas, inline swatches, SVG strokes). */
export const ThemeContext = createContext<Theme>('light');

/** Whether the page is in presentation mode: views that draw their own sizes (the state lanes) size for it. */
export const PresentingContext = createContext(false);

/** domainColor for the theme on screen; a new function when the theme changes, so memoised views redraw. */
export function useDomainColor(): (colorIndex: number) => string {
  const dark = useContext(ThemeContext) === 'dark';
  return useCallback((colorIndex: number) => domainColor(colorIndex, dark), [dark]);
}
