// Bounded by construction: a link cannot exhaust memory or start hours of work by itself, the page runs
// under a strict Content-Security-Policy, and a part of the page gone after a redeploy offers a reload.
import { encodeForLink, expect, openScenario, scenarioFile, test, waitForIdle } from './helpers';

test('a copy-bomb variant in a link costs nothing: variants are built only when asked for', async ({
  page,
}) => {
  const doc = JSON.parse(await scenarioFile('credit-cap')) as Record<string, unknown>;
  doc.variants = [
    {
      label: 'bomb',
      patch: Array.from({ length: 40 }, () => ({ op: 'copy', from: '/domains', path: '/domains/-' })),
    },
  ];
  const started = Date.now();
  await page.goto(`/?testing=1&v=1#s=${await encodeForLink(JSON.stringify(doc))}`);
  await waitForIdle(page, 60_000);
  expect(Date.now() - started).toBeLessThan(30_000);
  // The scenario as written runs; the variant is never patched (building it is refused by the CLI and the core,
  // naming the variant and the operation).
  await expect(page.getByTestId('policy-column').first()).toBeVisible();
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});

test('a link whose runs are estimated at minutes asks first and shows the estimate', async ({ page }) => {
  const doc = {
    schema: 1,
    id: 'huge',
    title: 'A huge host for an hour',
    seed: 1,
    duration_ms: 3_600_000,
    host: { pcpus: 64 },
    domains: Array.from({ length: 64 }, (_, i) => ({
      name: `d${i}`,
      vcpus: 4,
      tasks: [{ name: 't', workload: { type: 'cpu' } }],
    })),
    policies: [{ id: 'credit2', scheduler: 'credit2' }],
  };
  await page.goto(`/?testing=1&v=1#s=${await encodeForLink(JSON.stringify(doc))}`);
  const ask = page.getByTestId('cost-confirm');
  await expect(ask).toBeVisible({ timeout: 60_000 });
  await expect(ask).toContainText('A huge host for an hour');
  await expect(ask).toContainText(/events/);
  // Nothing runs while it asks.
  await expect(page.getByTestId('policy-column')).toHaveCount(0);
  await page.getByTestId('cost-cancel').click();
  await waitForIdle(page);
  await expect(ask).toHaveCount(0);
  await expect(page.getByTestId('policy-column').first()).toBeVisible();
  await expect(page.locator('.scenario-head h2')).not.toHaveText('A huge host for an hour');

  // A scripted link slow in every call asks too: the estimate counts the script's hooks and timers().
  const scripted = {
    schema: 1,
    id: 'slow-script',
    title: 'A script slow in every tick',
    seed: 1,
    duration_ms: 60_000,
    host: { pcpus: 2 },
    domains: [{ name: 'a', vcpus: 2, tasks: [{ name: 'x', workload: { type: 'cpu' } }] }],
    policies: [
      {
        id: 'mine',
        scheduler: 'script',
        params: {
          source:
            'fn timers() { #{ tick_us: 1000 } }\nfn tick(p) { let n = 0; while n < 100000 { n += 1; } }\n' +
            'fn wake(v, cause) { resched(v % 2); }\nfn do_schedule(p, cur, runnable) { #{ next: p, slice_us: 1000 } }',
        },
      },
    ],
  };
  await page.goto(`/?testing=1&v=1#s=${await encodeForLink(JSON.stringify(scripted))}`);
  await expect(ask).toBeVisible({ timeout: 60_000 });
  await expect(ask).toContainText('A script slow in every tick');
  await expect(ask).toContainText(/script operations/);
});

test('the page runs under its Content-Security-Policy without a violation', async ({ page }) => {
  const violations: string[] = [];
  page.on('console', (m) => {
    if (/Content Security Policy/i.test(m.text())) violations.push(m.text());
  });
  const response = await page.goto('/?testing=1');
  const headers = response?.headers() ?? {};
  expect(headers['content-security-policy']).toContain("script-src 'self' 'wasm-unsafe-eval'");
  expect(headers['content-security-policy']).toContain("frame-ancestors 'none'");
  expect(headers['x-frame-options']).toBe('DENY');
  await expect(page.locator('meta[http-equiv="Content-Security-Policy"]')).toHaveCount(1);
  await waitForIdle(page);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
  expect(violations).toEqual([]);
});

test.describe('after a redeploy', () => {
  // The service worker would answer from its cache (and Playwright's routes do not see its fetches); a tab that
  // has none, or whose cache the new deploy replaced, is the case at hand.
  test.use({ serviceWorkers: 'block' });

  test('a scenario whose part of the page is gone offers a reload that keeps the state', async ({ page }) => {
    await openScenario(page, 'credit-weights');
    // The library's scenarios are chunks of their own; this one's file "was replaced" by a newer build.
    await page.route(/assets\/credit-cap[^/]*\.js/, (route) => route.abort());
    await page.locator('[data-scenario="credit-cap"]').click();
    const banner = page.getByTestId('error-banner');
    await expect(banner).toContainText('could not be loaded');
    await expect(page.getByTestId('reload-stale')).toBeVisible();
    await page.unroute(/assets\/credit-cap[^/]*\.js/);
    await page.getByTestId('reload-stale').click();
    await waitForIdle(page);
    await expect(page.locator('.scenario-head h2')).toHaveText('Credit: weights divide a pCPU');
  });
});

test.describe('the editor never loses work', () => {
  const weight = (page: import('@playwright/test').Page, i: number) =>
    page.locator(`[data-path="domains[${i}].weight"]`);

  test('drafts set aside in one tab show in another tab, and two in a row are both kept', async ({
    context,
  }) => {
    const a = await context.newPage();
    const b = await context.newPage();
    await openScenario(a, 'credit-weights');
    await openScenario(b, 'credit-cap');
    await b.getByTestId('open-editor').click();
    await a.getByTestId('open-editor').click();
    // Two unrun drafts in a row in tab A: both go into the history.
    await weight(a, 2).fill('0');
    await expect(a.getByTestId('editor-status')).toContainText('problem');
    await a.locator('[data-scenario="credit-cap"]').click();
    await waitForIdle(a);
    await weight(a, 1).fill('0');
    await expect(a.getByTestId('editor-status')).toContainText('problem');
    await a.locator('[data-scenario="credit-boost"]').click();
    await waitForIdle(a);
    await expect(a.getByTestId('draft-entry')).toHaveCount(2);
    // Tab B heard of them through the storage event, and its own draft is untouched.
    await expect(b.getByTestId('draft-entry')).toHaveCount(2);
    await expect(b.getByTestId('draft-history')).toContainText('Credit: weights divide a pCPU');
    await expect(b.locator('[data-path="id"]')).toHaveValue('credit-cap');
  });

  test('a save the browser refuses is said, with an export', async ({ page }) => {
    await page.addInitScript(() => {
      const set = Storage.prototype.setItem;
      Storage.prototype.setItem = function (key: string, value: string) {
        if (key.startsWith('schedlab.draft') && value.length > 100) {
          throw new DOMException('quota', 'QuotaExceededError');
        }
        set.call(this, key, value);
      };
    });
    await openScenario(page, 'credit-weights');
    await page.getByTestId('open-editor').click();
    await weight(page, 1).fill('700');
    const notice = page.getByTestId('draft-save-failed');
    await expect(notice).toContainText('full');
    await expect(notice.getByRole('button', { name: 'Export file' })).toBeVisible();
  });
});
