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

test('"Simulate this load" runs the fitted scenario beside the recording and says how far it is', async ({
  page,
}) => {
  await openScenario(page);
  await page.getByTestId('open-trace').setInputFiles(path.join(FIXTURES, 'sched.perf-script.txt.gz'));
  const trace = page.locator('[data-testid="recorded-trace"][data-policy="recorded~1"]');
  await expect(trace).toBeVisible({ timeout: 60_000 });
  await waitForIdle(page);
  await trace.getByTestId('simulate-load').click();
  // The fitted scenario's KVM, Credit and Credit2 are the columns now, the recording beside them.
  for (const p of ['kvm', 'credit', 'credit2', 'recorded~1']) {
    await expect(page.locator(`[data-testid="policy-column"][data-policy="${p}"]`)).toBeVisible({
      timeout: 120_000,
    });
  }
  const table = trace.getByTestId('recorded-vs-simulated');
  await expect(table).toBeVisible({ timeout: 120_000 });
  for (const run of ['recorded', 'kvm', 'credit', 'credit2']) {
    const cell = table.locator(`tr[data-run="${run}"][data-domain="burn-hi"] td[data-metric="cpu_share"]`);
    await expect(cell).toHaveText(/^0\.\d+$/);
  }
  await expect(
    table.locator('tr[data-run="credit"][data-domain="rustc"] td[data-metric="wake_p99_delta"]'),
  ).toHaveText(/^[+−]\d/);
  await waitForIdle(page);
  // The wake-to-run CDF draws the simulated columns beside the recorded one: more lines than the recording has.
  const recordedDomains = await table.locator('tr[data-run="recorded"]').count();
  await expect
    .poll(async () => Number(await page.getByTestId('wake-cdf-chart').getAttribute('data-lines')), {
      timeout: 60_000,
    })
    .toBeGreaterThan(recordedDomains);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
});

test('a trace is read again under an edited mapping; a bad mapping says why', async ({ page }) => {
  await openScenario(page);
  await page.getByTestId('open-trace').setInputFiles(path.join(FIXTURES, 'sched.perf-script.txt.gz'));
  const trace = page.locator('[data-testid="recorded-trace"][data-policy="recorded~1"]');
  await expect(trace).toBeVisible({ timeout: 60_000 });
  await trace.locator('summary').click();
  const mapping = trace.getByTestId('trace-mapping');
  await expect(mapping).toHaveValue(/"domains"/);
  // The committed mapping: the two cgroups (the echo server in the heavier one) as two domains with their weights.
  const fs = await import('node:fs');
  await mapping.fill(fs.readFileSync(path.join(FIXTURES, 'sched.mapping.json'), 'utf8'));
  await trace.getByTestId('trace-reread').click();
  await expect(trace.getByTestId('trace-read-note')).toHaveText('Read again.', { timeout: 60_000 });
  const col = page.locator('[data-testid="policy-column"][data-policy="recorded~1"]');
  await expect(col).toBeVisible();
  await mapping.fill('{"domains": [], "nope": 1}');
  await trace.getByTestId('trace-reread').click();
  await expect(trace.getByTestId('trace-read-note')).toContainText('mapping');
  await expect(col).toBeVisible();
});

test('"mapping first": a trace waits for its mapping before it is shown', async ({ page }) => {
  await openScenario(page);
  const simulated = await page.getByTestId('policy-column').count();
  await page.getByTestId('trace-mapping-first').check();
  await page.getByTestId('open-trace').setInputFiles(path.join(FIXTURES, 'sched.perf-script.txt.gz'));
  const staged = page.locator('[data-testid="staged-trace"][data-policy="recorded~1"]');
  await expect(staged).toBeVisible({ timeout: 60_000 });
  await expect(page.getByTestId('policy-column')).toHaveCount(simulated);
  const mapping = staged.getByTestId('trace-mapping');
  await expect(mapping).toHaveValue(/"domains"/);
  const fs = await import('node:fs');
  await mapping.fill(fs.readFileSync(path.join(FIXTURES, 'sched.mapping.json'), 'utf8'));
  await staged.getByTestId('trace-reread').click();
  await expect(staged.getByTestId('trace-read-note')).toHaveText('Read again.', { timeout: 60_000 });
  await staged.getByTestId('trace-show').click();
  const col = page.locator('[data-testid="policy-column"][data-policy="recorded~1"]');
  await expect(col).toBeVisible();
  await expect(page.getByTestId('staged-trace')).toHaveCount(0);
  // Shown under the mapping chosen: its two domains.
  await waitForIdle(page);
  await expect(page.locator('[data-testid="summary-table"] tr[data-policy="recorded~1"]')).toBeVisible();
  await expect(col.getByTestId('share-chart')).toBeVisible();
});

test('the share link names a recorded trace by its hash: shown again where it was opened, asked for elsewhere', async ({
  page,
  browser,
}) => {
  await openScenario(page);
  await page.getByTestId('open-trace').setInputFiles(path.join(FIXTURES, 'sched.perf-script.txt.gz'));
  await expect(page.locator('[data-testid="policy-column"][data-policy="recorded~1"]')).toBeVisible({
    timeout: 60_000,
  });
  await expect.poll(() => page.url()).toMatch(/[#&]traces=/);
  const link = page.url();
  // This browser kept it: the link shows it again (a fresh load, not a move within the page).
  await page.goto('about:blank');
  await page.goto(link);
  await expect(page.locator('[data-testid="policy-column"][data-policy="recorded~1"]')).toHaveAttribute(
    'aria-label',
    'Recorded: sched.perf-script.txt.gz',
    { timeout: 60_000 },
  );
  // Another browser has not: the page names the file and opens it once given.
  const other = await browser.newPage();
  await other.goto(link);
  await expect(other.getByTestId('error-banner')).toContainText('sched.perf-script.txt.gz', {
    timeout: 60_000,
  });
  await expect(other.getByTestId('error-banner')).toContainText('Open trace');
  await other.getByTestId('open-trace').setInputFiles(path.join(FIXTURES, 'sched.perf-script.txt.gz'));
  await expect(other.locator('[data-testid="policy-column"][data-policy="recorded~1"]')).toBeVisible({
    timeout: 60_000,
  });
  await other.close();
});
