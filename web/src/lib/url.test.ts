import { describe, expect, it } from 'vitest';
import { parseUrl, toSearch } from './url';

describe('parseUrl', () => {
  it('reads an empty URL as defaults', () => {
    expect(parseUrl('')).toEqual({ scenario: null, policies: null, testing: false, errors: [] });
  });

  it('reads scenario, policies and testing', () => {
    expect(parseUrl('?testing=1&scenario=credit-weights&policies=credit,tavs')).toEqual({
      scenario: 'credit-weights',
      policies: ['credit', 'tavs'],
      testing: true,
      errors: [],
    });
  });

  it('rejects ids with odd characters and says why', () => {
    const s = parseUrl('?scenario=../etc/passwd');
    expect(s.scenario).toBeNull();
    expect(s.errors[0]).toMatch(/not a valid scenario id/);
  });

  it('treats an empty scenario as malformed', () => {
    expect(parseUrl('?scenario=').errors).toHaveLength(1);
  });

  it('survives malformed percent-encoding', () => {
    const s = parseUrl('?scenario=%E0%A4%A');
    expect(s.scenario).toBeNull();
    expect(s.errors).toHaveLength(1);
  });

  it('uses the first of repeated scenarios', () => {
    const s = parseUrl('?scenario=a&scenario=b');
    expect(s.scenario).toBe('a');
    expect(s.errors).toHaveLength(1);
  });

  it('rejects bad policy lists and caps their length', () => {
    expect(parseUrl('?policies=,').policies).toBeNull();
    expect(parseUrl('?policies=a,b$').errors).toHaveLength(1);
    expect(parseUrl('?policies=credit,pi~w3').policies).toEqual(['credit', 'pi~w3']);
    expect(parseUrl('?policies=credit,pi~wx').policies).toBeNull();
    const many = parseUrl('?policies=a,b,c,d,e');
    expect(many.policies).toEqual(['a', 'b', 'c', 'd']);
    expect(many.errors).toHaveLength(1);
  });

  it('only turns testing on for 1 or true', () => {
    expect(parseUrl('?testing=0').testing).toBe(false);
    expect(parseUrl('?testing=true').testing).toBe(true);
  });
});

describe('toSearch', () => {
  it('round-trips through parseUrl', () => {
    const state = { scenario: 'credit-boost', policies: ['credit', 'tavs'], testing: true };
    const search = toSearch(state);
    expect(search).toBe('?scenario=credit-boost&policies=credit,tavs&testing=1');
    const back = parseUrl(search);
    expect(back).toEqual({ ...state, errors: [] });
  });

  it('keeps unrelated parameters and drops cleared ones', () => {
    expect(toSearch({ scenario: null, policies: null, testing: false }, '?x=1&scenario=a')).toBe('?x=1');
  });
});
