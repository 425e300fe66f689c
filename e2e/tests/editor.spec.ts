// The scenario editor: form and JSON validated by the simulator with errors at the field, valid
// edits re-run, drafts survive a reload and never vanish, scenario files import and export.
import { downloadOf, expect, openScenario, scenarioFile, test, waitForIdle } from './helpers';
import type { Page } from '@playwright/test';

const weight = (page: Page, i: number) => page.locator(`[data-path="domains[${i}].weight"]`);

async function openEditor(page: Page): Promise<void> {
  await page.getByTestId('open-editor').click();
  await expect(page.getByTestId('editor')).toBeVisible();
}

test('errors from the schema are shown at the field and in the JSON view', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await openEditor(page);
  await weight(page, 1).fill('0');
  const field = page.locator('.field', { has: weight(page, 1) });
  await expect(field.getByTestId('field-error')).toContainText('minimum');
  await expect(weight(page, 1)).toHaveAttribute('aria-invalid', 'true');
  await expect(page.getByTestId('editor-errors')).toContainText('domains[1].weight');
  await expect(page.getByTestId('editor-status')).toContainText('1 problem');

  await page.locator('[data-path="host.pcpus"]').fill('two');
  const pcpus = page.locator('.field', { has: page.locator('[data-path="host.pcpus"]') });
  await expect(pcpus.getByTestId('field-error')).toContainText('integer');
  await expect(page.locator('[data-path="host.pcpus"]')).toHaveValue('two');
  await expect(page.getByTestId('editor-status')).toContainText('2 problems');

  // The JSON view: a syntax error is named, and the form waits for the JSON to parse.
  await page.getByTestId('scenario-json').fill('{"schema": 1,');
  await expect(page.getByTestId('editor-errors')).toContainText('Not valid JSON');
  await expect(page.getByTestId('editor-form')).toContainText('Fix the JSON');
  // Nothing invalid ever replaced the scenario on screen.
  await expect(page.locator('.scenario-head h2')).toHaveText('Credit: weights divide a pCPU');
  await expect(page.getByTestId('error-banner')).toHaveCount(0);

  // Undo goes back through the JSON edit and the form's edits; what is added comes into view, focused.
  await page.getByTestId('editor-undo').click();
  await expect(page.locator('[data-path="host.pcpus"]')).toHaveValue('two');
  const domains = await page.evaluate(
    () =>
      [...document.querySelectorAll<HTMLElement>('[data-path]')].filter((e) =>
        /^domains\[\d+\]\.name$/.test(e.dataset.path ?? ''),
      ).length,
  );
  await page.getByTestId('add-domain').click();
  await expect
    .poll(() => page.evaluate(() => (document.activeElement as HTMLElement | null)?.dataset.path ?? ''))
    .toMatch(new RegExp(`^domains\\[${domains}\\]`));
  const focused = page.locator(':focus');
  const box = await focused.boundingBox();
  const form = await page.getByTestId('editor-form').boundingBox();
  expect(box!.y).toBeGreaterThanOrEqual(form!.y);
  expect(box!.y + box!.height).toBeLessThanOrEqual(form!.y + form!.height);
});

test('a valid edit re-runs, and edits survive a reload', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await openEditor(page);
  await weight(page, 1).fill('768');
  await expect(page.getByTestId('editor-status')).toHaveText('Valid; on screen.', { timeout: 60_000 });
  await waitForIdle(page);
  // Re-run: the heavy domain's fair share moved from 1/2 to 3/5.
  const share = page.getByTestId('policy-column').first().getByTestId('metrics-table');
  await expect(share).toContainText('60.0%');
  // The form edit changed one line of the JSON view, not the whole file's layout.
  const file = (await scenarioFile('credit-weights')).split('\n');
  const changed = async () => {
    const shown = (await page.getByTestId('scenario-json').inputValue()).split('\n');
    return shown.length === file.length ? shown.filter((l, i) => l !== file[i]) : shown;
  };
  await expect.poll(changed).toEqual([expect.stringContaining('768')]);
  // Revert stays available once the edit has run (back to the library's version); Ctrl+Z and Ctrl+Shift+Z
  // undo and redo the form's edit.
  await expect(page.getByTestId('editor-revert')).toBeEnabled();
  await weight(page, 1).focus();
  await page.keyboard.press('Control+z');
  await expect(weight(page, 1)).not.toHaveValue('768');
  await expect(page.getByTestId('editor-redo')).toBeEnabled();
  await page.keyboard.press('Control+Shift+z');
  await expect(weight(page, 1)).toHaveValue('768');
  await expect(page.getByTestId('editor-status')).toHaveText('Valid; on screen.', { timeout: 60_000 });
  await waitForIdle(page);

  await page.reload();
  await waitForIdle(page);
  await expect(page.getByTestId('editor')).toBeVisible();
  await expect(weight(page, 1)).toHaveValue('768');
  await expect(page.getByTestId('editor-status')).toHaveText('Valid; on screen.');

  // An edit that does not validate is not run, but it is kept across a reload and said so.
  await weight(page, 0).fill('0');
  await expect(page.getByTestId('editor-status')).toContainText('problem');
  await page.reload();
  await waitForIdle(page);
  await expect(page.getByTestId('editor-restored')).toBeVisible();
  await expect(weight(page, 0)).toHaveValue('0');
  await expect(weight(page, 1)).toHaveValue('768');
  await expect(page.getByTestId('editor-errors')).toContainText('domains[0].weight');
});

test('unrun edits are kept aside when another scenario comes on screen', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await openEditor(page);
  await weight(page, 2).fill('0');
  await expect(page.getByTestId('editor-status')).toContainText('problem');
  await page.locator('[data-scenario="credit-cap"]').click();
  await waitForIdle(page);
  await expect(page.getByTestId('editor-kept')).toBeVisible();
  await page.getByTestId('restore-kept').click();
  await expect(weight(page, 2)).toHaveValue('0');
  await expect(page.locator('[data-path="id"]')).toHaveValue('credit-weights');
});

test('a scenario file exports and imports', async ({ page }) => {
  await openScenario(page, 'credit-weights');
  await openEditor(page);
  const { name, bytes } = await downloadOf(page, 'export-scenario');
  expect(name).toBe('credit-weights.json');
  expect(JSON.parse(bytes.toString('utf8'))).toEqual(JSON.parse(await scenarioFile('credit-weights')));

  const own = JSON.parse(await scenarioFile('credit-cap')) as Record<string, unknown>;
  own.title = 'Imported from a file';
  await page.getByTestId('scenario-file').setInputFiles({
    name: 'mine.json',
    mimeType: 'application/json',
    buffer: Buffer.from(JSON.stringify(own)),
  });
  await expect(page.locator('.scenario-head h2')).toHaveText('Imported from a file');
  await waitForIdle(page);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
  await expect(page.getByTestId('policy-column').first()).toBeVisible();

  // A large file (1,000 domains, over 100 kB): its JSON view starts folded, and the form renders the domains in
  // view only, the last one once scrolled to.
  own.domains = Array.from({ length: 1000 }, (_, i) => ({
    name: `d${i}`,
    weight: 256,
    tasks: [{ name: 'burn', workload: { type: 'cpu' } }],
  }));
  own.claims = [];
  own.duration_ms = 100;
  own.title = 'A thousand domains';
  const large = JSON.stringify(own, null, 2);
  expect(large.length).toBeGreaterThan(100_000);
  await page.getByTestId('scenario-file').setInputFiles({
    name: 'large.json',
    mimeType: 'application/json',
    buffer: Buffer.from(large),
  });
  await expect(page.getByTestId('toggle-json')).toHaveText('Show the JSON');
  await expect(page.getByTestId('scenario-json')).toBeHidden();
  await expect(weight(page, 0)).toBeVisible();
  expect(await page.locator('[data-testid="editor-form"] .array-item').count()).toBeLessThan(100);
  await page.getByTestId('editor-form').evaluate((el) => el.scrollTo(0, el.scrollHeight));
  await expect(weight(page, 999)).toHaveValue('256');
  await page.getByTestId('toggle-json').click();
  await expect(page.getByTestId('scenario-json')).toHaveValue(large);
});
