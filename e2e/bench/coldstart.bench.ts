// Cold start: the time from opening a fresh link (a new browser context: no HTTP cache, no compiled wasm) to the
// first complete frame, every column on screen drawn, read from the page's `schedlab:first-frame` mark
// (web/src/lib/marks.ts), for paper scenarios with two, three and four columns, and bench-large. Prints the
// median over REPEATS and where the time of the median run went, from the page's other marks (to the columns'
// opening windows when the first frame drew those), and at the end one line of medians per case; fails only if
// the page never draws. COLD_COMPARE=http://host:port measures a second server too (another build), its loads
// alternating with this one's, so both see the same machine load, and prints each case's ratio of the medians.
import { expect, test, type Browser, type Page } from '@playwright/test';

/** Fresh page loads per case: the median is printed. */
const REPEATS = Number(process.env.COLD_REPEATS ?? 5);
/** Another server to measure beside this one (a build to compare with), or none. */
const COMPARE = process.env.COLD_COMPARE ?? null;

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
    label: 'p000-fig7a-idd-starvation, 3 columns',
    url: '/?scenario=p000-fig7a-idd-starvation&policies=credit,credit-4x,pi',
    columns: 3,
  },
  {
    label: 'p004-fig6-streaming, 4 columns',
    url: '/?scenario=p004-fig6-streaming&policies=sedf,xenco,dom0only,anticonly',
    columns: 4,
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
 * The latest (or earliest) of the marks `run:POLICY:STAGE` of the runs the first frame drew (their opening window
 * or their whole run in before it): policies the columns do not show run after them.
 */
function runStage(marks: Marks, stage: string, pick: (...v: number[]) => number): number {
  const frame = marks['first-frame'] ?? Infinity;
  const drawn = (name: string, by: string) => (marks[name.replace(/:[^:]+$/, `:${by}`)] ?? Infinity) <= frame;
  const times = Object.entries(marks)
    .filter(([name]) => name.startsWith('run:') && name.endsWith(`:${stage}`))
    .filter(([name]) => drawn(name, 'received') || drawn(name, 'opening'))
    .map(([, t]) => t);
  return times.length > 0 ? pick(...times) : Number.NaN;
}

/** Where the time to the first frame went, stage by stage [ms]: to each column's opening window when the first
 * frame drew those (the runs still going), else to the whole runs. */
function breakdown(m: Marks): string {
  const frame = m['first-frame'] ?? Number.NaN;
  const firstCalled = runStage(m, 'called', Math.min);
  const lastReady = runStage(m, 'wasm-ready', Math.max);
  const started = Math.max(firstCalled, runStage(m, 'wasm-ready', Math.min));
  const lastOpening = runStage(m, 'opening', Math.max);
  const opened = lastOpening <= frame;
  const lastSimulated = runStage(m, opened ? 'opened' : 'simulated', Math.max);
  const lastPacked = opened ? lastSimulated : runStage(m, 'packed', Math.max);
  const lastReceived = opened ? lastOpening : runStage(m, 'received', Math.max);
  const parts: [string, number][] = [
    ['page and library loaded', m.index ?? Number.NaN],
    ['scenario fetched', (m.scenario ?? Number.NaN) - (m.index ?? Number.NaN)],
    ['cost estimated and validated', (m.validated ?? Number.NaN) - (m.scenario ?? Number.NaN)],
    ['until the runs started (wasm in the run workers)', started - (m.validated ?? Number.NaN)],
    [
      opened ? 'runs to their opening windows (the last one)' : 'runs (to the last one simulated)',
      lastSimulated - started,
    ],
    ...(opened ? [] : [['results packed', lastPacked - lastSimulated] as [string, number]]),
    [opened ? 'opening windows to the page' : 'transfer to the page', lastReceived - lastPacked],
    ['first render', frame - lastReceived],
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

/** Median first frames per case and server, printed together once every case has run. */
const medians: string[] = [];
/** With COLD_COMPARE: each case's median over the other server's, measured alternately in the same run. */
const ratios: string[] = [];

/** The median run of `runs` by first frame, and every run's first frame [ms] in order. */
function median(runs: Marks[]): { mid: Marks; all: string } {
  const sorted = [...runs].sort((a, b) => a['first-frame']! - b['first-frame']!);
  return {
    mid: sorted[Math.floor(sorted.length / 2)]!,
    all: sorted.map((r) => r['first-frame']!.toFixed(0)).join(', '),
  };
}

for (const c of CASES) {
  test(`cold start to the first complete frame: ${c.label}`, async ({ browser, baseURL }) => {
    const servers = [
      { name: 'this build', base: baseURL! },
      ...(COMPARE ? [{ name: COMPARE, base: COMPARE }] : []),
    ];
    const runs = servers.map(() => [] as Marks[]);
    // Alternating servers: a slow stretch of the machine falls on both.
    for (let i = 0; i < REPEATS; i++)
      for (const [k, s] of servers.entries())
        runs[k]!.push(await coldStart(browser, new URL(c.url, s.base).href, c.columns));
    const mids = runs.map((r) => median(r).mid['first-frame']!);
    if (mids.length > 1) ratios.push(`${c.label}: ${(mids[0]! / mids[1]!).toFixed(2)}`);
    for (const [k, s] of servers.entries()) {
      const { mid, all } = median(runs[k]!);
      const line = `${c.label} (${s.name}): first complete frame ${mid['first-frame']!.toFixed(0)} ms (median of ${runs[k]!.length}: ${all} ms)`;
      console.log(`cold start, ${line}`);
      console.log(`  where it went (ms): ${breakdown(mid)}`);
      medians.push(line);
      expect(mid['first-frame']).toBeGreaterThan(0);
    }
  });
}

test.afterAll(() => {
  if (medians.length > 0) console.log(`cold-start medians:\n  ${medians.join('\n  ')}`);
  if (ratios.length > 0)
    console.log(
      `this build's median over ${COMPARE}'s (same run, loads alternated):\n  ${ratios.join('\n  ')}`,
    );
});
