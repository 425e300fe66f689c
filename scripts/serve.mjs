#!/usr/bin/env node
// Serves the built app (web/dist) on http://127.0.0.1:5173 with no dependencies, so `npm start` and the e2e
// tests see exactly the static files a user would deploy. The port is strict: if it is taken we exit rather
// than move, because the test hooks and the README promise 5173.
import { createServer } from 'node:http';
import { createReadStream, existsSync, readFileSync, statSync } from 'node:fs';
import { extname, join, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(fileURLToPath(new URL('.', import.meta.url)), '..', 'web', 'dist');
const host = process.env.HOST ?? '127.0.0.1';
const port = Number(process.env.PORT ?? 5173);

const types = {
  '.html': 'text/html; charset=utf-8',
  '.js': 'text/javascript; charset=utf-8',
  '.mjs': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.json': 'application/json; charset=utf-8',
  '.wasm': 'application/wasm',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.ico': 'image/x-icon',
  '.map': 'application/json; charset=utf-8',
  '.txt': 'text/plain; charset=utf-8',
};

// The page's Content-Security-Policy (web/csp.json: the built index.html carries it as a meta element too; see
// README "Hosting"), plus what only a header can say: no framing by other sites (clickjacking).
const policy = JSON.parse(readFileSync(new URL('../web/csp.json', import.meta.url), 'utf8'));
const csp = [...policy.page, ...policy.headerOnly].join('; ');

if (!existsSync(join(root, 'index.html'))) {
  console.error(`serve: ${root}/index.html not found; run \`npm run build\` first`);
  process.exit(1);
}

function resolveFile(urlPath) {
  let path;
  try {
    path = decodeURIComponent(urlPath);
  } catch {
    return null;
  }
  const file = resolve(root, '.' + path);
  // Refuse anything that escapes dist (../ tricks).
  if (file !== root && !file.startsWith(root + sep)) return null;
  if (existsSync(file) && statSync(file).isDirectory()) return join(file, 'index.html');
  return file;
}

const server = createServer((req, res) => {
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.writeHead(405, { Allow: 'GET, HEAD' }).end();
    return;
  }
  const urlPath = (req.url ?? '/').split('?')[0].split('#')[0];
  const file = resolveFile(urlPath);
  if (!file || !existsSync(file) || !statSync(file).isFile()) {
    res.writeHead(404, { 'Content-Type': 'text/plain; charset=utf-8' }).end('not found\n');
    return;
  }
  res.writeHead(200, {
    'Content-Type': types[extname(file)] ?? 'application/octet-stream',
    'Content-Length': statSync(file).size,
    // Rebuilds replace files in place; never let a browser keep a stale wasm or bundle.
    'Cache-Control': 'no-cache',
    'X-Content-Type-Options': 'nosniff',
    'Content-Security-Policy': csp,
    'X-Frame-Options': 'DENY',
    'Referrer-Policy': 'no-referrer',
  });
  if (req.method === 'HEAD') {
    res.end();
    return;
  }
  createReadStream(file).pipe(res);
});

server.on('error', (err) => {
  if (err.code === 'EADDRINUSE') {
    console.error(`serve: port ${port} on ${host} is already in use; stop the other server and retry`);
  } else {
    console.error(`serve: ${err.message}`);
  }
  process.exit(1);
});

server.listen(port, host, () => {
  console.log(`schedlab: serving ${root} on http://${host}:${port}/`);
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    // Browsers hold keep-alive sockets open; drop them so close() can finish.
    server.closeAllConnections();
  });
}
