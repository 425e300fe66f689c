import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { LESSONS, PENDING_SCENARIOS } from './lessons';
import { parseIndex } from './scenarios';

const dir = new URL('../../../scenarios/', import.meta.url);
const index = parseIndex(readFileSync(new URL('index.json', dir), 'utf8'));
const ids = new Set(index.scenarios.map((s) => s.id));

describe('lessons', () => {
  it('cover every paper, with unique ids and at least one step each', () => {
    expect(new Set(LESSONS.map((l) => l.paper))).toEqual(new Set(['000', '001', '002', '003', '004']));
    expect(new Set(LESSONS.map((l) => l.id)).size).toBe(LESSONS.length);
    for (const l of LESSONS) expect(l.steps.length, l.id).toBeGreaterThan(0);
  });

  it('use scenarios of the library (or ones listed as pending a merge)', () => {
    for (const l of LESSONS) {
      for (const [i, s] of l.steps.entries()) {
        const known = ids.has(s.scenario) || PENDING_SCENARIOS.includes(s.scenario);
        expect(known, `${l.id} step ${i + 1}: scenario ${s.scenario} is not in scenarios/index.json`).toBe(
          true,
        );
      }
    }
  });

  it('list as pending only scenarios that are not merged yet (empty PENDING_SCENARIOS after merging)', () => {
    for (const id of PENDING_SCENARIOS) expect(ids.has(id), `${id} is in the library now`).toBe(false);
  });

  it('name policies the scenario has and times inside its run', () => {
    for (const l of LESSONS) {
      for (const [i, s] of l.steps.entries()) {
        const entry = index.scenarios.find((e) => e.id === s.scenario);
        if (!entry) continue;
        const doc = JSON.parse(readFileSync(new URL(entry.file, dir), 'utf8')) as {
          duration_ms: number;
          policies: { id: string }[];
        };
        const where = `${l.id} step ${i + 1}`;
        for (const p of s.policies ?? [])
          expect(
            doc.policies.map((x) => x.id),
            where,
          ).toContain(p);
        for (const m of s.marks ?? []) if (m.policy) expect(s.policies ?? [], where).toContain(m.policy);
        expect(s.t_ms, where).toBeLessThanOrEqual(doc.duration_ms);
        if (s.view_ms) expect(s.view_ms[1], where).toBeLessThanOrEqual(doc.duration_ms);
      }
    }
  });
});
