import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import {
  concealedAt,
  differ,
  DIFFERENCE_MARGIN,
  findHomework,
  findLesson,
  HOMEWORK,
  LESSONS,
  nextLesson,
  PENDING_SCENARIOS,
  predictVerdict,
  renderLessonText,
  textFigures,
} from './lessons';
import { parseIndex } from './scenarios';
import { initSync, run_report } from '../sim/pkg/schedsim_wasm.js';

const dir = new URL('../../../scenarios/', import.meta.url);
const index = parseIndex(readFileSync(new URL('index.json', dir), 'utf8'));
const ids = new Set(index.scenarios.map((s) => s.id));

describe('lessons', () => {
  it('cover every paper, with unique ids and at least one step each', () => {
    expect(new Set(LESSONS.flatMap((l) => l.paper ?? []))).toEqual(
      new Set(['000', '001', '002', '003', '004']),
    );
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

interface Claim {
  text: string;
  lower?: string;
  higher?: string;
  than?: string;
  policy?: string;
  status?: string;
}

function scenarioDoc(id: string): { duration_ms: number; claims?: Claim[]; policies: { id: string }[] } {
  const entry = index.scenarios.find((e) => e.id === id)!;
  return JSON.parse(readFileSync(new URL(entry.file, dir), 'utf8')) as ReturnType<typeof scenarioDoc>;
}

describe('lessons that teach', () => {
  it('have at least four steps, each moving the playhead, the window and the marks', () => {
    for (const l of LESSONS) {
      expect(l.steps.length, l.id).toBeGreaterThanOrEqual(4);
      l.steps.forEach((s, i) => {
        const where = `${l.id} step ${i + 1}`;
        expect(s.view_ms, `${where}: a window`).toBeDefined();
        expect(s.marks?.length ?? 0, `${where}: something to look at`).toBeGreaterThan(0);
        const prev = l.steps[i - 1];
        if (!prev || prev.scenario !== s.scenario) return;
        expect(s.t_ms, `${where}: the playhead moves`).not.toBe(prev.t_ms);
        expect(s.view_ms, `${where}: the window moves`).not.toEqual(prev.view_ms);
        expect(s.marks, `${where}: the marks move`).not.toEqual(prev.marks);
      });
    }
  });

  it('have a predict-then-reveal step whose answer is the policy the claim says wins', () => {
    for (const l of LESSONS) {
      const steps = l.steps.filter((s) => s.predict);
      expect(steps.length, `${l.id}: a predict step`).toBeGreaterThan(0);
    }
    for (const l of LESSONS)
      for (const [i, s] of l.steps.entries()) {
        if (!s.predict) continue;
        const where = `${l.id} step ${i + 1}`;
        expect(s.claim, `${where}: names its claim`).toBeDefined();
        const c = scenarioDoc(s.scenario).claims?.[s.claim!];
        expect(c, `${where}: claim ${s.claim}`).toBeDefined();
        expect(c!.status, `${where}: a claim the model reproduces`).not.toBe('not_reproduced');
        const winner = c!.lower ?? c!.higher;
        expect(winner, `${where}: a claim comparing two policies`).toBeDefined();
        expect(s.predict.answer, `${where}: the answer is the claim's winner`).toBe(winner);
        expect(s.predict.options, where).toContain(c!.than);
        for (const o of s.predict.options)
          expect(s.policies ?? [], `${where}: options are columns`).toContain(o);
      }
  });

  it("name the claims they are about, and show the claim's policies as columns", () => {
    for (const l of LESSONS)
      for (const [i, s] of l.steps.entries()) {
        if (s.claim === undefined) continue;
        const where = `${l.id} step ${i + 1}`;
        const c = scenarioDoc(s.scenario).claims?.[s.claim];
        expect(c, `${where}: claim ${s.claim}`).toBeDefined();
        const named = [c!.lower ?? c!.higher, c!.than, c!.policy].filter((p): p is string => Boolean(p));
        for (const p of named) expect(s.policies ?? [], `${where}: column for ${p}`).toContain(p);
      }
  });

  it('say what the claims say: paper 001 co-scheduling finishes 3 steps where proportional share finishes 2', () => {
    const l = LESSONS.find((x) => x.id === 'p001-coscheduling')!;
    const doc = scenarioDoc('p001-sec2-ten-slots');
    // The claims: CPS near 30 steps in 100 slots (3 per 10), PS at most 24 (about 2 per 10).
    expect(doc.claims?.[0]?.text).toMatch(/3 steps per 10 slots/);
    expect(doc.claims?.[1]?.text).toMatch(/2 steps per 10 slots/);
    const told = l.steps.find((s) => s.claim === 0)!.text;
    expect(told).toMatch(/co-scheduling finishes 3 steps where proportional share finishes only 2/);
    for (const s of l.steps) expect(s.text).not.toMatch(/2 steps instead of 3/);
  });

  it('lead from each lesson to the next', () => {
    for (const [i, l] of LESSONS.entries()) expect(nextLesson(l.id)?.id, l.id).toBe(LESSONS[i + 1]?.id);
  });
});

describe('homework', () => {
  it('names a homework scenario of the library, its scripted student policy, and goal claims', () => {
    expect(HOMEWORK.length).toBeGreaterThanOrEqual(2);
    for (const h of HOMEWORK) {
      const entry = index.scenarios.find((e) => e.id === h.scenario);
      expect(entry, h.id).toBeDefined();
      expect(entry!.kind, h.id).toBe('homework');
      expect(findHomework(h.id)).toBe(h);
      expect(findLesson(h.id), `${h.id}: not also a lesson id`).toBeUndefined();
      const doc = JSON.parse(readFileSync(new URL(entry!.file, dir), 'utf8')) as {
        policies: { id: string; scheduler: string }[];
        claims: Claim[];
      };
      expect(doc.policies.find((p) => p.id === h.policy)?.scheduler, h.id).toBe('script');
      expect(
        doc.policies.map((p) => p.id),
        h.id,
      ).toContain(h.against);
      expect(h.claims.length, h.id).toBeGreaterThan(0);
      for (const k of h.claims) {
        expect(doc.claims[k]?.status, `${h.id} claim ${k}`).toBe('goal');
        expect(doc.claims[k]?.policy, `${h.id} claim ${k}`).toBe(h.policy);
      }
      // Every goal claim of the file is one the page shows.
      doc.claims.forEach((c, k) => {
        if (c.status === 'goal') expect(h.claims, `${h.id} claim ${k}`).toContain(k);
      });
    }
  });
});

let wasmReady = false;

/**
 * Claim `k`'s figures from one run of a scenario (its own seed) in the wasm build, for the lesson scenarios the
 * fidelity table leaves out (it lists the papers' figures); `npm run build:wasm` comes before the unit tests.
 */
function reportFigures(scenario: string, k: number): Record<string, Record<string, number>> | null {
  if (!wasmReady) {
    initSync({ module: readFileSync(new URL('../sim/pkg/schedsim_wasm_bg.wasm', import.meta.url)) });
    wasmReady = true;
  }
  const entry = index.scenarios.find((e) => e.id === scenario);
  if (!entry) return null;
  let report = reports.get(scenario);
  if (!report) {
    report = JSON.parse(run_report(readFileSync(new URL(entry.file, dir), 'utf8'), '[]', true)) as Report;
    reports.set(scenario, report);
  }
  // Each run carries the claims about its policy: claim k is found by its text, in whichever run has it.
  const text = scenarioDoc(scenario).claims?.[k]?.text;
  for (const r of report.runs) {
    const c = r.claims?.find((c) => c.text === text);
    if (c?.values) return c.values;
  }
  return null;
}
type Report = { runs: { claims?: { text?: string; values?: Record<string, Record<string, number>> }[] }[] };
const reports = new Map<string, Report>();

/**
 * The model's figures for claim `k` of a scenario, as docs/fidelity.md gives them (the mean over its seeds;
 * `npm test` regenerates that file and fails when it differs, so these are the runs' figures of this build):
 * `{policy: {metric path: value}}`, the shape of a judged claim's `values`.
 */
function modelFigures(scenario: string, k: number): Record<string, Record<string, number>> | null {
  const md = readFileSync(new URL('../docs/fidelity.md', dir), 'utf8');
  const at = md.indexOf(`\n### ${scenario}\n`);
  if (at < 0) return reportFigures(scenario, k); // a scenario of the library that reproduces no paper figure
  const rows = md
    .slice(at + 1)
    .split('\n### ')[0]!
    .split('\n')
    .filter((l) => l.startsWith('| ') && !l.startsWith('| Claim'));
  const ours = rows[k]?.split(' | ')[2] ?? '';
  const out: Record<string, Record<string, number>> = {};
  for (const m of ours.matchAll(/([A-Za-z0-9_~-]+) `([^`]+)` (-?[0-9.e+-]+)/g))
    (out[m[1]!] ??= {})[m[2]!] ??= Number(m[3]);
  return out;
}

describe('lesson questions and reveals against the model figures', () => {
  it(`name as answer the winner the figures show, by at least ${DIFFERENCE_MARGIN * 100}%`, () => {
    for (const l of LESSONS)
      for (const [i, s] of l.steps.entries()) {
        if (!s.predict) continue;
        const where = `${l.id} step ${i + 1}`;
        const c = scenarioDoc(s.scenario).claims![s.claim!]!;
        const figures = modelFigures(s.scenario, s.claim!);
        expect(figures, `${where}: figures for ${s.scenario}`).not.toBeNull();
        const v = predictVerdict(c, figures);
        expect(v, `${where}: figures for claim ${s.claim}`).not.toBeNull();
        expect(v!.winner, `${where}: ${JSON.stringify(v!.figures)}`).toBe(s.predict.answer);
      }
  });

  it('say "about the same" where a step\'s claim figures are within the margin, and never name a winner there', () => {
    for (const l of LESSONS)
      for (const [i, s] of l.steps.entries()) {
        if (s.claim === undefined) continue;
        const c = scenarioDoc(s.scenario).claims![s.claim]!;
        const v = predictVerdict(c, modelFigures(s.scenario, s.claim));
        if (!v) continue;
        const where = `${l.id} step ${i + 1}: ${JSON.stringify(v.figures)}`;
        const same = /about the same/.test(s.text);
        expect(same, `${where}: the text says "about the same" exactly when the figures are`).toBe(
          v.winner === null,
        );
        if (same) expect(s.text, where).not.toMatch(/\bwins\b/);
      }
  });

  it('render the figures they quote from the run, and quote none before the class has answered', () => {
    for (const l of LESSONS)
      for (const [i, s] of l.steps.entries()) {
        const where = `${l.id} step ${i + 1}`;
        const refs = textFigures(s.text);
        for (const r of refs) {
          const f = modelFigures(s.scenario, r.claim)?.[r.policy];
          expect(f, `${where}: claim ${r.claim} has a figure for ${r.policy}`).toBeDefined();
        }
        if (refs.length > 0)
          expect(
            concealedAt(l, i, () => false),
            `${where}: quotes figures on a step that hides them`,
          ).toBe(false);
        // Times and figures of the run are not typed: a decision's time is "the playhead".
        expect(s.text, where).not.toMatch(/\bAt \d+(\.\d+)? ms\b/);
        const rendered = renderLessonText(s.text, null);
        expect(rendered, where).not.toMatch(/\{\d+:/);
      }
  });

  it('hide the results on a predict step and on every step of the lesson before it', () => {
    for (const l of LESSONS) {
      const p = l.steps.findIndex((s) => s.predict);
      for (let i = 0; i <= p; i++)
        expect(
          concealedAt(l, i, () => false),
          `${l.id} step ${i + 1}`,
        ).toBe(true);
      expect(
        concealedAt(l, 0, (j) => j === p),
        `${l.id}: answered`,
      ).toBe(l.steps.some((s, j) => j > p && s.predict));
    }
    // Another scenario's steps before a predict step may show its answer (the same metric): hidden too.
    const p003 = LESSONS.find((x) => x.id === 'p003-schedulers')!;
    expect(concealedAt(p003, 0, () => false)).toBe(true);
  });

  it('point at no results before the first predict step (they are hidden there)', () => {
    const results = new Set(['key-figures', 'claims-panel', 'cdf-chart', 'comparison', 'metrics-table']);
    for (const l of LESSONS) {
      const p = l.steps.findIndex((s) => s.predict);
      for (const [i, s] of l.steps.slice(0, p).entries())
        for (const m of s.marks ?? [])
          expect(results.has(m.view), `${l.id} step ${i + 1} points at ${m.view}`).toBe(false);
    }
  });

  it('count a gap as a difference from the margin up', () => {
    expect(differ(100, 94)).toBe(true);
    expect(differ(91.9, 89.3)).toBe(false);
    expect(differ(0, 0)).toBe(false);
    expect(predictVerdict({ lower: 'a', than: 'b' }, { a: { x: 91 }, b: { x: 89 } })?.winner).toBeNull();
    expect(predictVerdict({ higher: 'a', than: 'b' }, { a: { x: 30 }, b: { x: 14 } })?.winner).toBe('a');
    expect(predictVerdict({ higher: 'a', than: 'b' }, { a: { x: 10 }, b: { x: 14 } })?.winner).toBe('b');
  });
});
