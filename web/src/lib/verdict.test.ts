import { describe, expect, it } from 'vitest';
import type { Ablated, Verdict } from '../sim/types';
import {
  ablationWords,
  missingWords,
  verdictClass,
  verdictMark,
  verdictValueLines,
  verdictWords,
} from './verdict';

const values = {
  runs: {
    tavs: { 'domains.mixed.response_ms.mean': 5.12345 },
    credit: { 'domains.mixed.response_ms.mean': 70 },
  },
};
const base = { seeds: [1], failed_seeds: [], seed: 1, values };
const without: Ablated = { label: 'partial boosting off', judged: 1, still_holds: 0, broken: 0 };

describe('verdict words', () => {
  it('words every kind of verdict plainly', () => {
    const cases: [Verdict, string, string][] = [
      [{ ...base, kind: 'holds' }, 'holds', '✓'],
      [{ ...base, kind: 'fails', failed_seeds: [1] }, 'does not hold', '✗'],
      [
        { ...base, kind: 'not_reproduced', reason: 'the model has no cache', holds: false },
        'not reproduced: the model has no cache',
        '○',
      ],
      [
        { ...base, kind: 'not_credited', without: { ...without, still_holds: 1 } },
        'holds, but also without partial boosting off (not credited)',
        '!',
      ],
      [
        {
          ...base,
          kind: 'ablation_broken',
          ablation_error: "no run of policy 'tavs' in the report",
          without: { ...without, broken: 1 },
        },
        "ablation broken: no run of policy 'tavs' in the report",
        '!',
      ],
      [
        { ...base, kind: 'stale', why: 'marked not_reproduced but reproduced: update its status' },
        'status out of date: marked not_reproduced but reproduced: update its status',
        '!',
      ],
      [{ ...base, kind: 'goal', met: true }, 'goal met', '✓'],
      [{ ...base, kind: 'goal', met: false }, 'goal not met yet', '○'],
    ];
    for (const [v, words, mark] of cases) {
      expect(verdictWords(v)).toBe(words);
      expect(verdictMark(v)).toBe(mark);
    }
  });

  it('never marks a finding or a broken ablation as holding', () => {
    expect(verdictClass({ ...base, kind: 'not_reproduced', reason: 'r', holds: true })).toBe(
      'not-reproduced',
    );
    expect(verdictClass({ ...base, kind: 'ablation_broken', ablation_error: 'e' })).toBe('fails');
    expect(verdictClass({ ...base, kind: 'not_credited' })).toBe('fails');
    expect(verdictClass({ ...base, kind: 'holds' })).toBe('holds');
  });

  it('explains a missing value where it shows', () => {
    const error = "no makespan: jobs.d/y did not finish within the run of 'a'";
    const v: Verdict = { seeds: [1], failed_seeds: [1], seed: 1, error, kind: 'fails' };
    expect(verdictValueLines(v)).toEqual([error]);
    expect(verdictWords(v)).toBe(`does not hold (${error})`);
    expect(missingWords("metric 'x' matches nothing in the run of 'a'")).toBe(
      "no value: metric 'x' matches nothing in the run of 'a'",
    );
  });

  it('lists the numbers by run, then targets and the bound', () => {
    const v: Verdict = {
      ...base,
      kind: 'holds',
      values: {
        runs: { target: { 'domains.x.cpu_share': 0.3 } },
        target: { 'domains.x.cpu_share': 0.25 },
        bound: 14.8,
      },
    };
    expect(verdictValueLines(v)).toEqual([
      'target: domains.x.cpu_share = 0.3',
      'target: domains.x.cpu_share = 0.25',
      'bound on the factor = 14.8',
    ]);
    expect(verdictValueLines({ ...base, kind: 'holds' })).toEqual([
      'tavs: domains.mixed.response_ms.mean = 5.123',
      'credit: domains.mixed.response_ms.mean = 70',
    ]);
  });

  it('says how the ablation went, or that it has not run', () => {
    const v = (w: Partial<Ablated>): Verdict => ({ ...base, kind: 'holds', without: { ...without, ...w } });
    expect(ablationWords(v({ judged: 0 }))).toBe(
      'Should fail without it (partial boosting off); not run here yet.',
    );
    expect(ablationWords(v({}))).toBe('Fails without it (partial boosting off).');
    expect(ablationWords(v({ still_holds: 1 }))).toBe(
      'Still holds without it (partial boosting off): not credited.',
    );
    expect(ablationWords(v({ broken: 1, error: 'boom' }))).toBe(
      'Ablation broken (partial boosting off): boom.',
    );
    expect(ablationWords({ ...base, kind: 'holds' })).toBeNull();
  });
});
