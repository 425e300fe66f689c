// Cold start (issue 19, item 4): the time from opening a fresh link (a new browser context: no HTTP cache, no
// compiled wasm) to the first complete frame, every column on screen drawn, read from the page's
// `schedlab:first-frame` mark (web/src/lib/marks.ts), for a paper scenario with two columns, one with four, and
// bench-large. Prints the median over REPEATS and where the time of the median run went, from the page's other
// marks; fails only if the page never draws.
import { expect, test, type Browser, type Page } from '@playwright/test';

/** Fresh page loads per case: the median is printed. */
const REPEATS = Number(process.env.COLD_REPEATS ?? 3);

interface Case {
  readonly label: string;
  readonly url: string;
  readonly columns: number;
}

const CASES: readonly Case[] = [
  {
    label: 'p000-fig12-inspection-window, 2 columns',
    url: '/?scenario=p000-fig12-inspection-window&policies=nc,w3',
    columns: 2,
  },
  {
    label: 'p000-fig13-portmap, 4 columns',
    url: '/?scenario=p000-fig13-portmap&policies=credit,nc,pm1,pm4',
    columns: 4,
  },
  { label: 'bench-large, 1 column', url: '/?scenario=bench-large', columns: 1 },
];

/** A mark's name (without the `schedlab:` prefix) and its time since navigation start [ms]. */
type Marks = Record<string, number>;

async function coldStart(browser: Browser, url: string, columns: number): Promise<Marks> {
  const context = await browser.newContext();
  try {
    const page: Page = await context.newPage();
    await page.goto(url);
    await page.waitForFunction(
      () => performance.getEntriesByName('schedlab:first-frame').length > 0,
      undefined,
      { timeout: 600_000, polling: 50 },
    );
    await expect(page.getByTestId('policy-column')).toHaveCount(columns);
    return await page.evaluate(() =>
      Object.fromEntries(
        performance
          .getEntriesByType('mark')
          .filter((m) => m.name.startsWith('schedlab:'))
          .map((m) => [m.name.slice('schedlab:'.length), m.startTime]),
      ),
    );
  } finally {
    await context.close();
  }
}

/**
 * The latest (or earliest) of the marks `run:POLICY:STAGE` of the runs the first frame drew (received before
 * it): policies the columns do not show run after them.
 */
function runStage(marks: Marks, stage: string, pick: (...v: number[]) => number): number {
  const frame = marks['first-frame'] ?? Infinity;
  const times = Object.entries(marks)
    .filter(([name]) => name.startsWith('run:') && name.endsWith(`:${stage}`))
    .filter(([name]) => (marks[name.replace(/:[^:]+$/, ':received')] ?? Infinity) <= frame)
    .map(([, t]) => t);
  return times.length > 0 ? pick(...times) : Number.NaN;
}

/** Where the time to the first frame went, stage by stage [ms]. */
function breakdown(m: Marks): string {
  const firstCalled = runStage(m, 'called', Math.min);
  const lastReady = runStage(m, 'wasm-ready', Math.max);
  const lastSimulated = runStage(m, 'simulated', Math.max);
  const lastPacked = runStage(m, 'packed', Math.max);
  const lastReceived = runStage(m, 'received', Math.max);
  const started = Math.max(firstCalled, runStage(m, 'wasm-ready', Math.min));
  const parts: [string, number][] = [
    ['page and library loaded', m.index ?? Number.NaN],
    ['scenario fetched', (m.scenario ?? Number.NaN) - (m.index ?? Number.NaN)],
    ['cost estimated and validated', (m.validated ?? Number.NaN) - (m.scenario ?? Number.NaN)],
    ['until the runs started (wasm in the run workers)', started - (m.validated ?? Number.NaN)],
    ['runs (to the last one simulated)', lastSimulated - started],
    ['results packed', lastPacked - lastSimulated],
    ['transfer to the page', lastReceived - lastPacked],
    ['first render', (m['first-frame'] ?? Number.NaN) - lastReceived],
  ];
  const line = parts.map(([k, v]) => `${k} ${v.toFixed(0)}`).join(', ');
  const ready = Number.isFinite(lastReady)
    ? `; last run worker's wasm ready at ${lastReady.toFixed(0)} ms`
    : '';
  // The page's module downloaded and compiled (compileStreaming), from navigation start.
  const compiled =
    m['wasm-compiled'] !== undefined ? `; wasm compiled at ${m['wasm-compiled'].toFixed(0)} ms` : '';
  return `${line}${ready}${compiled}`;
}

for (const c of CASES) {
  test(`cold start to the first complete frame: ${c.label}`, async ({ browser }) => {
    const runs: Marks[] = [];
    for (let i = 0; i < REPEATS; i++) runs.push(await coldStart(browser, c.url, c.columns));
    runs.sort((a, b) => a['first-frame']! - b['first-frame']!);
    const median = runs[Math.floor(runs.length / 2)]!;
    const all = runs.map((r) => r['first-frame']!.toFixed(0)).join(', ');
    console.log(
      `cold start, ${c.label}: first complete frame ${median['first-frame']!.toFixed(0)} ms ` +
        `(median of ${runs.length}: ${all} ms)`,
    );
    console.log(`  where it went (ms): ${breakdown(median)}`);
    expect(median['first-frame']).toBeGreaterThan(0);
  });
}
