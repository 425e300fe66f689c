/// <reference types="vitest/config" />
import { defineConfig, type Plugin } from 'vite';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';
import csp from './csp.json' with { type: 'json' };

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

function files(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((d) =>
    d.isDirectory() ? files(join(dir, d.name)) : [join(dir, d.name)],
  );
}

/** Gives dist/sw.js (src/sw.ts) the list of built files once everything, the worker's wasm too, is out. */
function precacheList(): Plugin {
  let outDir = '';
  return {
    name: 'schedlab-precache',
    apply: 'build',
    configResolved(config) {
      outDir = config.build.outDir.startsWith('/')
        ? config.build.outDir
        : join(config.root, config.build.outDir);
    },
    closeBundle() {
      const sw = join(outDir, 'sw.js');
      const list = files(outDir)
        .map((f) => relative(outDir, f).split('\\').join('/'))
        .filter((f) => f !== 'sw.js' && !f.endsWith('.map'))
        .sort();
      const odd = list.find((f) => !/^[\w./-]+$/.test(f));
      if (odd) throw new Error(`sw.js: cannot precache a file named ${JSON.stringify(odd)}`);
      // Prepended, so it does not matter what the minifier made of the rest.
      const head = `self.SCHEDLAB_PRECACHE=${JSON.stringify(['./', ...list])};`;
      writeFileSync(sw, head + readFileSync(sw, 'utf8'));
    },
  };
}

/** The fidelity table (docs/fidelity.md) beside the page, which the about page fetches and renders. */
function fidelityTable(): Plugin {
  return {
    name: 'schedlab-fidelity-table',
    apply: 'build',
    generateBundle() {
      this.emitFile({
        type: 'asset',
        fileName: 'fidelity.md',
        source: readFileSync(join(repoRoot, 'docs/fidelity.md'), 'utf8'),
      });
    },
  };
}

/**
 * The page's Content-Security-Policy (README "Hosting"): scripts only from the site itself plus WebAssembly
 * compilation ('wasm-unsafe-eval', the simulator), workers and the service worker from the site, no plugins, no
 * foreign connections. Styles allow 'unsafe-inline' and connections data:/blob: because the SVG/PNG exports inline
 * computed styles into the copies they serialise and read the rendered image back from a data: URL. The directives
 * live in csp.json, which `scripts/serve.mjs` reads too: it sends the same policy as a header, with the framing
 * rules a meta element cannot carry.
 */
export const CONTENT_SECURITY_POLICY = csp.page.join('; ');

/**
 * Starts the simulator's wasm download with the page (cold start): `client.ts` fetches it only once the
 * main script has run, a few hundred milliseconds after the HTML arrived, and the runs wait for its compile. The
 * preload's URL, type and CORS mode are those of that fetch, so the browser hands it the preloaded response.
 */
function preloadWasm(): Plugin {
  return {
    name: 'schedlab-preload-wasm',
    apply: 'build',
    transformIndexHtml: {
      order: 'post',
      handler: (_html, ctx) => {
        const wasm = Object.keys(ctx.bundle ?? {}).filter((f) => f.endsWith('.wasm'));
        if (wasm.length !== 1) throw new Error(`expected one wasm file in the bundle, found ${wasm.length}`);
        const attrs = { rel: 'preload', href: `./${wasm[0]}`, as: 'fetch', type: 'application/wasm' };
        return [{ tag: 'link', attrs: { ...attrs, crossorigin: '' }, injectTo: 'head-prepend' }];
      },
    },
  };
}

/** The policy as a meta element in the built index.html only: Vite's dev server injects inline scripts. */
function contentSecurityPolicy(): Plugin {
  return {
    name: 'schedlab-csp',
    apply: 'build',
    transformIndexHtml: () => [
      {
        tag: 'meta',
        attrs: { 'http-equiv': 'Content-Security-Policy', content: CONTENT_SECURITY_POLICY },
        injectTo: 'head-prepend',
      },
    ],
  };
}

export default defineConfig({
  // Relative asset paths: dist/ works from any sub-path or straight from a static host.
  base: './',
  // Static assets served as-is (favicon) live in the repository's public/.
  publicDir: fileURLToPath(new URL('../public', import.meta.url)),
  plugins: [fidelityTable(), react(), precacheList(), contentSecurityPolicy(), preloadWasm()],
  // The scenario library lives in ../scenarios, outside the web root.
  server: { fs: { allow: [repoRoot] }, host: '127.0.0.1', port: 5173, strictPort: true },
  preview: { host: '127.0.0.1', port: 5173, strictPort: true },
  worker: { format: 'es' },
  build: {
    target: 'es2022',
    sourcemap: true,
    rollupOptions: {
      input: {
        main: fileURLToPath(new URL('index.html', import.meta.url)),
        sw: fileURLToPath(new URL('src/sw.ts', import.meta.url)),
      },
      // The service worker keeps a fixed name beside index.html: its scope is its folder.
      output: { entryFileNames: (chunk) => (chunk.name === 'sw' ? 'sw.js' : 'assets/[name]-[hash].js') },
    },
  },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts'],
    // The determinism test runs every scenario natively and in wasm.
    testTimeout: 600_000,
  },
});
