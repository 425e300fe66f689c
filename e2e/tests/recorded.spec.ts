// A real trace opened in the page: a recorded column beside the simulated ones, on the same playhead, with its
// metrics in the comparison; a file that is not a trace gives the reader's message in the banner.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, openScenario, test, waitForIdle } from './helpers';

const FIXTURES = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../../sim-wasm/core/tests/fixtures/perf',
);

test('a perf trace opens as a recorded column; a file that is not a trace says why', async ({ page }) => {
  await openScenario(page);
  const simulated = await page.getByTestId('policy-column').count();
  await page.getByTestId('open-trace').setInputFiles(path.join(FIXTURES, 'sched.perf-script.txt.gz'));
  const col = page.locator('[data-testid="policy-column"][data-policy="recorded~1"]');
  await expect(col).toBeVisible({ timeout: 60_000 });
  await expect(col).toHaveAttribute('aria-label', 'Recorded: sched.perf-script.txt.gz');
  await waitForIdle(page);
  await expect(page.getByTestId('policy-column')).toHaveCount(simulated + 1);
  // Its pCPU lanes and vCPU state lanes are drawn.
  const timeline = col.getByTestId('timeline');
  await expect(timeline).toBeVisible();
  await expect.poll(async () => Number(await timeline.getAttribute('data-state-lanes'))).toBeGreaterThan(0);
  await expect.poll(async () => Number(await timeline.getAttribute('data-segments'))).toBeGreaterThan(0);
  await expect(col.getByTestId('share-chart')).toBeVisible();
  // Its CPU share's fairness in the comparison, beside the simulated runs'.
  const row = page.locator('[data-testid="summary-table"] tr[data-policy="recorded~1"]');
  await expect(row).toContainText('Recorded: sched.perf-script.txt.gz');
  await expect(row.locator('td[data-metric="jain"]')).toHaveText(/^[01]\.\d+$/);
  // Its wake-to-run CDF, a curve per domain that woke up and ran.
  await expect
    .poll(async () => Number(await page.getByTestId('wake-cdf-chart').getAttribute('data-lines')))
    .toBeGreaterThan(0);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);

  // The perf.data it was printed from opens too, as a second recorded column.
  await page.getByTestId('open-trace').setInputFiles(path.join(FIXTURES, 'sched.data.gz'));
  const second = page.locator('[data-testid="policy-column"][data-policy="recorded~2"]');
  await expect(second).toHaveAttribute('aria-label', 'Recorded: sched.data.gz', { timeout: 60_000 });
  await waitForIdle(page);
  await expect
    .poll(async () => Number(await second.getByTestId('timeline').getAttribute('data-segments')))
    .toBeGreaterThan(0);

  // Not a trace: the reader's message, and the columns stay.
  await page.getByTestId('open-trace').setInputFiles({
    name: 'notes.txt',
    mimeType: 'text/plain',
    buffer: Buffer.from('these are my notes, not a trace\n'),
  });
  await expect(page.getByTestId('error-banner')).toContainText('notes.txt could not be opened as a trace');
  await expect(page.getByTestId('policy-column')).toHaveCount(simulated + 2);
});
