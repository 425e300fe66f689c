// The side-by-side visualiser's playhead views: run queues, the event log, the CDF comparison, the keyboard.
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, openScenario, playheadExactMs, playheadMs, test } from './helpers';

const screenshots = fileURLToPath(new URL('../screenshots/', import.meta.url));

test('run queues show what pCPU0 runs on credit-boost', async ({ page }) => {
  await openScenario(page, 'credit-boost');
  const column = page.locator('[data-testid="policy-column"][data-policy="credit"]');
  const rq = column.getByTestId('runqueue-pcpu-0');
  await expect(rq).toBeVisible();
  const running = rq.locator('[data-testid="rq-chip"][data-running="true"]');
  await expect(running).toHaveCount(1);
  await expect(running).toContainText(/\.v\d/);
  await expect(running).toContainText(/BOOST|UNDER|OVER|PARKED/);
  // Every column has one row per pCPU.
  for (const c of await page.getByTestId('policy-column').all()) {
    await expect(c.getByTestId('runqueue-pcpu-0')).toHaveCount(1);
  }
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: `${screenshots}runqueues.png` });
});

test('the event log lists decisions and clicking one moves the playhead', async ({ page }) => {
  await openScenario(page, 'credit-boost');
  const log = page.getByTestId('policy-column').first().getByTestId('event-log');
  const entries = log.getByTestId('event-log-entry');
  await expect.poll(() => entries.count()).toBeGreaterThan(5);
  await expect(log.locator('li[aria-current="true"]')).toHaveCount(1);

  const target = entries.nth((await entries.count()) - 1);
  const tNs = Number(await target.getAttribute('data-t-ns'));
  expect(tNs).toBeGreaterThan(0);
  await target.click();
  await expect.poll(() => playheadMs(page)).toBeCloseTo(tNs / 1e6, 0);
  // The clicked decision is now the highlighted one.
  await expect(log.locator('li[aria-current="true"] [data-testid="event-log-entry"]')).toHaveAttribute(
    'data-t-ns',
    String(tNs),
  );
});

test('the CDF chart draws one line per policy and server domain', async ({ page }) => {
  await openScenario(page, 'credit-boost');
  const columns = page.getByTestId('policy-column');
  const policies = await columns.evaluateAll((els) => els.map((e) => e.getAttribute('data-policy')));
  expect(policies.length).toBe(2);
  const chart = page.getByTestId('cdf-chart');
  // credit-boost's server domains: "io" and "mixed".
  await expect(chart.locator('path.cdf-line')).toHaveCount(policies.length * 2);
  for (const policy of policies) {
    for (const domain of ['io', 'mixed']) {
      const line = chart.locator(`path.cdf-line[data-policy="${policy}"][data-domain="${domain}"]`);
      await expect(line).toHaveCount(1);
      expect((await line.getAttribute('d'))?.length ?? 0).toBeGreaterThan(10);
    }
  }
  await expect(page.getByTestId('latency-table').locator('tbody tr')).not.toHaveCount(0);
  await chart.scrollIntoViewIfNeeded();
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: `${screenshots}comparison.png` });
});

test('ArrowRight and ArrowLeft step through decisions; +/- zoom', async ({ page }) => {
  await openScenario(page, 'credit-boost');
  // The slider snaps to its step, so the playhead lands near 1000 ms, not on it.
  await page.getByTestId('scrub').fill('1000');
  await expect.poll(() => playheadMs(page)).toBeGreaterThan(900);
  const start = await playheadMs(page);
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('ArrowRight');
  await expect.poll(() => playheadMs(page)).toBeGreaterThan(start);
  const next = await playheadExactMs(page);
  await page.keyboard.press('ArrowRight');
  await expect.poll(() => playheadExactMs(page)).toBeGreaterThan(next);
  await page.keyboard.press('ArrowLeft');
  await expect.poll(() => playheadExactMs(page)).toBe(next);
  // The event log follows: the decision stepped to is the highlighted one.
  await expect(
    page.getByTestId('event-log').first().locator('li[aria-current="true"] [data-testid="event-log-entry"]'),
  ).toHaveAttribute('data-t-ns', String(Math.round(next * 1e6)));
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: `${screenshots}stepped.png` });

  const segments = () =>
    page
      .getByTestId('timeline')
      .first()
      .getAttribute('data-segments')
      .then((s) => Number(s));
  const before = await segments();
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  await expect.poll(segments).toBeLessThan(before);
  await page.keyboard.press('-');
  await page.keyboard.press('-');
  await page.keyboard.press('-');
  await expect.poll(segments).toBeGreaterThan(before);
});

test('columns can be added, toggled with the number keys and removed', async ({ page }) => {
  await openScenario(page, 'credit-boost');
  const columns = page.getByTestId('policy-column');
  await expect(columns).toHaveCount(2);
  await page.getByTestId('add-column').click();
  await expect(columns).toHaveCount(3);
  await expect(columns.last().getByTestId('runqueue-pcpu-0').getByTestId('rq-chip')).not.toHaveCount(0);
  expect(page.url()).toMatch(/policies=[^&]*,[^&]*,/);
  // With more than two columns, 1-4 hide and show them.
  await page.locator('body').click({ position: { x: 5, y: 5 } });
  await page.keyboard.press('1');
  await expect(columns).toHaveCount(2);
  await page.keyboard.press('1');
  await expect(columns).toHaveCount(3);
  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: `${screenshots}three-columns.png` });
  await columns.last().getByTestId('remove-column').click();
  await expect(columns).toHaveCount(2);
});
