// Where playback frame time goes (run by hand, not by `npm run bench`): while four columns of bench-large play,
// a CPU profile of the page (self and inclusive time per function) and a trace of the main thread by event
// (scripts, style, layout, paint, layerize, commit). Against a running server: build the site (unminified reads
// better: `npm run build:wasm:names && cd web && npx vite build --minify false`: wasm function names too),
// `PORT=5181 node scripts/serve.mjs &`, then `cd e2e && PORT=5181 node bench/profile.mjs`. SHOT_ONLY=1 only saves
// a screenshot of the page before playing; PLAY_ONLY=1 only prints the playhead while playing. At 1280 x 720 the
// timelines sit below the run queues, off screen (as in frames.bench.ts); VIEW=timeline scrolls them into sight
// first, to profile their drawing. The raw profile goes to /tmp/schedlab-playback.cpuprofile (opens in DevTools).
/* global console, process, window, requestAnimationFrame, URL */
import { readFileSync, writeFileSync } from 'node:fs';
import { chromium } from '@playwright/test';

const PORT = process.env.PORT ?? '5173';
const doc = JSON.parse(readFileSync(new URL('../../scenarios/bench-large.json', import.meta.url), 'utf8'));
Object.assign(doc, { id: 'bench-large-4', duration_ms: 10000, warmup_ms: 500, claims: [] });
doc.policies = [
  { id: 'credit', scheduler: 'credit' },
  { id: 'noboost', label: 'Credit, no BOOST', scheduler: 'credit', params: { boost: false } },
  { id: 'tslice10', label: 'Credit, 10 ms slice', scheduler: 'credit', params: { tslice_ms: 10 } },
  { id: 'tavs', label: 'Credit + TAVS', scheduler: 'credit', params: { tavs: { pb_ratio: 0.125 } } },
];
const browser = await chromium.launch({
  executablePath: '/usr/bin/chromium',
  args: ['--headless', '--no-sandbox', '--disable-gpu'],
});
const page = await browser.newPage({ viewport: { width: 1280, height: 720 } });
const idle = () =>
  page.waitForFunction(() => window.__schedlabIdle === true, undefined, { timeout: 600000, polling: 100 });
await page.goto(`http://127.0.0.1:${PORT}/?testing=1`);
await idle();
await page.getByTestId('open-editor').click();
await page.getByTestId('scenario-json').fill(JSON.stringify(doc));
await page.getByTestId('run-pasted').click();
await page.getByTestId('policy-column').nth(1).waitFor();
await idle();
await page.getByTestId('add-column').click();
await page.getByTestId('add-column').click();
await idle();
await page.getByTestId('speed').selectOption('1');
if (process.env.VIEW === 'timeline') await page.getByTestId('timeline').first().scrollIntoViewIfNeeded();
await page.screenshot({ path: '/tmp/schedlab-before-play.png' });
if (process.env.SHOT_ONLY) {
  await browser.close();
  process.exit(0);
}
if (process.env.PLAY_ONLY) {
  page.on('pageerror', (e) => console.log('pageerror', e.message));
  await page.getByTestId('play').click();
  for (let i = 0; i < 6; i++) {
    await page.waitForTimeout(500);
    console.log(
      await page.getByTestId('playhead-time').getAttribute('data-ms'),
      await page.getByTestId('play').textContent(),
    );
  }
  await browser.close();
  process.exit(0);
}
const cdp = await page.context().newCDPSession(page);
await cdp.send('Profiler.enable');
await cdp.send('Profiler.setSamplingInterval', { interval: 200 });
await cdp.send('Profiler.start');
await page.getByTestId('play').click();
const frames = await page.evaluate(async () => {
  const s = [];
  await new Promise((d) => {
    const f = (t) => {
      s.push(t);
      if (t - s[0] < 4000) requestAnimationFrame(f);
      else d();
    };
    requestAnimationFrame(f);
  });
  return s
    .slice(1)
    .map((t, i) => t - s[i])
    .sort((a, b) => a - b);
});
await page.getByTestId('play').click();
const { profile } = await cdp.send('Profiler.stop');
writeFileSync('/tmp/schedlab-playback.cpuprofile', JSON.stringify(profile));
console.log(
  'frames',
  frames.length,
  'p50',
  frames[frames.length >> 1],
  'p95',
  frames[Math.floor(frames.length * 0.95)],
);
// Self time per function, and inclusive time per function (top 40 each).
const byId = new Map(profile.nodes.map((n) => [n.id, n]));
const parent = new Map();
for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
const dt = profile.timeDeltas;
const self = new Map();
const incl = new Map();
profile.samples.forEach((id, i) => {
  const d = dt[i] / 1000;
  const n = byId.get(id);
  const key = (n) =>
    `${n.callFrame.functionName || '(anon)'} ${n.callFrame.url.split('/').pop()}:${n.callFrame.lineNumber}:${n.callFrame.columnNumber}`;
  self.set(key(n), (self.get(key(n)) ?? 0) + d);
  const seen = new Set();
  for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
    const k = key(byId.get(cur));
    if (seen.has(k)) continue;
    seen.add(k);
    incl.set(k, (incl.get(k) ?? 0) + d);
  }
});
const top = (m) =>
  [...m]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 25)
    .map(([k, v]) => `${v.toFixed(0).padStart(6)} ms  ${k}`)
    .join('\n');
console.log('--- self\n' + top(self));
console.log('--- inclusive\n' + top(incl));
// Trace: where the main thread's time goes by event (style, layout, paint, scripts; nested events count twice).
const events = [];
cdp.on('Tracing.dataCollected', (e) => events.push(...e.value));
const done = new Promise((r) => cdp.once('Tracing.tracingComplete', r));
await cdp.send('Tracing.start', {
  categories: 'devtools.timeline,disabled-by-default-devtools.timeline',
  transferMode: 'ReportEvents',
});
await page.getByTestId('play').click();
await page.waitForTimeout(3000);
await page.getByTestId('play').click();
await cdp.send('Tracing.end');
await done;
const main = events.find((e) => e.name === 'FireAnimationFrame')?.tid;
/** Wall time per event name [ms], of the main thread's events or of the other threads'. */
const byName = (onMain) => {
  const sum = new Map();
  for (const e of events)
    if ((e.tid === main) === onMain && e.ph === 'X' && e.dur)
      sum.set(e.name, (sum.get(e.name) ?? 0) + e.dur / 1000);
  return sum;
};
console.log('--- trace (main thread, 3 s, incl. nesting)\n' + top(byName(true)));
console.log('--- trace (other threads)\n' + top(byName(false)));
await browser.close();
