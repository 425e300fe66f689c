// Issue 17: every paper scenario's point on one projector screen. In presentation mode at 1280x720 the key
// figures and each column's timeline are inside the viewport without scrolling, in type of 18 px or more.
import { readdirSync } from 'node:fs';
import { expect, openScenario, test } from './helpers';

const papers = readdirSync(new URL('../../scenarios/', import.meta.url))
  .filter((f) => /^p0.*\.json$/.test(f))
  .map((f) => f.replace(/\.json$/, ''))
  .sort();

test.describe('presentation mode at 1280x720', () => {
  test.use({ viewport: { width: 1280, height: 720 } });

  for (const id of papers) {
    test(`${id}: key figures and timelines on the first screen`, async ({ page }) => {
      await openScenario(page, id);
      await page.keyboard.press('p');
      await expect(page.getByTestId('app')).toHaveAttribute('data-presenting', 'true');
      const inView = async (testId: string) => {
        const boxes = await page.getByTestId(testId).evaluateAll((els) =>
          els.map((e) => {
            const r = e.getBoundingClientRect();
            return { top: r.top, bottom: r.bottom, left: r.left, right: r.right };
          }),
        );
        expect(boxes.length, `${testId} on the page`).toBeGreaterThan(0);
        for (const b of boxes) {
          expect(b.top, `${testId} top`).toBeGreaterThanOrEqual(0);
          expect(b.bottom, `${testId} bottom`).toBeLessThanOrEqual(720);
          expect(b.right, `${testId} right`).toBeLessThanOrEqual(1280);
        }
      };
      expect(await page.evaluate(() => window.scrollY)).toBe(0);
      await inView('key-figures');
      await inView('timeline');
      await expect(page.getByTestId('key-figure-value').first()).not.toHaveText('…');
      // Every piece of text in the key figures, the column headers and the timelines is 18 px or more.
      const small = await page.evaluate(() => {
        const roots = document.querySelectorAll(
          '[data-testid="key-figures"], .policy-column > header, [data-testid="timeline"]',
        );
        const out: string[] = [];
        for (const root of roots) {
          const walker = document.createTreeWalker(root, NodeFilter.SHOW_TEXT);
          for (let n = walker.nextNode(); n; n = walker.nextNode()) {
            const el = n.parentElement;
            if (!el || !n.textContent?.trim()) continue;
            const size = parseFloat(getComputedStyle(el).fontSize);
            if (size < 18 && el.getClientRects().length > 0) out.push(`${n.textContent.trim()} (${size}px)`);
          }
        }
        return out;
      });
      expect(small).toEqual([]);
    });
  }
});
