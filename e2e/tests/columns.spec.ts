// Columns that match the claims. The default columns are the scenario's focus (the policies its claims
// compare); a claim shows its policies as columns; "+ Add column" adds any scheduler of the registry.
import type { Page } from '@playwright/test';
import { expect, openScenario, test, waitForIdle } from './helpers';

async function columns(page: Page): Promise<(string | null)[]> {
  return page
    .getByTestId('policy-column')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-policy')));
}

test('the default columns are the policies the claims compare', async ({ page }) => {
  await openScenario(page, 'p003-table5-dom0-stress');
  expect(await columns(page)).toEqual(['credit', 'credit2', 'enhanced']);
  await expect(page.getByTestId('key-figures')).toContainText('domU');
  await expect(page.getByTestId('key-figure-paper').first()).toContainText('Table 5');
  // The paper's value is shown whole (wrapped), never cut with an ellipsis.
  const cut = await page
    .getByTestId('key-figure-paper')
    .evaluateAll((els) =>
      els.filter((e) => e.scrollHeight > e.clientHeight + 1 || e.scrollWidth > e.clientWidth + 1),
    );
  expect(cut).toHaveLength(0);
});

test('a claim shows its policies as columns, with its ablated run', async ({ page }) => {
  await openScenario(page, 'p000-fig7a-idd-starvation');
  // Claim 3: priority inheritance against Credit, with an ablation.
  await page.getByTestId('claim').nth(3).getByTestId('claim-show').click();
  await expect.poll(() => columns(page)).toEqual(['credit', 'pi', 'pi~w3']);
  await waitForIdle(page);
  await expect(page.getByTestId('column-ablation')).toHaveAttribute('data-holds', 'false');
});

test('"+ Add column" adds a scheduler of the registry with its default parameters, not a repeat', async ({
  page,
}) => {
  await openScenario(page, 'credit-weights');
  expect(await columns(page)).toEqual(['credit', 'credit-1ms']);
  await page.getByTestId('add-column').click();
  await expect.poll(() => columns(page)).toEqual(['credit', 'credit-1ms', 'credit2~d']);
  await waitForIdle(page);
  const col = page.locator('[data-testid="policy-column"][data-policy="credit2~d"]');
  await expect(col.getByTestId('column-registry')).toContainText('credit2');
  await expect(col.getByTestId('timeline')).toBeVisible();
  await page.getByTestId('add-column-select').selectOption('sedf~d');
  await expect.poll(() => columns(page)).toEqual(['credit', 'credit-1ms', 'credit2~d', 'sedf~d']);
  await waitForIdle(page);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
  // The link keeps them.
  expect(decodeURIComponent(page.url())).toContain('policies=credit,credit-1ms,credit2~d,sedf~d');
});
