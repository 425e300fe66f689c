// The comparison panel's whole-run figures (fairness, makespan, under-runs, partial boosts) as table columns,
// keeping only the ones some report has.
import type { DomainReport, RunReport } from '../sim/types';

export interface SummaryColumn {
  readonly key: string;
  readonly head: string;
  readonly title: string;
  readonly value: (r: RunReport) => number | undefined;
  readonly digits?: number;
}

function sumDomains(r: RunReport, pick: (d: DomainReport) => number | undefined): number | undefined {
  const vals = Object.values(r.domains)
    .map(pick)
    .filter((v): v is number => v !== undefined);
  return vals.length === 0 ? undefined : vals.reduce((a, b) => a + b, 0);
}

/** The whole-run figures the report has for a set of runs: a column only when some run has a value for it. */
export function summaryColumns(reports: readonly RunReport[]): SummaryColumn[] {
  const jobs = [...new Set(reports.flatMap((r) => Object.keys(r.jobs ?? {})))].sort();
  const all: SummaryColumn[] = [
    {
      key: 'jain',
      head: 'Jain',
      title: "Jain's fairness index of CPU share against fair share (1 = perfectly fair)",
      value: (r) => r.fairness?.jain,
      digits: 4,
    },
    {
      key: 'lag',
      head: 'max |Lag| [ms]',
      title: 'largest CPU time a vCPU ran ahead of or behind its fair share',
      value: (r) => r.fairness?.max_abs_lag_ms,
    },
    ...jobs.map((j): SummaryColumn => ({
      key: `makespan-${j}`,
      head: `${j} makespan [ms]`,
      title: `time until the job ${j} finished all its phases`,
      value: (r) => r.jobs?.[j]?.makespan_ms,
    })),
    {
      key: 'underruns',
      head: 'under-runs',
      title: 'deadlines missed by media/real-time tasks, all domains',
      value: (r) => sumDomains(r, (d) => d.underruns),
    },
    {
      key: 'boosts',
      head: 'partial boosts',
      title: 'partial boosts given by task-aware scheduling',
      value: (r) => r.partial_boosts?.count,
    },
    {
      key: 'pbhr',
      head: 'PBHR',
      title: 'partial-boost hit ratio: boosts that reached an I/O-bound task',
      value: (r) => r.partial_boosts?.pbhr,
    },
    {
      key: 'switches',
      head: 'context switches',
      title: 'vCPU context switches, all domains',
      value: (r) => sumDomains(r, (d) => d.context_switches),
    },
  ];
  return all.filter((c) => reports.some((r) => c.value(r) !== undefined));
}
