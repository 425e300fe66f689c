import { describe, expect, it } from 'vitest';
import {
  addScriptPolicy,
  freshPolicyId,
  offsetOf,
  scriptPolicies,
  scriptProblem,
  setScript,
  sourceProblem,
  templateFor,
  varValue,
  type ScriptTemplate,
} from './script';
import {
  createMergePatch,
  applyMergePatch,
  decodeData,
  encodeData,
  parseShareUrl,
  scenarioLink,
  toShareSearch,
  type Json,
} from './share';

const scenario = JSON.stringify({
  schema: 1,
  id: 'demo',
  policies: [
    { id: 'credit', scheduler: 'credit' },
    {
      id: 'script',
      label: 'Mine',
      scheduler: 'script',
      params: { source: 'fn do_schedule(p, c, r) {}', vars: { slice_ms: 30 } },
    },
  ],
});

const template = (id: string): ScriptTemplate => ({
  id,
  title: id,
  description: '',
  source: `// ${id}\nfn do_schedule(p, cur, runnable) { #{ next: () } }\n`,
  vars: { slice_ms: 10 },
});

describe('script policies in a scenario', () => {
  it('lists the scripted policies with their source and vars', () => {
    expect(scriptPolicies(scenario)).toEqual([
      { id: 'script', label: 'Mine', source: 'fn do_schedule(p, c, r) {}', vars: { slice_ms: 30 } },
    ]);
    expect(scriptPolicies('not json')).toEqual([]);
  });

  it('adds a copy of a template under an id no policy has', () => {
    expect(freshPolicyId(['script', 'script-2'])).toBe('script-3');
    const added = addScriptPolicy(scenario, template('fair-share'), 'Fair share');
    expect(added.id).toBe('script-2');
    const doc = JSON.parse(added.text) as { policies: { id: string; params?: { vars: unknown } }[] };
    expect(doc.policies.map((p) => p.id)).toEqual(['credit', 'script', 'script-2']);
    expect(doc.policies[2]!.params!.vars).toEqual({ slice_ms: 10 });
  });

  it('replaces one policy’s source and vars, and nothing else', () => {
    const next = setScript(scenario, 'script', 'fn do_schedule(p, c, r) { 1 }', { slice_ms: 5 });
    const doc = JSON.parse(next) as { id: string; policies: { params?: Json }[] };
    expect(doc.id).toBe('demo');
    expect(doc.policies[0]).toEqual({ id: 'credit', scheduler: 'credit' });
    expect(doc.policies[1]!.params).toEqual({
      source: 'fn do_schedule(p, c, r) { 1 }',
      vars: { slice_ms: 5 },
    });
    // A policy that is not a script is left alone.
    expect(setScript(scenario, 'credit', 'x')).toBe(scenario);
  });

  it('travels in a share link as a patch and comes back byte for byte', () => {
    const source =
      'fn do_schedule(p, cur, runnable) {\n    // “quotes” and \\ and ${x}\n    #{ next: () }\n}\n';
    const edited = setScript(scenario, 'script', source);
    const link = scenarioLink('demo', scenario, edited);
    expect(link.patch).not.toBeNull();
    const search = toShareSearch({ scenario: link, policies: ['credit', 'script'], testing: false });
    const [query, hash] = search.split('#');
    const state = parseShareUrl(query!, `#${hash}`);
    expect(state.scenario?.kind).toBe('library');
    const patch = state.scenario?.kind === 'library' ? state.scenario.patch : null;
    const back = applyMergePatch(JSON.parse(scenario) as Json, patch) as {
      policies: { params?: { source?: string } }[];
    };
    expect(back.policies[1]!.params!.source).toBe(source);
    expect(decodeData(encodeData(source), 'x')).toBe(source);
    expect(createMergePatch(JSON.parse(scenario) as Json, JSON.parse(edited) as Json)).toBeTruthy();
  });
});

describe('script messages', () => {
  it('read the line and column a message names', () => {
    expect(scriptProblem('line 4, column 9: expecting an expression')).toEqual({
      line: 4,
      column: 9,
      message: 'line 4, column 9: expecting an expression',
    });
    const runtime = 'script do_schedule at 12.500 ms: line 7: array index out of bounds';
    expect(scriptProblem(runtime)).toMatchObject({ line: 7, column: null });
    expect(scriptProblem('no line here')).toMatchObject({ line: null, column: null });
  });

  it('find a policy’s syntax error in a scenario validation message', () => {
    const msg =
      'invalid scenario: policies[1].params.source: line 3, column 5: unexpected token; domains[0].weight: too small';
    expect(sourceProblem(msg, 1)).toEqual({
      line: 3,
      column: 5,
      message: 'line 3, column 5: unexpected token',
    });
    expect(sourceProblem(msg, 0)).toBeNull();
  });

  it('turn a line and column into an offset inside the text', () => {
    const src = 'ab\ncdef\ng';
    expect(offsetOf(src, 1, 1)).toBe(0);
    expect(offsetOf(src, 2, 3)).toBe(5);
    expect(offsetOf(src, 2, 99)).toBe(7); // clamped to the line's end
    expect(offsetOf(src, 9, 1)).toBe(src.length);
    expect(offsetOf(src, 3, null)).toBe(8);
  });

  it('pick the template of a column’s scheduler, else the fair-share one', () => {
    const list = [template('round_robin'), template('fair_share'), template('edf')];
    expect(templateFor(list, 'credit')?.id).toBe('fair_share');
    expect(templateFor(list, 'sedf')?.id).toBe('edf');
    expect(templateFor(list, 'round_robin')?.id).toBe('round_robin');
    expect(templateFor([template('a'), template('b')], 'credit')?.id).toBe('a');
    expect(templateFor([], 'credit')).toBeUndefined();
  });
});

describe('a var edited in its input', () => {
  it('keeps its type, and its old value while the input does not parse', () => {
    expect(varValue(30, '12')).toBe(12);
    expect(varValue(30, '')).toBe(30);
    expect(varValue(true, false)).toBe(false);
    expect(varValue('a', 'b')).toBe('b');
    expect(varValue(['job'], '["job", "web"]')).toEqual(['job', 'web']);
    expect(varValue(['job'], '["jo')).toEqual(['job']);
  });
});
