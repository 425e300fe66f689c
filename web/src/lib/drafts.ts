// The editor's drafts (the editor never loses work). The draft being edited lives under a key of its
// own tab (two tabs no longer overwrite each other's draft), and every draft set aside (edits never run when
// another scenario came on screen, an import over unrun edits) goes into a history of the last ten, shared by all
// tabs of the site, each with its time and its scenario's title. Saving can fail (the storage quota, storage
// disabled): every write says whether it worked, so the editor can say so and offer an export instead.

/** One saved draft. */
export interface Draft {
  readonly text: string;
  /** What the editor calls it (a library scenario's title, a file name). */
  readonly name: string;
}

/** A draft in the history. */
export interface SavedDraft extends Draft {
  /** The scenario's own `title` when the text is a scenario with one, else the name. */
  readonly title: string;
  /** When it was set aside [ms since the epoch]. */
  readonly savedAt: number;
}

/** The history's key (shared by every tab; the `storage` event tells the other tabs when it changes). */
export const HISTORY_KEY = 'schedlab.drafts';
/** Drafts the history keeps, newest first. */
export const HISTORY_LENGTH = 10;
/** The draft of one tab: `schedlab.draft.<tab id>`. The first format had one key for all tabs. */
export const DRAFT_PREFIX = 'schedlab.draft';

/** The part of `Storage` the drafts use (a fake in unit tests). */
export type DraftStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

/** What a write did: `null` when it worked, else the reason in words. */
export type SaveResult = string | null;

function write(storage: DraftStorage, key: string, value: string | null): SaveResult {
  try {
    if (value === null) storage.removeItem(key);
    else storage.setItem(key, value);
    return null;
  } catch (e) {
    const quota = e instanceof DOMException && (e.name === 'QuotaExceededError' || e.code === 22);
    return quota
      ? `the browser's storage for this site is full (${Math.round((value?.length ?? 0) / 1024)} KiB did not fit)`
      : `the browser refused to store it (${e instanceof Error ? e.message : String(e)})`;
  }
}

/** The scenario's `title` if `text` is a scenario file that has one. */
export function titleOf(text: string, fallback: string): string {
  try {
    const v = JSON.parse(text) as unknown;
    if (v && typeof v === 'object' && !Array.isArray(v)) {
      const t = (v as Record<string, unknown>).title;
      if (typeof t === 'string' && t.trim() !== '') return t.slice(0, 200);
    }
  } catch {
    // Not JSON (a half-typed paste): the name will do.
  }
  return fallback;
}

/** Reads a draft stored by any version of the editor. */
export function readDraft(storage: DraftStorage, key: string): Draft | null {
  try {
    const raw = storage.getItem(key);
    if (raw === null) return null;
    // The first editor stored the bare text; keep reading it.
    if (!raw.startsWith('{"text"')) return { text: raw, name: 'your draft' };
    const v = JSON.parse(raw) as Draft;
    return typeof v.text === 'string' ? { text: v.text, name: String(v.name ?? 'your draft') } : null;
  } catch {
    return null;
  }
}

export function writeDraft(storage: DraftStorage, key: string, draft: Draft | null): SaveResult {
  return write(storage, key, draft === null ? null : JSON.stringify({ text: draft.text, name: draft.name }));
}

/** The history, newest first; whatever is unreadable in it is skipped. */
export function readHistory(storage: DraftStorage): SavedDraft[] {
  try {
    const raw = storage.getItem(HISTORY_KEY);
    const list = raw === null ? [] : (JSON.parse(raw) as unknown);
    if (!Array.isArray(list)) return [];
    return list
      .filter(
        (d): d is SavedDraft =>
          !!d &&
          typeof d === 'object' &&
          typeof (d as SavedDraft).text === 'string' &&
          typeof (d as SavedDraft).savedAt === 'number',
      )
      .map((d) => ({
        text: d.text,
        name: String(d.name),
        title: String(d.title ?? d.name),
        savedAt: d.savedAt,
      }))
      .slice(0, HISTORY_LENGTH);
  } catch {
    return [];
  }
}

/**
 * Puts `draft` first in the history (an entry with the same text moves up rather than doubling) and keeps the last
 * HISTORY_LENGTH. When the whole history does not fit, older entries are dropped one by one until the new one
 * does; if even it alone does not fit, nothing is lost from the stored history and the reason comes back.
 */
export function pushHistory(
  storage: DraftStorage,
  draft: Draft,
  now: number,
): { history: SavedDraft[]; error: SaveResult } {
  const entry: SavedDraft = {
    text: draft.text,
    name: draft.name,
    title: titleOf(draft.text, draft.name),
    savedAt: now,
  };
  const old = readHistory(storage).filter((d) => d.text !== draft.text);
  let next = [entry, ...old].slice(0, HISTORY_LENGTH);
  for (;;) {
    const error = write(storage, HISTORY_KEY, JSON.stringify(next));
    if (error === null) return { history: next, error: null };
    if (next.length === 1) return { history: [entry, ...old].slice(0, HISTORY_LENGTH), error };
    next = next.slice(0, -1);
  }
}

/** Removes the entry saved at `savedAt` with this text. */
export function removeFromHistory(storage: DraftStorage, target: SavedDraft): SavedDraft[] {
  const next = readHistory(storage).filter((d) => !(d.savedAt === target.savedAt && d.text === target.text));
  write(storage, HISTORY_KEY, JSON.stringify(next));
  return next;
}

/** This tab's id, kept in sessionStorage so a reload finds the same draft and another tab gets its own. */
export function tabId(session: DraftStorage, random: () => number = Math.random): string {
  try {
    const id = session.getItem('schedlab.tab');
    if (id) return id;
    const made = random().toString(36).slice(2, 10) || 'tab';
    session.setItem('schedlab.tab', made);
    return made;
  } catch {
    return 'tab';
  }
}
