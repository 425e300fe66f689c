// Issue 17: lessons that teach. A predict step hides the results until the class has chosen, then reveals them;
// the last step leads to the next lesson; each step moves the playhead and brings its marked view into sight.
import { expect, openScenario, playheadMs, test, waitForIdle } from './helpers';

test('predict, then reveal; and on to the next lesson', async ({ page }) => {
  await openScenario(page);
  await page.getByTestId('open-lessons').click();
  await page.locator('[data-testid="lesson-start"][data-lesson="p001-coscheduling"]').click();
  const lesson = page.getByTestId('lesson');
  await expect(lesson).toHaveAttribute('data-step', '1');
  await waitForIdle(page);
  const t1 = await playheadMs(page);

  await page.getByTestId('lesson-next').click();
  await expect(lesson).toHaveAttribute('data-step', '2');
  await waitForIdle(page);
  expect(await playheadMs(page)).not.toBe(t1);
  // The results are hidden until the class picks.
  await expect(page.getByTestId('app')).toHaveAttribute('data-concealed', 'true');
  await expect(page.getByTestId('key-figure-value').first()).toBeHidden();
  await expect(page.getByTestId('lesson-reveal')).toHaveCount(0);
  await page.locator('[data-testid="lesson-choice"][data-policy="cps"]').click();
  await expect(page.getByTestId('lesson-reveal')).toContainText('Right');
  await expect(page.getByTestId('app')).not.toHaveAttribute('data-concealed', 'true');
  await expect(page.getByTestId('key-figure-value').first()).toBeVisible();

  // Step 3 points at the key figures; the columns are the claim's.
  await page.getByTestId('lesson-next').click();
  await expect(lesson).toHaveAttribute('data-step', '3');
  await expect(page.getByTestId('key-figures')).toHaveClass(/lesson-mark/);
  await expect(page.getByTestId('lesson-text')).toContainText(
    '3 steps where proportional share finishes only 2',
  );

  for (let k = 4; k <= 5; k++) {
    await page.getByTestId('lesson-next').click();
    await expect(lesson).toHaveAttribute('data-step', String(k));
  }
  await expect(page.getByTestId('lesson-next')).toBeDisabled();
  await page.getByTestId('lesson-next-lesson').click();
  await expect(lesson).toHaveAttribute('data-lesson', 'p002-xballoon');
  await expect(lesson).toHaveAttribute('data-step', '1');
  await waitForIdle(page);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});
