// Lessons that teach. A predict step hides the results until the class has chosen, then reveals them;
// the last step leads to the next lesson; each step moves the playhead and brings its marked view into sight, and
// each step of every lesson has a screenshot baseline.
import { expect, openScenario, playheadMs, test, waitForIdle } from './helpers';

/** Tolerant of anti-aliasing differences, not of a missing line or a moved chip (as screens.spec). Baselines:
 * tests/lessons.spec.ts-snapshots/ (refresh with `--update-snapshots` after a deliberate change, and look). */
const SHOT = { maxDiffPixelRatio: 0.01, threshold: 0.25 } as const;

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

test.describe('every lesson step in presentation mode at 1280x720', () => {
  test.use({ viewport: { width: 1280, height: 720 } });
  for (const [id, steps] of [
    ['p000-boost', 5],
    ['p000-tavs', 5],
    ['p000-idd', 4],
    ['p001-coscheduling', 5],
    ['p002-xballoon', 4],
    ['p003-schedulers', 5],
    ['p004-streaming', 5],
    ['kvm-your-machine', 4],
    ['xen-core-scheduling', 5],
    ['lock-holder-ladder', 5],
  ] as const) {
    test(`${id}: the lesson text and the views each step points at are on screen`, async ({ page }) => {
      await openScenario(page);
      await page.getByTestId('open-lessons').click();
      await page.locator(`[data-testid="lesson-start"][data-lesson="${id}"]`).click();
      await page.locator('main').focus();
      await page.keyboard.press('p');
      for (let k = 1; k <= steps; k++) {
        if (k > 1) await page.keyboard.press('PageDown');
        await expect(page.getByTestId('lesson')).toHaveAttribute('data-step', String(k));
        await waitForIdle(page);
        const choice = page.getByTestId('lesson-choice');
        if ((await choice.count()) > 0) await choice.first().click();
        // The marks are applied as the views mount; give them a beat.
        await expect(page.locator('.lesson-mark-first')).toHaveCount(1);
        await page.waitForTimeout(500);
        await waitForIdle(page);
        // The step's title and every view it points at on the one screen, below the lesson's text (which stays
        // at the top), all of it at 18 px or more (its canvases' drawn labels too); no timeline is left showing part of the step's window.
        const seen = await page.evaluate(() => {
          /** The type size as seen: its font size times the CSS zoom of it and its ancestors. */
          const zoomOf = (e: Element) => {
            let z = 1;
            for (let p: Element | null = e; p; p = p.parentElement)
              z *= parseFloat(getComputedStyle(p).zoom || '1') || 1;
            return z;
          };
          const seenPx = (e: Element, px = parseFloat(getComputedStyle(e).fontSize)) =>
            Math.round(px * zoomOf(e) * 10) / 10;
          const lesson = document.querySelector('[data-testid="lesson"]')!.getBoundingClientRect();
          const title = document.querySelector('[data-testid="lesson-title"]')!.getBoundingClientRect();
          const off = [...document.querySelectorAll('[data-lesson-note]')]
            .map((e) => [e.getAttribute('data-testid'), e.getBoundingClientRect()] as const)
            .filter(([, r]) => r.top < lesson.bottom - 2 || r.bottom > window.innerHeight + 1)
            .map(([name, r]) => `${name} at ${Math.round(r.top)}-${Math.round(r.bottom)}`);
          if (title.top < 0 || title.bottom > window.innerHeight)
            off.push(`title at ${Math.round(title.top)}`);
          const small = [...document.querySelectorAll('[data-lesson-note] *')]
            .filter(
              (e) =>
                [...e.childNodes].some(
                  (n) => n.nodeType === Node.TEXT_NODE && n.textContent!.trim() !== '',
                ) &&
                e.getBoundingClientRect().height > 0 &&
                seenPx(e) < 18,
            )
            .map((e) => `${e.tagName.toLowerCase()}.${e.getAttribute('class') ?? ''} ${seenPx(e)}px`);
          // Type drawn on a canvas has no computed style: each canvas in a marked view says the size it draws
          // its labels at (data-label-px), seen through the same zoom. A canvas that does not say counts as small.
          for (const c of document.querySelectorAll('[data-lesson-note] canvas')) {
            if (c.getBoundingClientRect().height === 0) continue;
            const px = seenPx(c, parseFloat(c.getAttribute('data-label-px') ?? '0'));
            if (!(px >= 18)) small.push(`canvas.${c.getAttribute('class') ?? ''} ${px}px drawn`);
          }
          return {
            off,
            small: [...new Set(small)],
            partial: document.querySelectorAll('[data-testid="detail-note"]').length,
          };
        });
        expect(seen, `${id} step ${k}`).toEqual({ off: [], small: [], partial: 0 });
        // The claims a step shows keep their verdict in words, on the same screen (the panel is in `off`).
        const panel = page.locator('[data-testid="claims-panel"][data-lesson-note]');
        if ((await panel.count()) > 0) {
          const shown = panel.locator('[data-testid="claim"]:visible');
          await expect(shown.first()).toBeVisible();
          await expect(shown.locator('[data-testid="claim-verdict"]:visible')).toHaveCount(
            await shown.count(),
          );
        }
        if (id === 'p001-coscheduling' && k === 1) {
          // More vCPU lanes than fit a label each: a label per domain names them (job, its v0 to v3).
          const groups = page.getByTestId('timeline').first().getByTestId('state-group-label');
          await expect(groups.first()).toHaveText(/^job\s*v0–3$/);
          await expect(groups.nth(1)).toHaveText(/^web/);
        }
        if (id === 'kvm-your-machine' && k === 4) {
          // The step opens this machine's recording beside the model, once, under the mapping it was made with.
          await expect(page.getByTestId('recorded-trace')).toHaveCount(1);
          await expect(page.getByTestId('recorded-panel')).toContainText('two-busy-loops-weights-1-3.txt.gz');
        }
        if (id === 'p004-streaming' && k === 1) {
          // Lone-lane domains numbered in a row share one label: cpu1 to cpu7.
          const groups = page.getByTestId('timeline').first().getByTestId('state-group-label');
          await expect(groups.filter({ hasText: '1–7' })).toHaveText(/^cpu\s*1–7$/);
        }
        // The step as the projector shows it (results revealed on a predict step), against its baseline.
        await page.mouse.move(0, 0);
        await expect(page).toHaveScreenshot(`lesson-${id}-step${k}.png`, SHOT);
        if (id === 'p000-idd' && k === steps) {
          // The whole run is too dense for a span each: the state lanes and the I/O strip show per-pixel
          // aggregates and the legend says so; zoomed in far enough the spans come back.
          const first = page.getByTestId('timeline').first();
          await expect(first).not.toHaveAttribute('data-state-aggregate', '0');
          await expect(first).toHaveAttribute('data-io-aggregate', 'yes');
          await expect(first.getByTestId('legend-zoom')).toHaveAttribute('data-aggregated', 'lanes and I/O');
          for (let z = 0; z < 9; z++) await page.keyboard.press('+');
          await expect
            .poll(async () => Number(await first.getAttribute('data-state-lanes')))
            .toBeGreaterThan(0);
          await expect(first).toHaveAttribute('data-state-aggregate', '0');
        }
      }
    });
  }
});
