// The tab's memory on the copy-bomb share link (a variant whose JSON Patch repeats
// {"op":"copy","from":"/domains","path":"/domains/-"} doubles the document per operation; before the limits, a
// 615-character link crashed the simulator in the page), against the same page opening the default scenario.
// Memory is the renderer process's peak resident set (VmHWM: the page, its simulator worker and their wasm memory
// share that process), read from /proc for the processes this benchmark's browser started, plus the page's JS heap
// (CDP Runtime.getHeapUsage). Prints the figures; fails only if the link is not refused.
import { readFileSync, readdirSync } from 'node:fs';
import { deflateSync } from 'node:zlib';
import { fileURLToPath } from 'node:url';
import { expect, test, type Browser } from '@playwright/test';

declare global {
  interface Window {
    __schedlabIdle?: boolean;
  }
}

/** Copy operations in the bomb: 2^40 copies of the domains without the limits. */
const COPIES = 40;

/** Every process below `root`, by pid, with its command line. */
function descendants(root: number): Map<number, string> {
  const parent = new Map<number, number>();
  for (const d of readdirSync('/proc')) {
    if (!/^\d+$/.test(d)) continue;
    try {
      const stat = readFileSync(`/proc/${d}/stat`, 'utf8');
      // pid (comm) state ppid ...: comm may hold spaces and parentheses.
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      parent.set(Number(d), ppid);
    } catch {
      // The process ended while we looked.
    }
  }
  const out = new Map<number, string>();
  for (const pid of parent.keys()) {
    for (let p = parent.get(pid); p !== undefined && p > 1; p = parent.get(p)) {
      if (p !== root) continue;
      try {
        out.set(pid, readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0').join(' '));
      } catch {
        // Gone.
      }
      break;
    }
  }
  return out;
}

/** A process's peak and current resident set [MB]. */
function rss(pid: number): { peak: number; now: number } {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (key: string) => Number(new RegExp(`^${key}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  return { peak: kb('VmHWM') / 1024, now: kb('VmRSS') / 1024 };
}

function renderers(): Set<number> {
  return new Set(
    [...descendants(process.pid)].filter(([, cmd]) => cmd.includes('--type=renderer')).map(([p]) => p),
  );
}

/** Opens `url` in a fresh context and returns the peak memory of the renderer processes it started. */
async function measure(
  browser: Browser,
  baseURL: string,
  url: string,
  settle: (page: import('@playwright/test').Page) => Promise<void>,
): Promise<string> {
  const before = renderers();
  const context = await browser.newContext({ baseURL, serviceWorkers: 'block' });
  const page = await context.newPage();
  await page.goto(url);
  await page.waitForFunction(() => window.__schedlabIdle === true, undefined, {
    timeout: 300_000,
    polling: 100,
  });
  await settle(page);
  const cdp = await context.newCDPSession(page);
  const heap = (await cdp.send('Runtime.getHeapUsage')) as { usedSize: number; totalSize: number };
  const mine = [...renderers()].filter((p) => !before.has(p)).map((p) => ({ pid: p, ...rss(p) }));
  await context.close();
  const peak = Math.max(...mine.map((m) => m.peak));
  return (
    `renderer peak RSS ${peak.toFixed(0)} MB (${mine.length} new renderer process(es): ` +
    `${mine.map((m) => `${m.peak.toFixed(0)}/${m.now.toFixed(0)} MB peak/now`).join(', ')}), ` +
    `page JS heap ${(heap.usedSize / 1e6).toFixed(1)} MB used of ${(heap.totalSize / 1e6).toFixed(1)} MB`
  );
}

test('the tab’s memory on the copy-bomb link', async ({ browser, baseURL }) => {
  const path = fileURLToPath(new URL('../../scenarios/credit-cap.json', import.meta.url));
  const doc = JSON.parse(readFileSync(path, 'utf8')) as Record<string, unknown>;
  doc.variants = [
    {
      label: 'bomb',
      patch: Array.from({ length: COPIES }, () => ({ op: 'copy', from: '/domains', path: '/domains/-' })),
    },
  ];
  const link = `/?testing=1&v=1#s=${deflateSync(Buffer.from(JSON.stringify(doc)), { level: 9 }).toString('base64url')}`;

  const plain = await measure(browser, baseURL!, '/?testing=1', async () => {});
  const bomb = await measure(browser, baseURL!, link, async (page) => {
    await expect(page.getByTestId('error-banner')).toContainText("variants[0] ('bomb')");
  });
  console.log(
    `memory, default scenario: ${plain}\n` +
      `memory, copy-bomb link (${link.length} characters, ${COPIES} copies of /domains): ${bomb}`,
  );
});
