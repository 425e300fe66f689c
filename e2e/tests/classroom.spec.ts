// Classroom: a lesson walked end to end, a lesson whose scenario is missing, presentation mode by
// keyboard, themes, and an axe-core check with no serious violations.
import AxeBuilder from '@axe-core/playwright';
import { expect, openScenario, playheadExactMs, test, waitForIdle } from './helpers';
import type { Page } from '@playwright/test';

async function columns(page: Page): Promise<(string | null)[]> {
  return page
    .getByTestId('policy-column')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-policy')));
}

test('a paper-000 lesson walks from its first step to its last', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await page.getByTestId('open-lessons').click();
  await page.locator('[data-testid="lesson-start"][data-lesson="p000-boost"]').click();
  await waitForIdle(page);
  const lesson = page.getByTestId('lesson');
  await expect(lesson).toHaveAttribute('data-step', '1');
  await expect(page.getByTestId('lesson-title')).toHaveText('The setup');
  await expect(page.locator('[data-scenario="credit-boost"]')).toHaveAttribute('aria-current', 'page');
  expect(await columns(page)).toEqual(['credit', 'noboost']);
  expect(await playheadExactMs(page)).toBeCloseTo(2000, 3);
  const mark = page.locator('[data-testid="policy-column"][data-policy="credit"] [data-testid="timeline"]');
  await expect(mark).toHaveClass(/lesson-mark/);

  await page.getByTestId('lesson-next').click();
  await expect(lesson).toHaveAttribute('data-step', '2');
  await expect.poll(() => playheadExactMs(page)).toBeCloseTo(2041.986, 3);
  await waitForIdle(page);
  // What the step's text says is on screen: a BOOSTed vCPU in Credit's run queue.
  const rq = page.locator(
    '[data-testid="policy-column"][data-policy="credit"] [data-testid="runqueue-pcpu-0"]',
  );
  expect(await rq.locator('[data-pri="BOOST"]').count()).toBeGreaterThan(0);
  await expect(page.locator('.lesson-mark')).toHaveCount(2);

  // The keys a presentation clicker sends.
  await page.locator('main').focus();
  await page.keyboard.press('PageDown');
  await expect(lesson).toHaveAttribute('data-step', '3');
  await expect.poll(() => playheadExactMs(page)).toBeCloseTo(10000, 3);
  await expect.poll(() => page.url()).toContain('lesson=p000-boost&step=3');
  // The question before the numbers, then the numbers.
  await page.keyboard.press('PageDown');
  await expect(lesson).toHaveAttribute('data-step', '4');
  await expect(page.getByTestId('lesson-predict')).toBeVisible();
  await expect(page.getByTestId('app')).toHaveAttribute('data-concealed', 'true');
  await expect.poll(() => page.url()).toContain('lesson=p000-boost&step=4');
  await page.keyboard.press('PageDown');
  await expect(lesson).toHaveAttribute('data-step', '5');
  await waitForIdle(page);
  await expect.poll(() => page.url()).toContain('lesson=p000-boost&step=5');
  await expect(page.getByTestId('cdf-chart')).toHaveClass(/lesson-mark/);
  await expect(page.getByTestId('claims-panel')).toHaveClass(/lesson-mark/);
  await expect(page.getByTestId('lesson-next')).toBeDisabled();
  await page.keyboard.press('PageUp');
  await expect(lesson).toHaveAttribute('data-step', '4');
  await expect.poll(() => page.url()).toContain('lesson=p000-boost&step=4');
  // Each step is a history entry: Back goes one step back, and presentation travels in the link.
  await page.goBack();
  await expect(lesson).toHaveAttribute('data-step', '5');
  await page.goBack();
  await expect(lesson).toHaveAttribute('data-step', '4');
  await page.goBack();
  await expect(lesson).toHaveAttribute('data-step', '3');
  await page.keyboard.press('p');
  await expect.poll(() => page.url()).toContain('present=1');
  await page.reload();
  await waitForIdle(page);
  await expect(page.getByTestId('app')).toHaveAttribute('data-presenting', 'true');
  await expect(lesson).toHaveAttribute('data-step', '3');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('app')).toHaveAttribute('data-presenting', 'false');
  await expect(page.getByTestId('error-banner')).toHaveCount(0);

  await page.getByTestId('lesson-exit').click();
  await expect(lesson).toHaveCount(0);
  await expect(page.locator('.lesson-mark')).toHaveCount(0);
});

test('a lesson whose scenario is not in the library says so', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await page.getByTestId('open-lessons').click();
  await page.locator('[data-testid="lesson-start"][data-lesson="p001-coscheduling"]').click();
  await expect(page.getByTestId('lesson')).toBeVisible();
  const missing = page.getByTestId('lesson-missing');
  // Once the scenario is merged (PENDING_SCENARIOS empty) the message goes away; either way the page stands.
  if ((await missing.count()) > 0) await expect(missing).toContainText('p001-sec2-ten-slots');
  await waitForIdle(page);
  await expect(page.getByTestId('policy-column').first()).toBeVisible();
});

test('presentation mode hides the controls and is driven by the keyboard', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await page.locator('main').focus();
  await page.keyboard.press('p');
  await expect(page.getByTestId('app')).toHaveAttribute('data-presenting', 'true');
  await expect(page.getByTestId('scenario-library')).toBeHidden();
  await expect(page.getByTestId('play')).toBeHidden();
  await expect(page.getByTestId('policy-select').first()).toBeHidden();
  const fontSize = await page.getByTestId('app').evaluate((e) => parseFloat(getComputedStyle(e).fontSize));
  expect(fontSize).toBeGreaterThanOrEqual(18);
  const before = await playheadExactMs(page);
  await page.keyboard.press('Space');
  await expect.poll(() => playheadExactMs(page)).toBeGreaterThan(before);
  await page.keyboard.press('Space');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('app')).toHaveAttribute('data-presenting', 'false');
  await expect(page.getByTestId('scenario-library')).toBeVisible();
});

test('the whole page works from the keyboard alone', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  // Tab to the Lessons button and open a lesson without the mouse.
  for (let i = 0; i < 40; i++) {
    await page.keyboard.press('Tab');
    if ((await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))) === 'open-lessons')
      break;
  }
  expect(await page.evaluate(() => document.activeElement?.getAttribute('data-testid'))).toBe('open-lessons');
  await page.keyboard.press('Enter');
  await page.locator('[data-testid="lesson-start"]').first().focus();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('lesson')).toBeVisible();
  await waitForIdle(page);
  // The focus ring is visible on the focused control.
  await page.getByTestId('lesson-next').focus();
  const outline = await page.getByTestId('lesson-next').evaluate((e) => getComputedStyle(e).outlineStyle);
  expect(outline).not.toBe('none');
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-step', '2');
});

test('light and dark themes; the choice survives a reload', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  const theme = () => page.evaluate(() => document.documentElement.dataset.theme);
  const first = await theme();
  await page.getByTestId('theme-toggle').click();
  const second = await theme();
  expect(second).not.toBe(first);
  const bg = await page.evaluate(() => getComputedStyle(document.body).backgroundColor);
  await page.reload();
  await waitForIdle(page);
  expect(await theme()).toBe(second);
  expect(await page.evaluate(() => getComputedStyle(document.body).backgroundColor)).toBe(bg);
});

async function seriousViolations(page: Page): Promise<string[]> {
  const result = await new AxeBuilder({ page })
    .withTags(['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'])
    .analyze();
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map(
      (v) =>
        `${v.id} (${v.impact}): ${v.help} — ${v.nodes
          .map((n) => n.target.join(' '))
          .slice(0, 3)
          .join('; ')}`,
    );
}

test('axe-core finds no serious accessibility violations, in either theme, with the panels open', async ({
  page,
}) => {
  await openScenario(page, 'credit-boost', { v: '1', open: 'editor,export,share' });
  // Links no longer open the Share panel: open it by hand so it is checked too.
  await page.getByTestId('open-share').click();
  await expect(page.getByTestId('share-panel')).toBeVisible();
  expect(await seriousViolations(page)).toEqual([]);
  await page.getByTestId('theme-toggle').click();
  expect(await seriousViolations(page)).toEqual([]);
  await page.getByTestId('open-lessons').click();
  await page.locator('[data-testid="lesson-start"][data-lesson="p000-boost"]').click();
  await waitForIdle(page);
  expect(await seriousViolations(page)).toEqual([]);
});

test('axe-core finds no serious violations in presentation mode, light and dark, on a predict step', async ({
  page,
}) => {
  await openScenario(page, 'p000-fig10-partial-boost', { v: '1', lesson: 'p000-tavs', step: '4' });
  await expect(page.getByTestId('lesson-predict')).toBeVisible();
  for (const theme of ['light', 'dark']) {
    if (theme === 'dark') await page.getByTestId('theme-toggle').click();
    await page.locator('main').focus();
    await page.keyboard.press('p');
    await expect(page.getByTestId('app')).toHaveAttribute('data-presenting', 'true');
    expect(await seriousViolations(page), theme).toEqual([]);
    await page.keyboard.press('p');
    await expect(page.getByTestId('app')).toHaveAttribute('data-presenting', 'false');
  }
});

test('a lesson link alone opens its step; presentation keys follow the help overlay whatever has focus', async ({
  page,
}) => {
  // Lesson and step alone: the step's scenario, columns and window, not the default scenario's.
  await page.goto('/?testing=1&lesson=p000-tavs&step=2');
  await waitForIdle(page);
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-step', '2');
  await expect(page.locator('[data-scenario="p000-fig10-partial-boost"]')).toHaveAttribute(
    'aria-current',
    'page',
  );
  expect(await columns(page)).toEqual(['credit', 'tavs']);
  expect(await playheadExactMs(page)).toBeCloseTo(8000, 3);
  // The step before the question: the answer is hidden already.
  await expect(page.getByTestId('app')).toHaveAttribute('data-concealed', 'true');
  await expect(page.getByTestId('key-figure-value').first()).toBeHidden();

  // Clicking Present leaves no focused button for Space to press: Space plays.
  await page.getByTestId('present').click();
  await expect(page.getByTestId('app')).toHaveAttribute('data-presenting', 'true');
  await expect(page.getByTestId('lesson-next')).toBeVisible();
  await expect(page.getByTestId('lesson-prev')).toBeVisible();
  await expect(page.getByTestId('lesson')).toContainText('Step 2 of 5');
  await page.getByTestId('lesson-next').focus();
  const before = await playheadExactMs(page);
  await page.keyboard.press('Space');
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-step', '2');
  await expect.poll(() => playheadExactMs(page)).toBeGreaterThan(before);
  await page.keyboard.press('Space');
  // ? lists the keys; Escape closes it first, then leaves presentation.
  await page.keyboard.press('?');
  await expect(page.getByTestId('key-help')).toBeVisible();
  await expect(page.getByTestId('key-help')).toContainText('PageDown');
  await page.keyboard.press('Escape');
  await expect(page.getByTestId('key-help')).toHaveCount(0);
  await expect(page.getByTestId('app')).toHaveAttribute('data-presenting', 'true');

  // A column key with no such column says why.
  await page.keyboard.press('4');
  await expect(page.getByTestId('key-notice')).toContainText('more than two');

  // PageDown from any focus moves on; the predict step's reveal names the figures' winner.
  await page.keyboard.press('PageDown');
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-step', '3');
  await waitForIdle(page);
  // The step before the question points at the decision log: what was decided shows, its figures do not.
  const logValue = page.locator('[data-lesson-note] [data-testid="event-log-value"]').first();
  await expect(logValue).toBeVisible();
  await expect(logValue).toHaveCSS('color', 'rgba(0, 0, 0, 0)');
  await expect(page.locator('[data-lesson-note] [data-testid="event-log-entry"]').first()).not.toHaveCSS(
    'color',
    'rgba(0, 0, 0, 0)',
  );
  await page.keyboard.press('PageDown');
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-step', '4');
  await waitForIdle(page);
  // A step on the timelines: their legends shown, and the views at 18 px or more.
  await expect(page.getByTestId('state-legend').first()).toBeVisible();
  const small = await page.evaluate(() =>
    [...document.querySelectorAll('.lesson-mark figure svg text, .event-log li button, .legend-item')]
      .filter((e) => e.getBoundingClientRect().height > 0)
      .map((e) => parseFloat(getComputedStyle(e).fontSize))
      .filter((px) => px < 18),
  );
  expect(small).toEqual([]);

  await page.locator('[data-testid="lesson-choice"][data-policy="credit"]').click();
  await expect(page.getByTestId('lesson-reveal')).toHaveAttribute('data-winner', 'tavs');
  await expect(page.getByTestId('lesson-reveal')).toContainText('Not this time');
  await expect(page.getByTestId('event-log-value').first()).not.toHaveCSS('color', 'rgba(0, 0, 0, 0)');

  // Glossary from a term's first use; the about page links the fidelity table.
  await page.keyboard.press('Escape');
  await page.keyboard.press('PageUp');
  await page.keyboard.press('PageUp');
  await expect(page.getByTestId('lesson')).toHaveAttribute('data-step', '2');
  // The step's first term is "hypervisor"; its belief term opens the glossary at belief.
  await page.getByTestId('lesson-text').locator('[data-term="belief"]').first().click();
  await expect(page.getByTestId('glossary')).toBeVisible();
  await expect(page.locator('#glossary-belief')).toHaveAttribute('data-current', 'true');
  await page.getByTestId('glossary-close').click();
  await page.getByTestId('open-about').click();
  // The fidelity table opens rendered in the page (a table with the papers' figures), not as a raw file.
  await page.getByTestId('about-fidelity').click();
  await expect(page.getByTestId('fidelity-doc').locator('table').first()).toContainText('Fig. 10a');
  await page.getByTestId('fidelity-doc-close').click();
  await page.getByTestId('about-close').click();
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});
