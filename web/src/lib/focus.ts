// A scenario's focus: the policies and metrics its headline claims compare. The page opens on them:
// the focus policies are the default columns and the focus metrics the key figures at the top. A scenario may
// name its focus (`focus: {policies, metrics}`); otherwise it is read off the claims, so most files need none.
import type { RunReport, ScenarioDoc } from '../sim/types';

/** Columns the page shows at most (mirrors url.ts MAX_COLUMNS, kept here to stay import-free). */
const MAX_POLICIES = 4;
/** Key figures shown at most. */
const MAX_METRICS = 3;

export interface Focus {
  /** Policy ids, in the scenario's order. */
  readonly policies: readonly string[];
  /** Metric paths of the report (`domains.mixed.response_ms.mean`), headline first. */
  readonly metrics: readonly string[];
}

/** The policies a claim compares or judges, subject first. */
export function claimPolicies(c: NonNullable<ScenarioDoc['claims']>[number]): string[] {
  const names = [c.lower ?? c.higher, c.than, c.policy].filter((p): p is string => typeof p === 'string');
  return [...new Set(names)];
}

/** The metric paths a claim reads (its metric, and the one it compares against); wildcards are left out. */
export function claimMetrics(c: NonNullable<ScenarioDoc['claims']>[number]): string[] {
  const paths = [c.metric, c.than_metric, typeof c.near === 'string' && c.near.includes('.') ? c.near : null];
  return [...new Set(paths.filter((m): m is string => typeof m === 'string' && !m.includes('*')))];
}

/** The scenario's focus: its own `focus` where given, else the policies and metrics its claims name. */
export function scenarioFocus(doc: Pick<ScenarioDoc, 'policies' | 'claims' | 'focus'>): Focus {
  const ids = doc.policies.map((p) => p.id);
  const claims = doc.claims ?? [];
  // Claims the model reproduces come first: they are the ones the page can show holding.
  const ordered = [
    ...claims.filter((c) => c.status !== 'not_reproduced'),
    ...claims.filter((c) => c.status === 'not_reproduced'),
  ];
  let policies = (doc.focus?.policies ?? ordered.flatMap(claimPolicies)).filter((p) => ids.includes(p));
  policies = [...new Set(policies)].slice(0, MAX_POLICIES);
  // A single-policy focus (claims about one policy's domains) still compares: with a second policy when the
  // scenario has one and the focus was not given.
  if (!doc.focus?.policies && policies.length < 2)
    for (const p of ids) if (policies.length < 2 && !policies.includes(p)) policies.push(p);
  if (policies.length === 0) policies = ids.slice(0, 2);
  policies.sort((a, b) => ids.indexOf(a) - ids.indexOf(b));
  const metrics = [...new Set(doc.focus?.metrics ?? ordered.flatMap(claimMetrics))].slice(0, MAX_METRICS);
  return { policies, metrics };
}

/**
 * The value at a metric path of a run's report (the claims' paths): keys may contain '/' (tasks, jobs) but the
 * path is split on '.', so a key with dots is matched greedily. Undefined when the report has none.
 */
export function metricValue(report: RunReport, path: string): number | undefined {
  const parts = path.split('.');
  let node: unknown = report;
  let i = 0;
  while (i < parts.length) {
    if (typeof node !== 'object' || node === null) return undefined;
    const obj = node as Record<string, unknown>;
    let j = parts.length;
    for (; j > i; j--) if (parts.slice(i, j).join('.') in obj) break;
    if (j === i) return undefined;
    node = obj[parts.slice(i, j).join('.')];
    i = j;
  }
  return typeof node === 'number' && Number.isFinite(node) ? node : undefined;
}

const UNIT: Readonly<Record<string, string>> = {
  response_ms: 'response',
  event_latency_ms: 'event latency',
  io_latency_ms: 'I/O latency',
  cpu_share: 'CPU share',
  fair_share: 'fair share',
  cpu_ms: 'CPU time',
  context_switches: 'context switches',
  migrations: 'migrations',
  makespan_ms: 'makespan',
  phases_done: 'phases done',
  spin_ms: 'spin time',
  max_abs_lag_ms: 'max |Lag|',
  underruns: 'under-runs',
  requests_per_s: 'requests/s',
  mbps: 'Mbit/s',
  blocks_per_s: 'blocks/s',
  progress_per_s: 'progress/s',
  messages_per_s: 'messages/s',
  io_per_s: 'I/O per s',
  jain: 'Jain fairness',
  pbhr: 'partial-boost hit ratio',
  count: 'partial boosts',
  belief: 'belief',
};

/** A metric path in words: `domains.mixed.response_ms.mean` -> "mixed: response mean [ms]". */
export function metricLabel(path: string): string {
  const parts = path.split('.');
  const head = parts[0];
  const rest = head === 'domains' || head === 'tasks' || head === 'jobs' ? parts.slice(2) : parts.slice(1);
  const owner =
    head === 'domains' || head === 'tasks' || head === 'jobs' ? parts[1] : head === 'host' ? 'host' : '';
  const words = rest.filter((p) => p !== 'throughput').map((p) => UNIT[p] ?? p.replace(/_/g, ' '));
  const unit = rest.some((p) => p.endsWith('_ms')) ? ' [ms]' : '';
  const what = words.join(' ');
  return owner ? `${owner}: ${what}${unit}` : `${what}${unit}`;
}
