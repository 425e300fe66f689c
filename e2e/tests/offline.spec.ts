// Hosting: the built site works from a subpath of any static server (relative asset paths), and once
// loaded it works offline (the service worker's cache). The server here is a plain static one started by the
// test, so it can serve under a subpath and then go away.
import { createServer, type Server } from 'node:http';
import { createReadStream, existsSync, statSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, test, waitForIdle } from './helpers';

const dist = resolve(fileURLToPath(new URL('../../web/dist', import.meta.url)));
const SUBPATH = '/courses/os-2026/schedlab/';
const types: Record<string, string> = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.json': 'application/json',
};

/** Serves web/dist under SUBPATH only; everything else is 404 (so an absolute asset path would fail). */
function serveUnderSubpath(): Promise<{ server: Server; base: string }> {
  const server = createServer((req, res) => {
    const path = decodeURIComponent((req.url ?? '/').split('?')[0]!);
    if (!path.startsWith(SUBPATH)) return void res.writeHead(404).end();
    let file = resolve(dist, '.' + path.slice(SUBPATH.length - 1));
    if (file !== dist && !file.startsWith(dist + sep)) return void res.writeHead(404).end();
    if (existsSync(file) && statSync(file).isDirectory()) file = join(file, 'index.html');
    if (!existsSync(file)) return void res.writeHead(404).end();
    res.writeHead(200, {
      'Content-Type': types[extname(file)] ?? 'application/octet-stream',
      'Cache-Control': 'no-cache',
    });
    createReadStream(file).pipe(res);
  });
  return new Promise((ok) =>
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as { port: number };
      ok({ server, base: `http://127.0.0.1:${port}${SUBPATH}` });
    }),
  );
}

function stop(server: Server): Promise<void> {
  return new Promise((ok) => {
    server.close(() => ok());
    server.closeAllConnections();
  });
}

test('the site runs from a subpath, and offline once it has been loaded', async ({ page }) => {
  const { server, base } = await serveUnderSubpath();
  try {
    await page.goto(`${base}?testing=1&scenario=credit-weights`);
    await waitForIdle(page);
    await expect(page.getByTestId('error-banner')).toHaveCount(0);
    await expect(page.getByTestId('policy-column')).toHaveCount(2);
    expect(Number(await page.getByTestId('timeline').first().getAttribute('data-segments'))).toBeGreaterThan(
      0,
    );
    // The service worker has cached the site (its scope is the subpath).
    const scope = await page.evaluate(async () => (await navigator.serviceWorker.ready).scope);
    expect(scope).toBe(base);
  } finally {
    await stop(server);
  }
  // The server is gone: a reload (and another scenario's lazily loaded file) comes from the cache.
  await page.reload();
  await waitForIdle(page);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
  expect(Number(await page.getByTestId('timeline').first().getAttribute('data-segments'))).toBeGreaterThan(0);
  await page.locator('[data-scenario="credit-cap"]').click();
  await waitForIdle(page);
  await expect(page.getByTestId('error-banner')).toHaveCount(0);
  await expect(page.locator('[data-scenario="credit-cap"]')).toHaveAttribute('aria-current', 'page');
});
