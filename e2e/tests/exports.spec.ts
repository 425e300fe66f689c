// Exports (issue 9): PNG and SVG of the views, CSV and JSON of the metrics and of the trace window, each a file
// that opens.
import { downloadOf, expect, openScenario, test } from './helpers';
import type { Page } from '@playwright/test';

/** Loads an image file in the page; resolves to its natural size (0 x 0 if it does not decode). */
async function decode(page: Page, bytes: Buffer, type: string): Promise<[number, number]> {
  const url = `data:${type};base64,${bytes.toString('base64')}`;
  return page.evaluate(
    (src) =>
      new Promise<[number, number]>((resolve) => {
        const img = new Image();
        img.onload = () => resolve([img.naturalWidth, img.naturalHeight]);
        img.onerror = () => resolve([0, 0]);
        img.src = src;
      }),
    url,
  );
}

test('every view exports as a PNG and an SVG that open', async ({ page }) => {
  // A scenario with request-response servers, so the comparison panel draws its CDF chart.
  await openScenario(page, 'credit-boost');
  await page.getByTestId('open-export').click();
  const select = page.getByTestId('export-view');
  await select.focus();
  const options = await select
    .locator('option')
    .evaluateAll((els) =>
      els.map((e) => ({ value: (e as HTMLOptionElement).value, label: e.textContent ?? '' })),
    );
  const wanted = ['runqueues', 'timeline', 'share chart', 'event log', 'cdf chart', 'claims panel'];
  for (const w of wanted) expect(options.map((o) => o.label).join('|')).toContain(w);
  for (const o of options.filter(
    (o) => wanted.some((w) => o.label.endsWith(w)) && !o.label.includes('Column 2'),
  )) {
    await select.selectOption(o.value);
    const png = await downloadOf(page, 'export-png');
    expect(png.name).toMatch(/\.png$/);
    expect(png.bytes.subarray(0, 8).toString('hex'), `${o.label}: PNG signature`).toBe('89504e470d0a1a0a');
    const [w, h] = await decode(page, png.bytes, 'image/png');
    expect(w * h, `${o.label}: PNG decodes`).toBeGreaterThan(100);

    const svg = await downloadOf(page, 'export-svg');
    expect(svg.name).toMatch(/\.svg$/);
    const text = svg.bytes.toString('utf8');
    const parsed = await page.evaluate(
      (t) => new DOMParser().parseFromString(t, 'image/svg+xml').querySelector('parsererror') === null,
      text,
    );
    expect(parsed, `${o.label}: SVG is well-formed XML`).toBe(true);
    const [sw, sh] = await decode(page, svg.bytes, 'image/svg+xml');
    expect(sw * sh, `${o.label}: SVG decodes`).toBeGreaterThan(100);
  }
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});

test('metrics and the trace window export as CSV and JSON', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await page.getByTestId('open-export').click();

  const mj = JSON.parse((await downloadOf(page, 'export-metrics-json')).bytes.toString('utf8')) as {
    scenario: string;
    runs: { policy: string; domains: Record<string, { cpu_share: number }> }[];
    claims: unknown[];
  };
  expect(mj.scenario).toBe('credit-weights');
  expect(mj.runs.map((r) => r.policy)).toEqual(['credit', 'credit-1ms']);
  expect(mj.runs[0]!.domains.heavy!.cpu_share).toBeGreaterThan(0.4);
  expect(mj.claims.length).toBeGreaterThan(0);

  const mc = (await downloadOf(page, 'export-metrics-csv')).bytes.toString('utf8').trim().split('\r\n');
  expect(mc[0]).toBe('policy,label,metric,value');
  const heavy = mc.find((l) => l.startsWith('credit,Xen Credit,domains.heavy.cpu_share,'));
  expect(Number(heavy?.split(',').at(-1))).toBeCloseTo(mj.runs[0]!.domains.heavy!.cpu_share, 9);

  const window = ((await page.locator('main').getAttribute('data-view')) ?? '').split(',').map(Number);
  const tj = JSON.parse((await downloadOf(page, 'export-trace-json')).bytes.toString('utf8')) as {
    window_ms: number[];
    runs: {
      policy: string;
      segments: { start_ms: number; end_ms: number }[];
      decisions: { t_ns: number }[];
    }[];
  };
  expect(tj.window_ms).toEqual(window);
  expect(tj.runs).toHaveLength(2);
  for (const r of tj.runs) {
    expect(r.segments.length).toBeGreaterThan(0);
    expect(r.decisions.length).toBeGreaterThan(0);
    for (const s of r.segments) {
      expect(s.start_ms).toBeGreaterThanOrEqual(window[0]!);
      expect(s.end_ms).toBeLessThanOrEqual(window[1]!);
    }
  }
  const tc = (await downloadOf(page, 'export-trace-csv')).bytes.toString('utf8').trim().split('\r\n');
  expect(tc[0]).toBe('policy,kind,start_ms,end_ms,pcpu,domain,vcpu,task,reason');
  const rows = tj.runs.reduce((n, r) => n + r.segments.length + r.decisions.length, 0);
  expect(tc.length - 1).toBe(rows);
});
