import { describe, expect, it } from 'vitest';
import type { RunReport } from '../sim/types';
import { summaryColumns } from './summary';

const base = { policy: 'p', sim_ms: 1, events: 1 };

describe('summaryColumns', () => {
  it('keeps only the figures some report has', () => {
    const a: RunReport = {
      ...base,
      domains: { d: { cpu_ms: 1, cpu_share: 0.5, fair_share: 0.5, underruns: 2 } },
      fairness: { jain: 0.99, max_abs_lag_ms: 3 },
    };
    const b: RunReport = {
      ...base,
      domains: { d: { cpu_ms: 1, cpu_share: 0.5, fair_share: 0.5, underruns: 5 } },
      jobs: { mpi: { makespan_ms: 120 } },
      partial_boosts: { count: 4, hits: 3, pbhr: 0.75 },
    };
    const cols = summaryColumns([a, b]);
    expect(cols.map((c) => c.key)).toEqual(['jain', 'lag', 'makespan-mpi', 'underruns', 'boosts', 'pbhr']);
    const get = (key: string, r: RunReport) => cols.find((c) => c.key === key)!.value(r);
    expect(get('underruns', b)).toBe(5);
    expect(get('makespan-mpi', a)).toBeUndefined();
    expect(get('jain', a)).toBe(0.99);
  });
  it('is empty for reports without such figures', () => {
    expect(summaryColumns([{ ...base, domains: { d: { cpu_ms: 1, cpu_share: 1, fair_share: 1 } } }])).toEqual(
      [],
    );
  });
});
