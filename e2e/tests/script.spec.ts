// Script policies in the page: a template edited in the policy editor, broken (the syntax error
// marked at its line, kept over a reload), mended (the column re-runs), and a homework whose goal claim turns green once the
// student's policy meets it, the share link carrying the student's code to whoever opens it.
import { readFileSync } from 'node:fs';
import { expect, openScenario, test, waitForIdle } from './helpers';
import type { Page } from '@playwright/test';

const code = (page: Page) => page.getByTestId('script-code').locator('.cm-content');

/** Replaces the whole script with `text` (typed as one input, as a paste is). */
async function replaceScript(page: Page, text: string): Promise<void> {
  await code(page).click();
  await page.keyboard.press('ControlOrMeta+a');
  await page.keyboard.insertText(text);
}

test('a template edited in the page: an error at its line, mended, the column re-runs', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await page.getByTestId('script-template').first().selectOption('round_robin');
  const column = page.locator('[data-testid="policy-column"][data-scripted="true"]');
  await expect(column).toHaveCount(1);
  await expect(page.getByTestId('policy-editor')).toBeVisible();
  await expect(code(page)).toContainText('fn init');
  await waitForIdle(page);
  await expect(column.getByTestId('timeline')).toBeVisible();
  const firstRun = await column.getAttribute('data-run');

  // Break it: a statement with no variable name on a new last line.
  await code(page).click();
  await page.keyboard.press('ControlOrMeta+End');
  await page.keyboard.press('Enter');
  await page.keyboard.insertText('let = 1;');
  // The cursor's line (CodeMirror draws only the lines in view): the new last line.
  const lines = Number(
    await page.getByTestId('script-code').locator('.cm-lineNumbers .cm-activeLineGutter').textContent(),
  );
  expect(lines).toBeGreaterThan(10);
  const error = page.getByTestId('script-error');
  await expect(error).toHaveAttribute('data-kind', 'syntax');
  await expect(error).toHaveAttribute('data-line', String(lines));
  await expect(page.getByTestId('script-status')).toHaveAttribute('data-state', 'syntax');
  await expect(page.getByTestId('script-code').locator('.cm-lint-marker-error')).toHaveCount(1);
  // The column keeps its last run while the script does not compile.
  await expect(column).toHaveAttribute('data-run', firstRun!);

  // A reload keeps the broken script (the tab's draft) and offers it back.
  await page.waitForTimeout(500);
  await page.reload();
  await waitForIdle(page);
  await page.getByTestId('script-restore').click();
  await expect(error).toHaveAttribute('data-line', String(lines));
  const reloadedRun = await column.getAttribute('data-run');
  await code(page).click();
  await page.keyboard.press('ControlOrMeta+End');

  // Mend it: the line becomes a valid statement; the column runs the new script once typing pauses.
  await page.keyboard.press('Home');
  await page.keyboard.press('Shift+End');
  await page.keyboard.insertText('let mended = 1;');
  await expect(error).toHaveCount(0);
  await expect(column).not.toHaveAttribute('data-run', reloadedRun!);
  await expect(page.getByTestId('script-status')).toHaveAttribute('data-state', 'ok');
  await waitForIdle(page);
  await expect(column.getByTestId('timeline')).toBeVisible();
  await expect(column.getByTestId('event-log')).toBeVisible();
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});

test('a homework claim turns green, and the link carries the code', async ({ page, browser }) => {
  await openScenario(page);
  await page.getByTestId('open-lessons').click();
  await page.locator('[data-testid="homework-start"][data-lesson="hw-barrier-makespan"]').click();
  await expect(page.getByTestId('homework')).toBeVisible();
  await expect(page.getByTestId('policy-editor')).toBeVisible();
  await waitForIdle(page);
  const steps = page.getByTestId('homework-claim').first();
  // The starting round robin misses the goal.
  await expect(steps).toHaveAttribute('data-holds', 'false');
  await expect(page.getByTestId('homework')).toHaveAttribute('data-met', 'false');

  // A student's gang scheduler (the reference solution kept beside the Rust test), with its vars.
  const solution = readFileSync(
    new URL('../../sim-wasm/cli/tests/homework/hw-barrier-makespan.rhai', import.meta.url),
    'utf8',
  );
  await replaceScript(page, solution);
  // Its vars: it reads slot_ms and gang, which the round robin's vars lack.
  await page.getByTestId('script-vars-json').fill('{"slot_ms": 10, "gang": "job"}');
  await expect(page.getByTestId('script-status')).not.toHaveAttribute('data-state', 'syntax');
  await expect(steps).toHaveAttribute('data-holds', 'true', { timeout: 120_000 });
  await expect(page.getByTestId('homework')).toHaveAttribute('data-met', 'true');
  await waitForIdle(page);

  // The teacher opens the link: the same code, the same verdict, the same values (the run is the same).
  const link = page.url();
  const values = await page.getByTestId('homework-claim').allTextContents();
  const teacher = await browser.newPage();
  await teacher.goto(link);
  await waitForIdle(teacher);
  await expect(teacher.getByTestId('homework')).toHaveAttribute('data-met', 'true');
  expect(await teacher.getByTestId('homework-claim').allTextContents()).toEqual(values);
  await expect(teacher.getByTestId('script-code').locator('.cm-content')).toContainText(
    'a gang domain (vars.gang',
  );
  await teacher.close();
});
