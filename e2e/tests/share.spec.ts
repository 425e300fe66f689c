// Share links: a round trip reproduces the run and the view; every kind of broken link shows a clear
// message and the library, never a blank page or injected markup.
import {
  downloadOf,
  encodeForLink,
  expect,
  openScenario,
  playheadExactMs,
  scenarioFile,
  test,
  waitForIdle,
} from './helpers';
import type { Page } from '@playwright/test';

/** The metrics of the columns on screen without wall-clock time, via the JSON export. */
async function metrics(page: Page): Promise<unknown> {
  await page.getByTestId('open-export').click();
  const { bytes } = await downloadOf(page, 'export-metrics-json');
  await page.getByTestId('open-export').click();
  const doc = JSON.parse(bytes.toString('utf8')) as { runs: Record<string, unknown>[] };
  for (const r of doc.runs) delete r.wall_ms;
  return doc;
}

async function columns(page: Page): Promise<(string | null)[]> {
  return page
    .getByTestId('policy-column')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-policy')));
}

test('a share link reproduces the scenario, its edits, the columns, the playhead and the window', async ({
  page,
  context,
}) => {
  await openScenario(page, 'credit-weights');
  // An edit of a library scenario: the link carries the id plus a patch.
  await page.getByTestId('open-editor').click();
  await page.locator('[data-path="domains[1].weight"]').fill('768');
  await expect(page.getByTestId('editor-status')).toHaveText('Valid; on screen.', { timeout: 60_000 });
  await waitForIdle(page);
  await page.getByTestId('open-editor').click();
  // Swap the columns, zoom in, step to a decision.
  await page.getByTestId('policy-select').first().selectOption('credit-1ms');
  await page.getByTestId('policy-select').nth(1).selectOption('credit');
  await page.locator('main').focus();
  await page.keyboard.press('+');
  await page.keyboard.press('+');
  for (let i = 0; i < 5; i++) await page.keyboard.press('ArrowRight');
  await expect.poll(() => playheadExactMs(page)).toBeGreaterThan(0);
  await waitForIdle(page);
  const time = await playheadExactMs(page);
  const view = await page.locator('main').getAttribute('data-view');
  const before = await metrics(page);
  // The speed travels too.
  await page.getByTestId('speed').selectOption('2');

  await page.getByTestId('open-share').click();
  const link = await page.getByTestId('share-url').inputValue();
  expect(link).toContain('speed=2');
  expect(link).toContain('scenario=credit-weights');
  expect(link).toContain('patch=');
  expect(link).toContain('#patch=');
  expect(link).not.toMatch(/[#&]s=/);

  const other = await context.newPage();
  await other.goto(link);
  await waitForIdle(other);
  await expect(other.getByTestId('error-banner')).toHaveCount(0);
  expect(await columns(other)).toEqual(['credit-1ms', 'credit']);
  expect(await playheadExactMs(other)).toBeCloseTo(time, 3);
  const [a, b] = (view ?? '').split(',').map(Number);
  const [c, d] = ((await other.locator('main').getAttribute('data-view')) ?? '').split(',').map(Number);
  expect(c).toBeCloseTo(a!, 3);
  expect(d).toBeCloseTo(b!, 3);
  // Whoever opens a link wants the page, not the panel it was copied from.
  await expect(other.getByTestId('share-panel')).toHaveCount(0);
  // The link's scenario differs from the library's: marked, its summary and claims stale.
  await expect(other.getByTestId('modified-badge')).toBeVisible();
  await expect(other.getByTestId('claims-panel')).toHaveAttribute('data-stale', 'true');
  const after = await metrics(other);
  expect(after).toEqual(before);
  expect(JSON.stringify(after)).toContain('"heavy"');
  await expect(other.getByTestId('speed')).toHaveValue('2');

  // Another scenario picked: the edit that ran is kept (a notice brings it back), and the switch is a history
  // entry, so Back shows the edited scenario again and Forward the other one.
  await page.getByTestId('share-panel').getByRole('button', { name: /close/i }).click();
  await page.locator('[data-scenario="credit-cap"]').click();
  await waitForIdle(page);
  await expect(page.getByTestId('kept-edit')).toBeVisible();
  await expect(page.getByTestId('kept-edit-restore')).toHaveAttribute(
    'href',
    /scenario=credit-weights.*#patch=/,
  );
  await expect.poll(() => page.url()).toContain('scenario=credit-cap');
  await page.goBack();
  await waitForIdle(page);
  await expect(page.locator('[data-scenario="credit-weights"]')).toHaveAttribute('aria-current', 'page');
  await expect(page.getByTestId('modified-badge')).toBeVisible();
  await page.goForward();
  await waitForIdle(page);
  await expect(page.locator('[data-scenario="credit-cap"]')).toHaveAttribute('aria-current', 'page');
  await expect.poll(() => page.url()).toContain('scenario=credit-cap');
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});

test("a user's own scenario travels whole in the link and comes back the same", async ({ page, context }) => {
  const own = JSON.parse(await scenarioFile('credit-weights')) as Record<string, unknown>;
  own.id = 'my-own';
  own.title = 'My own scenario';
  own.duration_ms = 5000;
  await page.goto(`/?testing=1&v=1#s=${await encodeForLink(JSON.stringify(own))}`);
  await waitForIdle(page);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
  await expect(page.locator('.scenario-head h2')).toHaveText('My own scenario');
  await page.getByTestId('open-share').click();
  const link = await page.getByTestId('share-url').inputValue();
  expect(link).toContain('#s=');
  const other = await context.newPage();
  await other.goto(link);
  await waitForIdle(other);
  await expect(other.locator('.scenario-head h2')).toHaveText('My own scenario');
  expect(await metrics(other)).toEqual(await metrics(page));
});

/** Opens a link and checks the page explains the problem and still offers the library and a scenario. */
async function expectExplained(page: Page, link: string, message: RegExp): Promise<void> {
  const [query, hash] = link.split('#');
  // A link that differs from the page's only after the # would not load afresh.
  await page.goto('about:blank');
  await page.goto(`/${query}&testing=1${hash === undefined ? '' : `#${hash}`}`);
  await waitForIdle(page);
  const banner = page.getByTestId('error-banner');
  await expect(banner).toBeVisible();
  await expect(banner).toContainText(message);
  await expect(page.getByTestId('scenario-library')).toBeVisible();
  expect(await page.getByTestId('scenario-library').getByRole('link').count()).toBeGreaterThan(3);
  await expect(page.getByTestId('policy-column').first()).toBeVisible();
}

test.describe('broken links', () => {
  test('a truncated link', async ({ page }) => {
    const full = await encodeForLink(await scenarioFile('credit-weights'));
    await expectExplained(
      page,
      `?v=1#s=${full.slice(0, Math.floor(full.length * 0.6))}`,
      /damaged or incomplete/,
    );
  });

  test('a link from a newer version, and a scenario of an unknown schema', async ({ page }) => {
    await expectExplained(page, '?v=7&scenario=credit-weights', /newer schedlab \(link format 7\)/);
    const old = JSON.parse(await scenarioFile('credit-weights')) as Record<string, unknown>;
    old.schema = 0;
    await expectExplained(
      page,
      `?v=1#s=${await encodeForLink(JSON.stringify(old))}`,
      /schema 0, which this schedlab can no longer read/,
    );
  });

  test('a link whose scenario is not JSON', async ({ page }) => {
    await expectExplained(page, `?v=1#s=${await encodeForLink('{"schema": 1, "id": ')}`, /not valid JSON/);
    await expectExplained(
      page,
      `?v=1&scenario=credit-weights#patch=${await encodeForLink('[1,2')}`,
      /not valid JSON/,
    );
  });

  test('an oversized link', async ({ page }) => {
    const start = Date.now();
    await expectExplained(page, `?v=1#s=${'A'.repeat(120_000)}`, /too large/);
    expect(Date.now() - start, 'refused at once, not after decoding').toBeLessThan(60_000);
  });

  test('script in a name is shown as text, never run', async ({ page }) => {
    await page.addInitScript(() => {
      (window as unknown as { __pwned: number }).__pwned = 0;
    });
    const hostile = JSON.parse(await scenarioFile('credit-weights')) as {
      title: string;
      summary: string;
      duration_ms: number;
      policies: { label: string }[];
      domains: { name: string }[];
    };
    hostile.title = '<img src=x onerror="window.__pwned=1">';
    hostile.summary = '<script>window.__pwned=2</script>';
    hostile.policies[0]!.label = '<b onmouseover="window.__pwned=3">bold</b>';
    hostile.duration_ms = 3000;
    await page.goto(`/?testing=1&v=1#s=${await encodeForLink(JSON.stringify(hostile))}`);
    await waitForIdle(page);
    await expect(page.locator('.scenario-head h2')).toHaveText(hostile.title);
    await expect(page.locator('.scenario-head p').first()).toHaveText(hostile.summary);
    await expect(page.locator('img[src="x"]')).toHaveCount(0);
    await expect(page.locator('b[onmouseover]')).toHaveCount(0);
    // A name the schema refuses: the banner quotes it as text and the library is shown instead.
    hostile.domains[0]!.name = '<script>window.__pwned=4</script>';
    await expectExplained(
      page,
      `?v=1#s=${await encodeForLink(JSON.stringify(hostile))}`,
      /domains\[0\]\.name/,
    );
    await expect(page.getByTestId('error-banner')).toContainText('<script>');
    expect(await page.evaluate(() => (window as unknown as { __pwned: number }).__pwned)).toBe(0);
  });
});

test('links of the first format (scenario and policies only) still open', async ({ page }) => {
  await openScenario(page, 'credit-weights', { policies: 'credit-1ms' });
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
  expect(await columns(page)).toEqual(['credit-1ms']);
});
