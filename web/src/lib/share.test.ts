import { describe, expect, it } from 'vitest';
import { zlibSync } from 'fflate';
import {
  LINK_VERSION,
  MAX_DECODED_BYTES,
  MAX_ENCODED_CHARS,
  applyMergePatch,
  createMergePatch,
  decodeData,
  encodeData,
  parseShareUrl,
  resolveLibraryRef,
  scenarioLink,
  toShareSearch,
  type Json,
} from './share';

const doc = {
  schema: 1,
  id: 't',
  title: 'T',
  seed: 1,
  duration_ms: 100,
  host: { pcpus: 1 },
  domains: [{ name: 'a', weight: 256 }],
  policies: [{ id: 'credit', scheduler: 'credit' }],
};
const text = JSON.stringify(doc, null, 2);

function b64url(bytes: Uint8Array): string {
  return btoa(String.fromCharCode(...bytes))
    .replace(/\+/g, '-')
    .replace(/\//g, '_')
    .replace(/=+$/, '');
}

describe('merge patch', () => {
  it('round-trips edits, removals and additions', () => {
    const target: Record<string, Json> = { ...doc, seed: 2, summary: 'new', host: { pcpus: 2 } };
    delete target.title;
    const patch = createMergePatch(doc, target);
    expect(patch).toEqual({ seed: 2, title: null, summary: 'new', host: { pcpus: 2 } });
    expect(applyMergePatch(doc, patch)).toEqual(target);
  });

  it('keeps a hostile __proto__ key a plain property', () => {
    const patch = JSON.parse('{"__proto__": {"polluted": true}}') as Json;
    const out = applyMergePatch({ a: 1 }, patch) as Record<string, unknown>;
    expect(({} as Record<string, unknown>).polluted).toBeUndefined();
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.hasOwn(out, '__proto__')).toBe(true);
  });
});

/** A link's query and fragment, as the page reads them from location. */
function split(link: string): [string, string] {
  const i = link.indexOf('#');
  return i < 0 ? [link, ''] : [link.slice(0, i), link.slice(i)];
}

describe('share links', () => {
  it('round-trip a whole scenario and the view', () => {
    const search = toShareSearch({
      scenario: scenarioLink(null, null, text),
      policies: ['credit'],
      testing: false,
      time: 12.3456789,
      view: [10, 60],
      hidden: [1],
      open: ['editor'],
      lesson: 'p000-boost',
      step: 2,
    });
    const s = parseShareUrl(...split(search));
    expect(s.errors).toEqual([]);
    expect(s.scenario?.kind).toBe('inline');
    expect(s.scenario?.kind === 'inline' && JSON.parse(s.scenario.text)).toEqual(doc);
    expect(s.policies).toEqual(['credit']);
    expect(s.time).toBeCloseTo(12.346, 6);
    expect(s.view).toEqual([10, 60]);
    expect(s.hidden).toEqual([1]);
    expect(s.open).toEqual(['editor']);
    expect(s.lesson).toBe('p000-boost');
    expect(s.step).toBe(2);
  });

  it('keep library links short: the id alone, or the id and a patch of the edits', () => {
    const plain = toShareSearch({
      scenario: scenarioLink('lib', text, text),
      policies: ['credit'],
      testing: false,
    });
    expect(plain).toBe(`?v=${LINK_VERSION}&scenario=lib&policies=credit`);
    const edited = JSON.stringify({ ...doc, seed: 7 });
    const search = toShareSearch({
      scenario: scenarioLink('lib', text, edited),
      policies: [],
      testing: false,
    });
    const s = parseShareUrl(...split(search));
    expect(s.errors).toEqual([]);
    expect(s.scenario).toEqual({ kind: 'library', id: 'lib', patch: { seed: 7 } });
    if (s.scenario?.kind !== 'library') throw new Error('library ref expected');
    expect(JSON.parse(resolveLibraryRef(s.scenario, text))).toEqual({ ...doc, seed: 7 });
  });

  it('open links of the first, unversioned format', () => {
    const s = parseShareUrl('?scenario=credit-boost&policies=a,b');
    expect(s.errors).toEqual([]);
    expect(s.scenario).toEqual({ kind: 'library', id: 'credit-boost', patch: null });
    expect(s.policies).toEqual(['a', 'b']);
  });

  it('say why a newer link format or scenario schema cannot be read', () => {
    const newer = parseShareUrl(`?v=${LINK_VERSION + 1}&scenario=x`);
    expect(newer.scenario).toBeNull();
    expect(newer.errors.join(' ')).toMatch(/newer schedlab.*format 2/);
    const schema2 = parseShareUrl('?v=1', `#s=${encodeData(JSON.stringify({ ...doc, schema: 2 }))}`);
    expect(schema2.scenario).toBeNull();
    expect(schema2.errors.join(' ')).toMatch(/schema 2, newer/);
    const schema0 = parseShareUrl('?v=1', `#s=${encodeData(JSON.stringify({ ...doc, schema: 0 }))}`);
    expect(schema0.errors.join(' ')).toMatch(/schema 0, which this schedlab can no longer read/);
  });

  it('reject truncated, non-JSON, oversized and bomb links with a message', () => {
    const full = encodeData(text);
    const cut = parseShareUrl('?v=1', `#s=${full.slice(0, Math.floor(full.length / 2))}`);
    expect(cut.scenario).toBeNull();
    expect(cut.errors.join(' ')).toMatch(/damaged or incomplete/);
    expect(parseShareUrl('?v=1&s=%3Cscript%3E').errors.join(' ')).toMatch(/damaged/);

    const notJson = parseShareUrl('?v=1', `#s=${encodeData('{"schema": 1,')}`);
    expect(notJson.errors.join(' ')).toMatch(/not valid JSON/);

    const huge = parseShareUrl('?v=1', `#s=${'A'.repeat(MAX_ENCODED_CHARS + 1)}`);
    expect(huge.errors.join(' ')).toMatch(/too large/);

    const bomb = b64url(zlibSync(new Uint8Array(MAX_DECODED_BYTES * 4).fill(32), { level: 9 }));
    expect(bomb.length).toBeLessThan(MAX_ENCODED_CHARS);
    expect(() => decodeData(bomb, 'scenario')).toThrow(/expands to more than/);
  });

  it('drop malformed view parameters with a message and keep the rest', () => {
    const s = parseShareUrl('?v=1&scenario=x&t=abc&view=5,2&hide=9,2');
    expect(s.scenario).toEqual({ kind: 'library', id: 'x', patch: null });
    expect(s.time).toBeNull();
    expect(s.view).toBeNull();
    expect(s.hidden).toEqual([1]);
    expect(s.errors).toHaveLength(2);
  });
});

describe('links that name only part of the page', () => {
  it('read the view, lesson and speed of an unversioned link, and drop a speed that is not one', () => {
    const s = parseShareUrl('?lesson=p000-tavs&step=2&speed=5');
    expect(s.errors).toEqual([]);
    expect([s.lesson, s.step, s.speed]).toEqual(['p000-tavs', 1, 5]);
    const bad = parseShareUrl('?v=1&scenario=x&speed=3');
    expect(bad.speed).toBeNull();
    expect(bad.errors.join(' ')).toMatch(/speed="3" is not one of the speeds/);
  });

  it("open a lesson step's scenario, columns and window unless the link gives its own for that scenario", async () => {
    const { linkWithLesson, findLesson } = await import('./lessons');
    const tavs = findLesson('p000-tavs')!;
    const alone = linkWithLesson(parseShareUrl('?lesson=p000-tavs&step=3'));
    expect(alone.scenario).toEqual({ kind: 'library', id: tavs.steps[2]!.scenario, patch: null });
    expect(alone.policies).toEqual(tavs.steps[2]!.policies);
    expect([alone.time, alone.view]).toEqual([tavs.steps[2]!.t_ms, tavs.steps[2]!.view_ms]);
    // Another scenario in the link: the step's wins (the text must describe the columns on screen).
    const other = linkWithLesson(parseShareUrl('?v=1&scenario=credit-boost&lesson=p000-tavs&step=3'));
    expect(other.scenario).toEqual(alone.scenario);
    // The step's own scenario with a playhead of its own: kept.
    const own = linkWithLesson(
      parseShareUrl(`?v=1&scenario=${tavs.steps[2]!.scenario}&t=123&lesson=p000-tavs&step=3`),
    );
    expect(own.time).toBe(123);
    // A step past the end is the last one.
    expect(linkWithLesson(parseShareUrl('?lesson=p000-tavs&step=99')).step).toBe(tavs.steps.length - 1);
  });
});
