// The tool panels of the page shell (lessons, editor, policy script, export, share link), which a share link remembers as open.
import { useCallback, useState } from 'react';

export type Panel = 'editor' | 'export' | 'share' | 'lessons' | 'script';
const PANELS: readonly Panel[] = ['editor', 'export', 'share', 'lessons', 'script'];

export interface Panels {
  readonly open: readonly Panel[];
  /** Opens or closes `p` (`on` given), else flips it. */
  readonly togglePanel: (p: Panel, on?: boolean) => void;
}

/** `initial`: the panel names a share link asked for (unknown ones are ignored). */
export function usePanels(initial: readonly string[]): Panels {
  // Never the Share panel: a link is copied from it, and whoever opens the link wants the page.
  const [open, setOpen] = useState<readonly Panel[]>(() =>
    PANELS.filter((p) => p !== 'share' && initial.includes(p)),
  );
  const togglePanel = useCallback(
    (p: Panel, on?: boolean) =>
      setOpen((o) => ((on ?? !o.includes(p)) ? (o.includes(p) ? o : [...o, p]) : o.filter((x) => x !== p))),
    [],
  );
  return { open, togglePanel };
}
