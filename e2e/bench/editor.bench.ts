// Keystroke-to-paint in the scenario editor on a 447 kB scenario (large scenarios keep typing responsive):
// bench-large's workload spread over 256 pCPUs and ~1,480 domains, pretty-printed as the editor
// writes it. Each keystroke is timed alone, from the key event to the first frame painted after it (the frame's
// requestAnimationFrame, then a task that runs once that frame is out), in a form field and in the JSON view; for
// the JSON view also until the form shows the edit. Prints the figures; fails only if the editor cannot be typed in.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { expect, test, type Locator, type Page } from '@playwright/test';

declare global {
  interface Window {
    __schedlabIdle?: boolean;
    /** Resolves with the keystroke's times once the next key event has been painted (set by `arm`). */
    __keystroke?: Promise<{ paint: number; shown: number }>;
  }
}

/** Size the scenario is grown to, pretty-printed [bytes]: the 447 kB of the report. */
const TARGET_BYTES = 447 * 1024;
/** Keystrokes timed per place (BENCH_EDITOR_KEYS: fewer for a slow build). */
const KEYS = Number(process.env.BENCH_EDITOR_KEYS ?? 20);

/** bench-large's driver domain and guests, repeated under new names until the text reaches TARGET_BYTES. */
function largeScenario(): string {
  const path = fileURLToPath(new URL('../../scenarios/bench-large.json', import.meta.url));
  const base = JSON.parse(readFileSync(path, 'utf8')) as {
    host: Record<string, unknown>;
    domains: Record<string, unknown>[];
  } & Record<string, unknown>;
  const guests = base.domains.filter((d) => d.role !== 'driver');
  const doc = {
    ...base,
    id: 'editor-447k',
    title: 'A 447 kB scenario for the editor',
    duration_ms: 200,
    warmup_ms: 100,
    host: { ...base.host, pcpus: 256 },
    domains: base.domains.filter((d) => d.role === 'driver'),
  };
  let text = '';
  for (let i = 0; text.length < TARGET_BYTES; i++) {
    // Copy k of guest dNN is dNN-k, and its references to other guests (a chain's "next": "d07/db") follow it.
    const k = Math.floor(i / guests.length);
    const copy = JSON.stringify(guests[i % guests.length]).replace(/"d(\d\d)(["/])/g, `"d$1-${k}$2`);
    doc.domains.push(JSON.parse(copy) as Record<string, unknown>);
    if (i % 10 === 9) text = JSON.stringify(doc, null, 2) + '\n';
  }
  return text;
}

/**
 * Arms the page to time the next key event: to the first painted frame after it, and until `shown()` holds
 * (checked each frame; the paint time when `field` is null).
 */
async function arm(page: Page, field: string | null, want: string | null): Promise<void> {
  await page.evaluate(
    ([selector, value]) => {
      window.__keystroke = new Promise((resolve) => {
        const onKey = (e: KeyboardEvent) => {
          document.removeEventListener('keydown', onKey, true);
          const t0 = e.timeStamp;
          let paint = Number.NaN;
          const frame = () => {
            // A task queued in a frame's callback runs after that frame is painted.
            const ch = new MessageChannel();
            ch.port1.onmessage = () => {
              const now = performance.now() - t0;
              if (Number.isNaN(paint)) paint = now;
              const el = selector ? document.querySelector<HTMLInputElement>(selector) : null;
              if (!selector || el?.value === value) resolve({ paint, shown: now });
              else requestAnimationFrame(frame);
            };
            ch.port2.postMessage(0);
          };
          requestAnimationFrame(frame);
        };
        document.addEventListener('keydown', onKey, true);
      });
    },
    [field, want] as const,
  );
}

async function timed(page: Page): Promise<{ paint: number; shown: number }> {
  return page.evaluate(() => window.__keystroke!);
}

function summary(ms: readonly number[]): string {
  const s = [...ms].sort((a, b) => a - b);
  const q = (p: number) => s[Math.min(s.length - 1, Math.ceil(p * s.length) - 1)]!;
  return `p50 ${q(0.5).toFixed(0)} ms, p95 ${q(0.95).toFixed(0)} ms, max ${s[s.length - 1]!.toFixed(0)} ms`;
}

/** Types `KEYS` keystrokes into `box` ('1', then Backspace, ...), each timed alone. */
async function typeTimed(
  page: Page,
  box: Locator,
  values: readonly [string, string],
  shownIn: string | null,
): Promise<{ paint: number[]; shown: number[] }> {
  const paint: number[] = [];
  const shown: number[] = [];
  for (let k = 0; k < KEYS; k++) {
    const adding = k % 2 === 0;
    await arm(page, shownIn, adding ? values[1] : values[0]);
    await box.press(adding ? '1' : 'Backspace');
    const t = await timed(page);
    paint.push(t.paint);
    shown.push(t.shown);
  }
  return { paint, shown };
}

test('keystroke to paint in the editor on a 447 kB scenario', async ({ page }) => {
  const text = largeScenario();
  await page.goto('/?testing=1');
  await page.waitForFunction(() => window.__schedlabIdle === true, undefined, { timeout: 600_000 });
  await page.getByTestId('open-editor').click();
  // Only the editor is timed: the draft is checked but not run.
  await page.getByRole('checkbox', { name: 'Re-run on change' }).uncheck();
  const json = page.getByTestId('scenario-json');
  // Set as a paste would (one input event): Playwright's fill goes through the editing commands, which take
  // minutes on a textarea this size whatever the page does.
  await json.evaluate((el: HTMLTextAreaElement, value: string) => {
    Object.getOwnPropertyDescriptor(HTMLTextAreaElement.prototype, 'value')!.set!.call(el, value);
    el.dispatchEvent(new Event('input', { bubbles: true }));
  }, text);
  await expect(page.getByTestId('editor-status')).toHaveText('Valid.', { timeout: 120_000 });
  const fields = await page
    .locator('[data-testid="editor-form"] input, [data-testid="editor-form"] select')
    .count();

  // A form field: the first guest's vCPU count (1 -> 11 -> 1 ...), with the JSON view beside it.
  const vcpus = page.locator('[data-path="domains[1].vcpus"]');
  await vcpus.scrollIntoViewIfNeeded();
  await vcpus.click();
  await vcpus.press('End');
  const form = await typeTimed(page, vcpus, ['1', '11'], null);

  // The JSON view: host.pcpus (256 -> 2561 -> 256 ...), timed until the form's field shows it too.
  await json.evaluate((el: HTMLTextAreaElement) => {
    const at = el.value.indexOf('"pcpus": 256') + '"pcpus": 256'.length;
    el.focus();
    el.setSelectionRange(at, at);
  });
  const typed = await typeTimed(page, json, ['256', '2561'], '[data-path="host.pcpus"]');
  await expect(page.locator('[data-path="host.pcpus"]')).toHaveValue('256');

  // The form field again, the JSON view folded (as a large scenario that comes on screen starts). An editor
  // without the fold (served from an older build, to compare) says so.
  let folded: { paint: number[] } | null = null;
  if ((await page.getByTestId('toggle-json').count()) > 0) {
    await page.getByTestId('toggle-json').click();
    await expect(json).toBeHidden();
    await vcpus.click();
    await vcpus.press('End');
    folded = await typeTimed(page, vcpus, ['1', '11'], null);
  }

  console.log(
    `editor, ${(text.length / 1024).toFixed(0)} kB scenario (${fields} form controls rendered), ${KEYS} keystrokes each:\n` +
      `  form field, keystroke to paint: ${summary(form.paint)}\n` +
      `  form field, JSON view folded, keystroke to paint: ${folded ? summary(folded.paint) : 'no fold'}\n` +
      `  JSON view, keystroke to paint: ${summary(typed.paint)}\n` +
      `  JSON view, keystroke to the form showing it: ${summary(typed.shown)}`,
  );
});
