// Ablated runs as columns: a claim says what it fails without, one click adds the run with the
// mechanism switched off on the same playhead, the claim is judged on it, and a share link brings it back.
import { expect, openScenario, test, waitForIdle } from './helpers';
import type { Locator, Page } from '@playwright/test';

const SCENARIO = 'p000-fig7a-idd-starvation';
/** A claim the model reproduces, with its ablation (Fig. 7a's priority-inheritance claims are not reproduced). */
const HOLDS = 'p000-fig10-partial-boost';
const CLAIM = "TAVS cuts the mixed domain's mean response";
/** The claim's index in the scenario file, so its ablated column is `tavs~w0`. */
const ABLATED = 'tavs~w0';

/** The mixed domain's mean response under `tavs` [ms] as a line of claim values shows it. */
async function tavsMs(values: Locator): Promise<number> {
  const text = (await values.textContent()) ?? '';
  const m = /tavs: domains\.mixed\.response_ms\.mean = ([0-9.e+-]+)/.exec(text);
  expect(m, `tavs's mean response in "${text}"`).not.toBeNull();
  return Number.parseFloat(m![1]!);
}

async function columns(page: Page): Promise<(string | null)[]> {
  return page
    .getByTestId('policy-column')
    .evaluateAll((els) => els.map((e) => e.getAttribute('data-policy')));
}

test('a claim adds its ablated run as a column, judged with the mechanism off, and a link keeps it', async ({
  page,
}) => {
  await openScenario(page, HOLDS);
  const claim = page.getByTestId('claim').filter({ hasText: CLAIM });
  await expect(claim).toHaveAttribute('data-holds', 'true');
  await expect(claim.getByTestId('claim-paper')).toContainText('Fig. 10a');
  // The verdict in words; the ablation is promised until its column runs.
  await expect(claim.getByTestId('claim-verdict')).toHaveText('holds');
  await expect(claim).toContainText(
    'Should fail without it (partial boosting off (PBratio 0) in policy 1); not run here yet.',
  );
  const before = await tavsMs(claim.locator('.claim-values'));

  await claim.getByTestId('claim-ablate').click();
  await waitForIdle(page);
  expect(await columns(page)).toContain(ABLATED);
  const column = page.locator(`[data-testid="policy-column"][data-policy="${ABLATED}"]`);
  // Named by what was switched off, without the scenario file's 0-based "in policy 1".
  await expect(column).toHaveAttribute(
    'aria-label',
    'Credit + TAVS (KeepOnRunQ), partial boosting off (PBratio 0)',
  );
  // A real run with every view: run queues, the timeline, the share chart.
  await expect(column.getByTestId('timeline')).toBeVisible();
  await expect(column.getByTestId('share-chart')).toBeVisible();
  const note = column.getByTestId('column-ablation');
  await expect(note).toHaveAttribute('data-holds', 'false');

  // The claim fails on the ablated run: the mixed domain waits for its turn again.
  const off = claim.getByTestId('claim-ablated');
  await expect(off).toHaveAttribute('data-holds', 'false');
  const after = await tavsMs(off);
  expect(after).toBeGreaterThan(before * 5);
  await expect(claim.getByTestId('claim-ablate')).toBeDisabled();
  // Judged with its ablation, the claim's verdict still holds: it fails without the mechanism.
  await expect(claim).toHaveAttribute('data-verdict', 'holds');
  await expect(claim).toContainText('Fails without it (partial boosting off (PBratio 0) in policy 1).');

  // The share link carries the ablated column and reproduces it.
  await expect(page).toHaveURL(/policies=[^&]*tavs(~|%7E)w0/);
  await page.reload();
  await waitForIdle(page);
  expect(await columns(page)).toContain(ABLATED);
  await expect(page.getByTestId('claim').filter({ hasText: CLAIM }).getByTestId('claim-ablated')).toHaveText(
    (await off.textContent())!,
  );
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});

test('an ablated column a scenario cannot have is a clear error and the focus policies show', async ({
  page,
}) => {
  // Claim 4 names no ablation; claim 99 does not exist; "~wx" is no column id at all.
  for (const [policies, message] of [
    ['credit,pi~w4', /claim 4 of this scenario names no ablation/],
    ['credit,pi~w99', /claim 99 of this scenario names no ablation/],
    ['credit,pi~wx', /not a comma-separated list of policy ids/],
  ] as const) {
    await openScenario(page, SCENARIO, { policies });
    await expect(page.getByTestId('error-banner')).toContainText(message);
    // The policies its claims compare, no longer only the first two.
    expect(await columns(page)).toEqual(['credit', 'credit-4x', 'pi']);
  }
});
