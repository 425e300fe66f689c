// Exports: PNG and SVG of the views, CSV and JSON of the metrics and of the trace window, each a file
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
  // A scenario with request-response servers, so the comparison panel draws its CDF chart (the default one).
  await openScenario(page, 'credit-boost');
  // Its comparison table shows the throughput column whole at 1280 px.
  const cut = await page
    .getByTestId('comparison-panel')
    .evaluate((el) =>
      [...el.querySelectorAll<HTMLElement>('.metrics-scroll')]
        .filter((e) => e.scrollWidth > e.clientWidth + 1)
        .map((e) => `${e.className}: ${e.scrollWidth} > ${e.clientWidth}`),
    );
  expect(cut).toEqual([]);
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
  // The first column's views and the page-wide ones.
  for (const o of options.filter(
    (o) => wanted.some((w) => o.label.endsWith(w)) && !o.value.startsWith('1:'),
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

/** Exports the view whose label ends with `view` in `format`. */
async function exportView(page: Page, view: string, format: 'svg' | 'png'): Promise<Buffer> {
  const select = page.getByTestId('export-view');
  await select.focus();
  const value = await select
    .locator('option')
    .evaluateAll(
      (els, v) => (els.find((e) => e.textContent?.endsWith(v)) as HTMLOptionElement | undefined)?.value,
      view,
    );
  expect(value, `an export option for ${view}`).toBeTruthy();
  await select.selectOption(value!);
  return (await downloadOf(page, `export-${format}`)).bytes;
}

test('charts and the timeline export as vector SVG: shapes and text, no foreignObject, no black fills', async ({
  page,
}) => {
  await openScenario(page, 'credit-boost');
  await page.getByTestId('open-export').click();
  for (const [view, shape, least] of [
    ['Xen Credit (BOOST): timeline', 'rect', 20],
    ['cdf chart', 'path', 2],
    ['Xen Credit (BOOST): share chart', 'path', 2],
    ['Xen Credit (BOOST): runqueues', 'path', 4],
  ] as const) {
    const text = (await exportView(page, view, 'svg')).toString('utf8');
    const doc = await page.evaluate(
      ([t, s]) => {
        const d = new DOMParser().parseFromString(t, 'image/svg+xml');
        const fills = [...d.querySelectorAll('path, polygon')].map(
          (e) => (e.getAttribute('style') ?? '').match(/(?:^|;)fill:([^;]*)/)?.[1] ?? e.getAttribute('fill'),
        );
        return {
          ok: d.querySelector('parsererror') === null && d.documentElement.localName === 'svg',
          shapes: d.querySelectorAll(s).length,
          texts: d.querySelectorAll('text').length,
          foreign: d.querySelectorAll('foreignObject').length,
          images: d.querySelectorAll('image').length,
          black: fills.filter((f) => f === 'rgb(0, 0, 0)' || f === '#000' || f === 'black').length,
        };
      },
      [text, shape] as const,
    );
    expect(doc.ok, `${view}: SVG parses`).toBe(true);
    expect(doc.shapes, `${view}: ${shape} elements`).toBeGreaterThanOrEqual(least);
    expect(doc.texts, `${view}: text as text`).toBeGreaterThan(0);
    expect(doc.foreign, `${view}: no foreignObject`).toBe(0);
    expect(doc.images, `${view}: no embedded bitmap`).toBe(0);
    expect(doc.black, `${view}: no black-filled shapes`).toBe(0);
  }
});

test('a PNG export matches the view on screen', async ({ page }) => {
  await openScenario(page, 'credit-boost');
  await page.getByTestId('open-export').click();
  // At the size on screen: the export is the view cropped to its content, with a caption line under it.
  await page.getByTestId('export-size').selectOption('column');
  for (const [view, testId] of [
    ['cdf chart', 'cdf-chart'],
    ['Xen Credit (BOOST): timeline', 'timeline'],
  ] as const) {
    const png = await exportView(page, view, 'png');
    const shot = await page.getByTestId(testId).first().screenshot({ animations: 'disabled' });
    // Both drawn at the view's CSS size; the mean difference per channel, 0 (same) to 1.
    const diff = await page.evaluate(
      async ([a, b]) => {
        const load = (src: string) =>
          new Promise<HTMLImageElement>((resolve, reject) => {
            const img = new Image();
            img.onload = () => resolve(img);
            img.onerror = reject;
            img.src = src;
          });
        const [ia, ib] = await Promise.all([load(a), load(b)]);
        // The rows both show: the export's drawing above its caption line (23 px), within the view's box.
        const w = Math.min(ib.naturalWidth, ia.naturalWidth);
        const h = Math.min(ib.naturalHeight, ia.naturalHeight - 23);
        const pixels = (img: HTMLImageElement) => {
          const c = document.createElement('canvas');
          c.width = w;
          c.height = h;
          const ctx = c.getContext('2d')!;
          ctx.drawImage(img, 0, 0);
          return ctx.getImageData(0, 0, w, h).data;
        };
        const pa = pixels(ia);
        const pb = pixels(ib);
        let sum = 0;
        for (let i = 0; i < pa.length; i++) if (i % 4 !== 3) sum += Math.abs(pa[i]! - pb[i]!);
        return sum / ((pa.length * 3) / 4) / 255;
      },
      [
        `data:image/png;base64,${png.toString('base64')}`,
        `data:image/png;base64,${shot.toString('base64')}`,
      ] as const,
    );
    expect(diff, `${view}: PNG against the screen`).toBeLessThan(0.04);
  }
});

test('the trace window exports as Trace Event Format JSON for Perfetto', async ({ page }) => {
  await openScenario(page, 'credit-boost');
  await page.getByTestId('open-export').click();
  const file = await downloadOf(page, 'export-trace-perfetto');
  expect(file.name).toMatch(/\.perfetto\.json$/);
  const trace = JSON.parse(file.bytes.toString('utf8')) as {
    traceEvents: {
      name: string;
      ph: string;
      pid: number;
      tid: number;
      ts?: number;
      dur?: number;
      id?: number;
    }[];
  };
  expect(Array.isArray(trace.traceEvents)).toBe(true);
  for (const e of trace.traceEvents) {
    expect(typeof e.name).toBe('string');
    expect(['X', 'M', 's', 'f']).toContain(e.ph);
    expect(Number.isInteger(e.pid) && Number.isInteger(e.tid)).toBe(true);
    if (e.ph !== 'M') expect(typeof e.ts).toBe('number');
    if (e.ph === 'X') expect(e.dur).toBeGreaterThanOrEqual(0);
  }
  const threads = trace.traceEvents.filter((e) => e.ph === 'M' && e.name === 'thread_name');
  expect(threads.length).toBeGreaterThanOrEqual(2); // a pCPU track per column, and its notifications
  expect(trace.traceEvents.filter((e) => e.ph === 'X').length).toBeGreaterThan(10);
  const starts = trace.traceEvents.filter((e) => e.ph === 's');
  const ends = trace.traceEvents.filter((e) => e.ph === 'f');
  expect(starts.length).toBeGreaterThan(0);
  expect(ends.map((e) => e.id).sort()).toEqual(starts.map((e) => e.id).sort());
});

test('exported figures keep their text, name their policy and scenario, and come at a chosen size', async ({
  page,
}) => {
  await openScenario(page, 'p000-fig10-partial-boost', { policies: 'credit,tavs' });
  await page.getByTestId('open-export').click();
  const select = page.getByTestId('export-view');
  await select.focus();
  const labels = await select.locator('option').allTextContents();
  // Columns are named as their headers name them, never by a column id or a 0-based index.
  expect(labels).toContain('Credit + TAVS (KeepOnRunQ): share chart');
  for (const l of labels) expect(l).not.toMatch(/Column \d|~w\d|in policy \d/);
  const svgText = async (value: string, size = 'column') => {
    await select.selectOption(value);
    await page.getByTestId('export-size').selectOption(size);
    return (await downloadOf(page, 'export-svg')).bytes.toString('utf8');
  };
  const texts = (svg: string) =>
    page.evaluate(
      (t) =>
        [...new DOMParser().parseFromString(t, 'image/svg+xml').querySelectorAll('text')].map(
          (e) => e.textContent ?? '',
        ),
      svg,
    );

  // Spaces between a label and its value survive ("(fair 14.3%)", not "(fair14.3%)"); the caption names both.
  const share = await svgText('1:share-chart');
  // As a reader of the file gets it: the text nodes in order.
  const whole = await page.evaluate(
    (t) => new DOMParser().parseFromString(t, 'image/svg+xml').documentElement.textContent ?? '',
    share,
  );
  expect(whole).toMatch(/\(fair \d/);
  expect(whole).not.toMatch(/\(fair\d/);
  expect((await texts(share)).join('|')).toContain('Credit + TAVS (KeepOnRunQ) · Task-aware scheduling');

  // The CDF is cropped to what it draws: no blank band under its legend, no tick label cut at the right.
  const cdf = await svgText('page:cdf-chart');
  const [w, h] = [/width="(\d+)"/, /height="(\d+)"/].map((r) => Number(r.exec(cdf)?.[1]));
  const drawn = await page.getByTestId('cdf-chart').evaluate((el) => {
    const o = el.getBoundingClientRect();
    let right = 0;
    let bottom = 0;
    for (const e of el.querySelectorAll('svg text, figcaption *')) {
      const r = e.getBoundingClientRect();
      if (r.width === 0) continue;
      right = Math.max(right, r.right - o.left);
      bottom = Math.max(bottom, r.bottom - o.top);
    }
    return { right, bottom };
  });
  expect(w!).toBeGreaterThanOrEqual(drawn.right);
  expect(h!).toBeLessThan(drawn.bottom + 40);

  // Sizes: an A4 column (85 mm) at 300 dpi is 1004 px wide.
  const a4 = await svgText('page:cdf-chart', 'a4');
  expect(Number(/width="(\d+)"/.exec(a4)?.[1])).toBe(1004);

  // Fit for a paper column: laid out at 85 mm, every text 8 pt or more there and inside the frame, none of the
  // page's controls (the optional tracks' checkboxes), a swatch for each of the timeline's state entries.
  for (const view of ['0:timeline', 'page:cdf-chart']) {
    const paper = await page.evaluate(
      (t) => {
        const box = document.createElement('div');
        box.innerHTML = t.replace(/^<\?xml[^>]*>/, '');
        document.body.append(box);
        const svg = box.querySelector('svg')!;
        const width = Number(svg.getAttribute('viewBox')!.split(' ')[2]);
        const texts = [...svg.querySelectorAll('text')].filter((e) => (e.textContent ?? '').trim());
        const pt = (e: SVGTextElement) =>
          (parseFloat(getComputedStyle(e).fontSize) * ((85 / 25.4) * 72)) / width;
        const out = {
          smallest: Math.min(...texts.map(pt)),
          outside: texts
            .filter((e) => {
              const [r, frame] = [e.getBoundingClientRect(), svg.getBoundingClientRect()];
              return r.left < frame.left - 0.5 || r.right > frame.right + 0.5;
            })
            .map((e) => e.textContent),
          words: texts.map((e) => e.textContent).join('|'),
          barSwatches: [...svg.querySelectorAll('rect')].filter(
            (r) => r.getAttribute('fill') === 'rgb(136, 136, 136)',
          ).length,
        };
        box.remove();
        return out;
      },
      await svgText(view, 'a4'),
    );
    expect(paper.smallest, `${view}: smallest text [pt] at 85 mm`).toBeGreaterThanOrEqual(7.95);
    expect(paper.outside, `${view}: text outside the frame`).toEqual([]);
    expect(paper.words).not.toContain('wake-to-run latency map');
    if (view === '0:timeline') expect(paper.barSwatches, 'the runnable swatch').toBeGreaterThan(0);
  }

  // A view with nothing to show says so instead of exporting a blank image.
  await select.selectOption('0:belief-chart');
  await page.getByTestId('export-svg').click();
  await expect(page.getByTestId('export-notice')).toContainText('does not infer');

  // A figure: every column's timeline side by side in one SVG, each captioned with its policy.
  await page.getByTestId('export-figure-view').selectOption('timeline');
  const figure = (await downloadOf(page, 'export-figure')).bytes.toString('utf8');
  const captions = await page.evaluate(
    (t) =>
      [...new DOMParser().parseFromString(t, 'image/svg+xml').querySelectorAll('text[data-caption]')].map(
        (e) => e.textContent,
      ),
    figure,
  );
  expect(captions).toEqual(['Credit (KeepOnRunQ)', 'Credit + TAVS (KeepOnRunQ)']);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});
