// The one place that knows how to open the app and wait for it (docs/test-hooks.md).
import { test as base, expect, type Page } from '@playwright/test';

declare global {
  interface Window {
    __schedlabIdle?: boolean;
  }
}

/** Opens the app in testing mode on a library scenario (the default one when `id` is omitted). */
export async function openScenario(
  page: Page,
  id?: string,
  params: Record<string, string> = {},
): Promise<void> {
  const query = new URLSearchParams({ testing: '1', ...params });
  if (id !== undefined) query.set('scenario', id);
  await page.goto(`/?${query.toString()}`);
  await waitForIdle(page);
}

/** Waits until every run is done and drawn (`window.__schedlabIdle === true`). */
export async function waitForIdle(page: Page, timeout = 240_000): Promise<void> {
  await page.waitForFunction(() => window.__schedlabIdle === true, undefined, { timeout, polling: 100 });
}

/** The playhead time in ms, as the page shows it. */
export async function playheadMs(page: Page): Promise<number> {
  return Number.parseFloat((await page.getByTestId('playhead-time').textContent()) ?? 'NaN');
}

/** The playhead time in ms, unrounded (`data-ms`): decisions microseconds apart still differ. */
export async function playheadExactMs(page: Page): Promise<number> {
  return Number.parseFloat((await page.getByTestId('playhead-time').getAttribute('data-ms')) ?? 'NaN');
}

/** `test` that fails on any uncaught page error, so a crash can never pass silently. */
export const test = base.extend<{ pageErrors: string[] }>({
  pageErrors: [
    async ({ page }, use) => {
      const errors: string[] = [];
      page.on('pageerror', (e) => errors.push(e.message));
      await use(errors);
      expect(errors, 'uncaught errors in the page').toEqual([]);
    },
    { auto: true },
  ],
});

export { expect };

/** Clicks `testId` and returns the downloaded file's name and bytes. */
export async function downloadOf(page: Page, testId: string): Promise<{ name: string; bytes: Buffer }> {
  const [download] = await Promise.all([page.waitForEvent('download'), page.getByTestId(testId).click()]);
  const path = await download.path();
  const { readFileSync } = await import('node:fs');
  return { name: download.suggestedFilename(), bytes: readFileSync(path) };
}

/** A scenario as a share link carries it: zlib, then base64url (web/src/lib/share.ts). */
export async function encodeForLink(text: string): Promise<string> {
  const { deflateSync } = await import('node:zlib');
  return deflateSync(Buffer.from(text, 'utf8'), { level: 9 }).toString('base64url');
}

/** A library scenario file's text, as the tests' source of truth. */
export async function scenarioFile(id: string): Promise<string> {
  const { readFileSync } = await import('node:fs');
  return readFileSync(new URL(`../../scenarios/${id}.json`, import.meta.url), 'utf8');
}
