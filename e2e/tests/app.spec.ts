import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, openScenario, playheadMs, test, waitForIdle } from './helpers';

const screenshots = fileURLToPath(new URL('../screenshots/', import.meta.url));

test('plays the default scenario in two columns with data', async ({ page }) => {
  await openScenario(page);

  const columns = page.getByTestId('policy-column');
  await expect(columns).toHaveCount(2);
  const policies = await columns.evaluateAll((els) => els.map((e) => e.getAttribute('data-policy')));
  expect(new Set(policies).size, 'two different policies side by side').toBe(2);

  for (const column of await columns.all()) {
    const segments = Number(await column.getByTestId('timeline').getAttribute('data-segments'));
    expect(segments, 'timeline segments drawn').toBeGreaterThan(0);
    const chart = column.getByTestId('share-chart');
    const domains = Number(await chart.getAttribute('data-domains'));
    expect(domains).toBeGreaterThan(0);
    await expect(chart.locator('path.share-line')).toHaveCount(domains);
    for (const d of await chart.locator('path.share-line').all()) {
      expect((await d.getAttribute('d'))?.length ?? 0, 'a line with points').toBeGreaterThan(10);
    }
  }

  const claims = page.getByTestId('claims-panel').getByTestId('claim');
  expect(await claims.count(), 'the default scenario states claims').toBeGreaterThan(0);
  for (const claim of await claims.all()) {
    expect(['true', 'false']).toContain(await claim.getAttribute('data-holds'));
  }

  mkdirSync(screenshots, { recursive: true });
  await page.screenshot({ path: `${screenshots}default.png` });

  // Space plays: the playhead advances; Space again pauses and it stays put.
  const before = await playheadMs(page);
  await page.keyboard.press('Space');
  await expect.poll(() => playheadMs(page)).toBeGreaterThan(before);
  await page.keyboard.press('Space');
  const paused = await playheadMs(page);
  await page.waitForTimeout(300);
  expect(await playheadMs(page)).toBe(paused);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});

test('an unknown scenario id shows the banner and falls back to the default', async ({ page }) => {
  await openScenario(page, 'does-not-exist');
  const banner = page.getByTestId('error-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('does-not-exist');
  const library = page.getByTestId('scenario-library');
  await expect(library).toBeVisible();
  expect(await library.getByRole('link').count()).toBeGreaterThan(0);
  await expect(page.getByTestId('policy-column')).toHaveCount(2);
});

test('a broken pasted scenario shows the field in the banner and keeps the page', async ({ page }) => {
  await openScenario(page);
  const shown = await page.getByTestId('policy-column').first().getAttribute('data-policy');
  const broken = '{"schema":1,"pcpus":"x"}';
  await page.getByTestId('open-editor').click();
  await page.getByTestId('scenario-json').fill(broken);
  await page.getByTestId('run-pasted').click();
  const banner = page.getByTestId('error-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText('pcpus');
  await waitForIdle(page);
  // The user's text and the scenario on screen are both still there.
  await expect(page.getByTestId('scenario-json')).toHaveValue(broken);
  await expect(page.getByTestId('policy-column').first()).toHaveAttribute('data-policy', shown ?? '');
  await expect(page.getByTestId('scenario-library')).toBeVisible();
});

test('?scenario=credit-weights loads that scenario', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
  await expect(page.locator('[data-scenario="credit-weights"]')).toHaveAttribute('aria-current', 'page');
  const columns = page.getByTestId('policy-column');
  expect(await columns.count()).toBeGreaterThan(0);
  expect(Number(await columns.first().getByTestId('timeline').getAttribute('data-segments'))).toBeGreaterThan(
    0,
  );
  expect(page.url()).toContain('scenario=credit-weights');
});

test('columns switch policy and share one zoom', async ({ page }) => {
  await openScenario(page);
  const columns = page.getByTestId('policy-column');
  const select = columns.first().getByTestId('policy-select');
  const options = await select
    .locator('option')
    .evaluateAll((els) => els.map((e) => (e as HTMLOptionElement).value));
  expect(options.length).toBeGreaterThan(1);
  const last = options[options.length - 1]!;
  await select.selectOption(last);
  await expect(columns.first()).toHaveAttribute('data-policy', last);
  expect(page.url()).toContain(`policies=${last}`);

  const counts = () =>
    page
      .getByTestId('timeline')
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute('data-segments'))));
  const before = await counts();
  const canvas = page.getByTestId('timeline').first().locator('canvas');
  await canvas.scrollIntoViewIfNeeded();
  const box = await canvas.boundingBox();
  expect(box).not.toBeNull();
  await page.mouse.move(box!.x + box!.width / 2, box!.y + box!.height / 2);
  for (let i = 0; i < 4; i++) await page.mouse.wheel(0, -240);
  // Zooming in on one column narrows every column's window.
  await expect.poll(async () => (await counts()).every((n, i) => n < before[i]!)).toBe(true);
});
