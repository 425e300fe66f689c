import { describe, expect, it } from 'vitest';
import type { DomainReport, RunReport } from '../sim/types';
import { summaryColumns } from './summary';

const base: RunReport = {
  policy: 'p',
  scheduler: 'credit',
  sim_ms: 1,
  events: 1,
  host: { busy_share: 1, context_switches: 0 },
  domains: {},
  tasks: {},
  fairness: { basis: 'domain_weight', rule: 'domain_weight' },
};
const domain = (extra: Partial<DomainReport>): DomainReport => ({
  cpu_ms: 1,
  cpu_share: 0.5,
  fair_share: 0.5,
  entitled_share: 0.5,
  context_switches: 0,
  migrations: 0,
  busy: true,
  ...extra,
});

describe('summaryColumns', () => {
  it('keeps only the figures some report has', () => {
    const a: RunReport = {
      ...base,
      domains: { d: domain({ underruns: 2 }), e: domain({ context_switches: 4 }) },
      fairness: { jain: 0.99, max_abs_lag_ms: 3, basis: 'domain_weight', rule: 'domain_weight' },
    };
    const b: RunReport = {
      ...base,
      domains: { d: domain({ underruns: 5 }) },
      jobs: { mpi: { makespan_ms: 120, phases_done: 3, spin_ms: 0, spin_ms_by_vcpu: { 'mpi.v0': 0 } } },
      partial_boosts: { count: 4, hits: 3, pbhr: 0.75 },
    };
    const cols = summaryColumns([a, b]);
    expect(cols.map((c) => c.key)).toEqual([
      'jain',
      'lag',
      'makespan-mpi',
      'underruns',
      'boosts',
      'pbhr',
      'switches',
    ]);
    const get = (key: string, r: RunReport) => cols.find((c) => c.key === key)!.value(r);
    expect(get('underruns', b)).toBe(5);
    expect(get('makespan-mpi', a)).toBeUndefined();
    expect(get('jain', a)).toBe(0.99);
    expect(get('switches', a)).toBe(4);
  });
  it('is empty for reports without such figures', () => {
    expect(summaryColumns([base])).toEqual([]);
  });
});
