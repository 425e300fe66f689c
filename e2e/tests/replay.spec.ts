// Replay on demand: bench-large (16 pCPUs, 64 domains, 60 s) is too large for a whole trace, so its
// run keeps the overview and replays the detail of the window on screen from checkpoints. Its full trace used to
// stop at about 8 s (the memory budget); now scrubbing anywhere shows the schedule, the run queues and the log.
import { expect, openScenario, playheadExactMs, test, waitForIdle } from './helpers';

test('bench-large: the detail of any window is replayed, past where the trace budget used to end', async ({
  page,
}) => {
  await openScenario(page, 'bench-large');
  const column = page.getByTestId('policy-column').first();
  const timeline = column.getByTestId('timeline');
  await expect(timeline).toHaveAttribute('data-detail', 'held');
  // The opening view fits in one replayed window: no note. Zoomed out past the longest window (2.6 s) the lanes
  // show part of the view, and a note says why.
  await expect(column.getByTestId('detail-note')).toHaveCount(0);
  await page.keyboard.press('-');
  await expect(column.getByTestId('detail-note')).toContainText('replayed on demand');
  await page.keyboard.press('+');
  await expect(column.getByTestId('detail-note')).toHaveCount(0);
  // No "detailed trace ends at" note: nothing ends.
  await expect(column.getByTestId('trace-note')).toHaveCount(0);

  for (const ms of [45_000, 21_000]) {
    await page.getByTestId('scrub').fill(String(ms));
    await waitForIdle(page);
    await expect(timeline).toHaveAttribute('data-detail', 'held');
    expect(Number(await timeline.getAttribute('data-segments'))).toBeGreaterThan(100);
    expect(Number(await timeline.getAttribute('data-io'))).toBeGreaterThan(0);
    // Every pCPU's queue at the playhead, with the running vCPU first.
    await expect(
      column.getByTestId('runqueue-pcpu-15').locator('[data-testid="rq-chip"]').first(),
    ).toHaveAttribute('data-running', 'true');
  }

  // Stepping to the next scheduling decision works there too (the decisions come from the replayed window).
  const before = await playheadExactMs(page);
  await page.getByTestId('step-next').click();
  await waitForIdle(page);
  const after = await playheadExactMs(page);
  expect(after).toBeGreaterThan(before);
  expect(after - before).toBeLessThan(50);
});
