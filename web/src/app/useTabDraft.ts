// This tab's scenario draft in localStorage, for the scenario editor and the policy editor alike: its key, the
// storage (null where the browser refuses it), and a write now or once typing pauses that reports whether it
// worked (lib/drafts.ts holds the format).
import { useCallback, useEffect, useRef, useState } from 'react';
import { DRAFT_PREFIX, tabId, writeDraft, type Draft } from '../lib/drafts';

/** Quiet time after the last keystroke before the draft is written to storage [ms]. */
export const SAVE_DELAY_MS = 300;

/** The site's localStorage, or null where the browser refuses it (private modes, disabled storage). */
export function localStore(): Storage | null {
  try {
    return localStorage;
  } catch {
    return null;
  }
}

/** This tab's draft key (see lib/drafts). */
function draftKey(): string {
  try {
    return `${DRAFT_PREFIX}.${tabId(sessionStorage)}`;
  } catch {
    return `${DRAFT_PREFIX}.tab`;
  }
}

export interface TabDraft {
  readonly key: string;
  /** Writes the draft (null removes it), now or once typing pauses (`later`). */
  readonly store: (value: Draft | null, later?: boolean) => void;
  /** Why the last write failed, while it is the latest word on saving; null when it worked. */
  readonly saveError: string | null;
  readonly setSaveError: (e: string | null) => void;
}

export function useTabDraft(): TabDraft {
  const [key] = useState(draftKey);
  const [saveError, setSaveError] = useState<string | null>(null);
  const timer = useRef<ReturnType<typeof setTimeout> | null>(null);
  const store = useCallback(
    (value: Draft | null, later = false) => {
      const ls = localStore();
      if (!ls) return;
      if (timer.current) clearTimeout(timer.current);
      timer.current = null;
      const save = () => setSaveError(writeDraft(ls, key, value));
      if (later) timer.current = setTimeout(save, SAVE_DELAY_MS);
      else save();
    },
    [key],
  );
  useEffect(() => () => void (timer.current && clearTimeout(timer.current)), []);
  return { key, store, saveError, setSaveError };
}
