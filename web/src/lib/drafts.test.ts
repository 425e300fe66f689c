import { describe, expect, it } from 'vitest';
import {
  HISTORY_KEY,
  HISTORY_LENGTH,
  pushHistory,
  readDraft,
  readHistory,
  removeFromHistory,
  tabId,
  titleOf,
  writeDraft,
  type DraftStorage,
} from './drafts';

/** A Storage with a byte quota, as browsers have (about 5 MB per site). */
function storage(quota = Infinity): DraftStorage & { data: Map<string, string> } {
  const data = new Map<string, string>();
  return {
    data,
    getItem: (k) => data.get(k) ?? null,
    setItem: (k, v) => {
      const used = [...data].reduce((n, [key, val]) => n + (key === k ? 0 : val.length), 0);
      if (used + v.length > quota) throw new DOMException('full', 'QuotaExceededError');
      data.set(k, v);
    },
    removeItem: (k) => void data.delete(k),
  };
}

const scenario = (title: string, n = 0) => JSON.stringify({ schema: 1, id: 'x', title, n });

describe('draft history', () => {
  it('keeps the last ten, newest first, each with its time and scenario title', () => {
    const s = storage();
    for (let i = 0; i < 12; i++) pushHistory(s, { text: scenario(`T${i}`, i), name: `n${i}` }, 1000 + i);
    const h = readHistory(s);
    expect(h).toHaveLength(HISTORY_LENGTH);
    expect(h[0]).toMatchObject({ title: 'T11', name: 'n11', savedAt: 1011 });
    expect(h[9]!.title).toBe('T2');
  });

  it('moves a draft saved again to the top instead of keeping it twice', () => {
    const s = storage();
    pushHistory(s, { text: 'a', name: 'A' }, 1);
    pushHistory(s, { text: 'b', name: 'B' }, 2);
    pushHistory(s, { text: 'a', name: 'A' }, 3);
    expect(readHistory(s).map((d) => d.text)).toEqual(['a', 'b']);
  });

  it('two drafts set aside in a row are both kept (the first is not overwritten)', () => {
    const s = storage();
    pushHistory(s, { text: scenario('first'), name: 'one' }, 1);
    pushHistory(s, { text: scenario('second'), name: 'two' }, 2);
    expect(readHistory(s).map((d) => d.title)).toEqual(['second', 'first']);
  });

  it('says so when storage is full, dropping the oldest before giving up', () => {
    const s = storage(2000);
    pushHistory(s, { text: 'x'.repeat(1200), name: 'old' }, 1);
    const r = pushHistory(s, { text: 'y'.repeat(1200), name: 'new' }, 2);
    expect(r.error).toBeNull();
    expect(readHistory(s).map((d) => d.name)).toEqual(['new']);
    const big = pushHistory(s, { text: 'z'.repeat(6000), name: 'paste' }, 3);
    expect(big.error).toMatch(/storage for this site is full/);
    // What was stored stays; the page still holds the big one (and offers an export).
    expect(readHistory(s).map((d) => d.name)).toEqual(['new']);
    expect(writeDraft(s, 'schedlab.draft.t', { text: 'z'.repeat(6000), name: 'p' })).toMatch(/full/);
  });

  it('reads the first format and skips damaged entries', () => {
    const s = storage();
    s.setItem('schedlab.draft', '{"schema":1}');
    expect(readDraft(s, 'schedlab.draft')).toEqual({ text: '{"schema":1}', name: 'your draft' });
    s.setItem(HISTORY_KEY, JSON.stringify([{ text: 'ok', name: 'n', savedAt: 5 }, { nope: 1 }, null]));
    expect(readHistory(s)).toEqual([{ text: 'ok', name: 'n', title: 'n', savedAt: 5 }]);
    s.setItem(HISTORY_KEY, 'not json');
    expect(readHistory(s)).toEqual([]);
  });

  it('removes one entry', () => {
    const s = storage();
    pushHistory(s, { text: 'a', name: 'A' }, 1);
    const { history } = pushHistory(s, { text: 'b', name: 'B' }, 2);
    expect(removeFromHistory(s, history[1]!).map((d) => d.text)).toEqual(['b']);
  });

  it('titles come from the scenario, else the name', () => {
    expect(titleOf(scenario('Fig. 8'), 'file.json')).toBe('Fig. 8');
    expect(titleOf('{"sche', 'file.json')).toBe('file.json');
  });

  it('a tab keeps its id across reloads; another tab gets its own', () => {
    const session = storage();
    const a = tabId(session, () => 0.25);
    expect(tabId(session, () => 0.75)).toBe(a);
    expect(tabId(storage(), () => 0.75)).not.toBe(a);
  });
});
