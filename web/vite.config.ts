/// <reference types="vitest/config" />
import { defineConfig } from 'vite';
import react from '@vitejs/plugin-react';
import { fileURLToPath } from 'node:url';

const repoRoot = fileURLToPath(new URL('..', import.meta.url));

export default defineConfig({
  // Relative asset paths: dist/ works from any sub-path or straight from a static host.
  base: './',
  // Static assets served as-is (favicon) live in the repository's public/.
  publicDir: fileURLToPath(new URL('../public', import.meta.url)),
  plugins: [react()],
  // The scenario library lives in ../scenarios, outside the web root.
  server: { fs: { allow: [repoRoot] }, host: '127.0.0.1', port: 5173, strictPort: true },
  preview: { host: '127.0.0.1', port: 5173, strictPort: true },
  worker: { format: 'es' },
  build: { target: 'es2022', sourcemap: true },
  test: {
    environment: 'node',
    include: ['src/**/*.test.ts'],
    // The determinism test runs every scenario natively and in wasm.
    testTimeout: 600_000,
  },
});
