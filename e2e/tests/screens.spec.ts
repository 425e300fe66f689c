// Screenshot comparisons of every view on paper 000 Fig. 10, paused at 30 s, 1280x720, CSS
// animations finished (toHaveScreenshot's default). What each picture must show a person is noted beside it.
// Baselines: tests/screens.spec.ts-snapshots/ (refresh with `npx playwright test screens --update-snapshots`
// after a deliberate change, and look at them).
import type { Locator, Page } from '@playwright/test';
import { expect, openScenario, playheadExactMs, test, waitForIdle } from './helpers';

/** Tolerant of anti-aliasing differences, not of a missing line or a moved chip. */
const SHOT = { maxDiffPixelRatio: 0.01, threshold: 0.25 } as const;

async function openFig10At30s(page: Page): Promise<void> {
  await openScenario(page, 'p000-fig10-partial-boost', { policies: 'credit,tavs' });
  await page.getByTestId('scrub').fill('30000');
  await expect.poll(() => playheadExactMs(page)).toBe(30000);
  await waitForIdle(page);
  // No tooltip, no focus ring in the pictures.
  await page.mouse.move(0, 0);
  await page.locator('body').click({ position: { x: 2, y: 2 } });
}

async function shoot(target: Locator, name: string): Promise<void> {
  await target.scrollIntoViewIfNeeded();
  await expect(target).toHaveScreenshot(name, SHOT);
}

test('each view of each column, fig10 at 30 s', async ({ page }) => {
  await openFig10At30s(page);
  for (const policy of ['credit', 'tavs']) {
    const col = page.locator(`[data-testid="policy-column"][data-policy="${policy}"]`);
    // Run queue: who runs and who waits, with priority and credit.
    await shoot(col.locator('figure.runqueues'), `${policy}-runqueues.png`);
    // Timeline: Credit's I/O strip has a long bar (the echo request waiting ~30 ms+), TAVS's only ticks.
    await shoot(col.getByTestId('timeline'), `${policy}-timeline.png`);
    await shoot(col.getByTestId('event-log'), `${policy}-event-log.png`);
    // Shares: every CPU-bound domain and the mixed one near the same fair line under both policies.
    await shoot(col.getByTestId('share-chart'), `${policy}-shares.png`);
    // Beliefs: TAVS's echo line climbs far above the threshold with dense boost marks; Credit says it does not
    // infer.
    await shoot(col.getByTestId('belief-chart'), `${policy}-beliefs.png`);
  }
  // Comparison: the two response-time CDFs far apart (TAVS at the round trip, Credit at tens of ms).
  await shoot(page.getByTestId('cdf-chart'), 'cdf.png');
  await shoot(page.getByTestId('summary-table'), 'summary.png');
  await shoot(page.getByTestId('claims-panel'), 'claims.png');
});

test('the first screen of fig10 as a projector shows it', async ({ page }) => {
  await openFig10At30s(page);
  await page.evaluate(() => window.scrollTo(0, 0));
  await expect(page).toHaveScreenshot('fig10-first-screen.png', SHOT);
});

// Each step of the paper-001 lesson as the projector shows it (presentation mode, 1280x720). Step 1:
// the two columns' timelines under the lesson text and the key figure of steps done; step 2: the prediction with
// its two choices, the figures hidden; step 3 (after choosing co-scheduling): 20 against 30 steps, the key
// figures outlined; step 4: a third column, HIT; step 5: the claims moved up under the lesson, with the
// next-lesson button.
test('each step of the paper-001 lesson in presentation mode', async ({ page }) => {
  await openScenario(page);
  await page.getByTestId('open-lessons').click();
  await page.locator('[data-testid="lesson-start"][data-lesson="p001-coscheduling"]').click();
  await page.locator('main').focus();
  await page.keyboard.press('p');
  for (let k = 1; k <= 5; k++) {
    if (k > 1) await page.keyboard.press('PageDown');
    await expect(page.getByTestId('lesson')).toHaveAttribute('data-step', String(k));
    await waitForIdle(page);
    await expect(page.locator('.lesson-mark-first')).toHaveCount(1);
    await page.mouse.move(0, 0);
    await expect(page).toHaveScreenshot(`lesson-p001-step${k}.png`, SHOT);
    const choice = page.locator('[data-testid="lesson-choice"][data-policy="cps"]');
    if ((await choice.count()) > 0) await choice.click();
  }
});
