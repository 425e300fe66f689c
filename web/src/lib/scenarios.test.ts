import { describe, expect, it } from 'vitest';
import {
  findEntry,
  groupByKind,
  loadIndex,
  loadScenarioText,
  parseIndex,
  prefetchScenario,
  type ScenarioFiles,
} from './scenarios';

const index = {
  default: 'b',
  scenarios: [
    { id: 'a', file: 'a.json', title: 'A', summary: 's', source: '000', kind: 'paper' },
    { id: 'b', file: 'b.json', title: 'B', summary: 's', source: '001', kind: 'lesson' },
    { id: 'c', file: 'sub/c.json', title: '', summary: '', source: '', kind: 'paper' },
  ],
};

function files(extra: Record<string, string> = {}): ScenarioFiles {
  const all: Record<string, string> = {
    'index.json': JSON.stringify(index),
    'a.json': '{"id":"a"}',
    ...extra,
  };
  return Object.fromEntries(Object.entries(all).map(([k, v]) => [k, () => Promise.resolve(v)]));
}

describe('parseIndex', () => {
  it('reads a well-formed index and fills an empty title with the id', () => {
    const parsed = parseIndex(JSON.stringify(index));
    expect(parsed.default).toBe('b');
    expect(parsed.scenarios.map((s) => s.id)).toEqual(['a', 'b', 'c']);
    expect(parsed.scenarios[2]?.title).toBe('c');
  });

  it('names the field path of a problem', () => {
    const bad = { ...index, scenarios: [{ ...index.scenarios[0], file: 3 }] };
    expect(() => parseIndex(JSON.stringify(bad))).toThrow('scenarios[0].file: must be a string');
    expect(() => parseIndex('{"default":"x","scenarios":[]}')).toThrow(/default/);
    expect(() => parseIndex('[')).toThrow(/not JSON/);
    expect(() => parseIndex('{"default":"a","scenarios":{}}')).toThrow('scenarios: must be an array');
  });

  it('rejects duplicate ids', () => {
    const dup = { default: 'a', scenarios: [index.scenarios[0], index.scenarios[0]] };
    expect(() => parseIndex(JSON.stringify(dup))).toThrow(/duplicate id/);
  });
});

describe('loading', () => {
  it('loads the index and a listed file', async () => {
    const f = files();
    const idx = await loadIndex(f);
    const a = findEntry(idx, 'a');
    expect(a).toBeDefined();
    expect(await loadScenarioText(a!, f)).toBe('{"id":"a"}');
    expect(findEntry(idx, 'nope')).toBeUndefined();
  });

  it('says which file is missing', async () => {
    const f = files();
    const idx = await loadIndex(f);
    await expect(loadScenarioText(findEntry(idx, 'b')!, f)).rejects.toThrow('scenarios/b.json');
    await expect(loadIndex({})).rejects.toThrow(/index.json is missing/);
  });

  it('prefetches a linked id by its file name, and nothing for an unknown or renamed one', () => {
    const asked: string[] = [];
    const f: ScenarioFiles = {
      'a.json': () => {
        asked.push('a.json');
        return Promise.resolve('{}');
      },
      'sub/c.json': () => {
        asked.push('sub/c.json');
        return Promise.reject(new Error('offline'));
      },
    };
    expect(prefetchScenario('a', f)).toBe(true);
    expect(prefetchScenario('c', f)).toBe(false);
    expect(prefetchScenario('nope', f)).toBe(false);
    expect(asked).toEqual(['a.json']);
  });

  it('groups by kind in first-seen order', () => {
    const groups = groupByKind(parseIndex(JSON.stringify(index)));
    expect(groups.map(([k, l]) => [k, l.map((s) => s.id)])).toEqual([
      ['paper', ['a', 'c']],
      ['lesson', ['b']],
    ]);
  });
});

describe('the bundled library', () => {
  it('lists only files that exist, and its default', async () => {
    const { bundledFiles } = await import('./scenarios');
    if (!bundledFiles['index.json']) return; // the library is filled in by the simulator side
    const idx = await loadIndex();
    for (const entry of idx.scenarios) {
      expect(bundledFiles[entry.file], `scenarios/${entry.file}`).toBeDefined();
    }
  });
});
