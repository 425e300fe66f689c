import { describe, expect, it } from 'vitest';
import { readdirSync, readFileSync } from 'node:fs';
import { claimPolicies, metricLabel, metricValue, scenarioFocus } from './focus';
import type { RunReport, ScenarioDoc } from '../sim/types';

const dir = new URL('../../../scenarios/', import.meta.url);
const papers = readdirSync(dir)
  .filter((f) => /^p0.*\.json$/.test(f))
  .map((f) => [f, JSON.parse(readFileSync(new URL(f, dir), 'utf8')) as ScenarioDoc] as const);

describe('scenarioFocus', () => {
  it('takes the policies the claims compare, in scenario order, at most four', () => {
    const doc = {
      policies: [{ id: 'a' }, { id: 'b' }, { id: 'c' }].map((p) => ({ ...p, scheduler: 'credit' })),
      claims: [{ text: '', metric: 'domains.x.cpu_share', higher: 'c', than: 'a' }],
    };
    expect(scenarioFocus(doc)).toEqual({ policies: ['a', 'c'], metrics: ['domains.x.cpu_share'] });
  });
  it('keeps an explicit focus', () => {
    const doc = {
      policies: [{ id: 'a' }, { id: 'b' }].map((p) => ({ ...p, scheduler: 'credit' })),
      claims: [{ text: '', metric: 'm.x', policy: 'a' }],
      focus: { policies: ['b'], metrics: ['fairness.jain'] },
    };
    expect(scenarioFocus(doc)).toEqual({ policies: ['b'], metrics: ['fairness.jain'] });
  });
  it.each(papers)('%s: every claimed policy is a focus policy (up to four columns)', (_, doc) => {
    const focus = scenarioFocus(doc);
    expect(focus.policies.length).toBeGreaterThan(0);
    expect(focus.policies.length).toBeLessThanOrEqual(4);
    const claimed = new Set((doc.claims ?? []).flatMap(claimPolicies));
    if (claimed.size <= 4) for (const p of claimed) expect(focus.policies).toContain(p);
    expect(focus.metrics.length).toBeGreaterThan(0);
  });
  it('shows the thesis scenarios with Credit2 and Enhanced', () => {
    const doc = papers.find(([f]) => f === 'p003-table5-dom0-stress.json')![1];
    expect(scenarioFocus(doc).policies).toEqual(expect.arrayContaining(['credit2', 'enhanced']));
  });
});

describe('metricValue', () => {
  const report = {
    domains: { mixed: { response_ms: { mean: 5.1 } } },
    tasks: { 'mixed/echo': { belief: 30 } },
    fairness: { jain: 0.99 },
  } as unknown as RunReport;
  it('walks domain, task and plain paths', () => {
    expect(metricValue(report, 'domains.mixed.response_ms.mean')).toBe(5.1);
    expect(metricValue(report, 'tasks.mixed/echo.belief')).toBe(30);
    expect(metricValue(report, 'fairness.jain')).toBe(0.99);
    expect(metricValue(report, 'domains.nope.cpu_share')).toBeUndefined();
  });
});

describe('metricLabel', () => {
  it('reads a path as words', () => {
    expect(metricLabel('domains.mixed.response_ms.mean')).toBe('mixed: response mean [ms]');
    expect(metricLabel('domains.net.throughput.mbps')).toBe('net: Mbit/s');
    expect(metricLabel('fairness.jain')).toBe('Jain fairness');
  });
});
