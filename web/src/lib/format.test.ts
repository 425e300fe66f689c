import { describe, expect, it } from 'vitest';
import { anchor, claimValueLines, fmt, formatValues, ms, pct, splitProblems } from './format';

describe('format', () => {
  it('formats numbers compactly and never as NaN', () => {
    expect(fmt(0.123456)).toBe('0.123');
    expect(fmt(12345.6)).toBe('12346');
    expect(fmt(NaN)).toBe('–');
    expect(fmt(undefined)).toBe('–');
    expect(pct(0.5)).toBe('50.0%');
    expect(ms(1234.56)).toBe('1234.6');
    expect(Number.parseFloat(ms(0))).toBe(0);
  });

  it('renders claim values of any JSON shape', () => {
    expect(formatValues({ credit: 12.3456, tavs: 1.5 })).toBe('credit: 12.35, tavs: 1.5');
    expect(formatValues([1, 2])).toBe('1, 2');
    expect(formatValues({ a: { b: 1 } })).toBe('a: {b: 1}');
    expect(formatValues(null)).toBe('');
  });
});

describe('splitProblems', () => {
  it('splits a multi-problem message into items', () => {
    expect(splitProblems('x: invalid scenario (2 problems): (scenario): a; domains[0].weight: b')).toEqual({
      head: 'x: invalid scenario (2 problems)',
      items: ['(scenario): a', 'domains[0].weight: b'],
    });
  });

  it('leaves other messages whole', () => {
    expect(splitProblems('invalid scenario: host.pcpus: must be > 0; really')).toEqual({
      head: 'invalid scenario: host.pcpus: must be > 0; really',
      items: [],
    });
  });
});

describe('claimValueLines', () => {
  it('gives one line per policy or target', () => {
    const values = {
      credit: { 'domains.io.cpu_share': 0.250001, 'domains.x.cpu_share': 0.5 },
      target: { 'domains.io.cpu_share': 0.25 },
      factor: 5,
    };
    expect(claimValueLines(values)).toEqual([
      'credit: domains.io.cpu_share = 0.25, domains.x.cpu_share = 0.5',
      'target: domains.io.cpu_share = 0.25',
      'factor = 5',
    ]);
    expect(claimValueLines(3)).toEqual(['3']);
    expect(claimValueLines(null)).toEqual([]);
  });

  it('anchors edge labels inside the plot', () => {
    expect(anchor(0, 500)).toBe('start');
    expect(anchor(250, 500)).toBe('middle');
    expect(anchor(499, 500)).toBe('end');
  });
});
