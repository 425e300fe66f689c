// Paper 001's Lag view: every vCPU's Lag over time, shown in columns of a scenario with a concurrent domain.
import { expect, openScenario, test } from './helpers';

test('the lag chart draws one line per vCPU on the ten-slot scenario', async ({ page }) => {
  await openScenario(page, 'p001-sec2-ten-slots');
  const column = page.locator('[data-testid="policy-column"][data-policy="cps"]');
  const chart = column.getByTestId('lag-chart');
  await expect(chart).toBeVisible();
  // 4 job vCPUs + 3 web + 2 db.
  await expect(chart).toHaveAttribute('data-vcpus', '9');
  await expect(chart.locator('path.lag-line')).toHaveCount(9);
  const d = await chart.locator('path.lag-line[data-vcpu="job.v0"]').getAttribute('d');
  expect(d?.length ?? 0).toBeGreaterThan(20);
});
