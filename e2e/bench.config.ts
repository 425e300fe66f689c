// The frame-time benchmark (`npm run bench`): the same browser and server as the e2e suite, its own folder so
// `npm test` never runs it.
import { defineConfig } from '@playwright/test';
import base from './playwright.config';

export default defineConfig({
  ...base,
  testDir: './bench',
  testMatch: '*.bench.ts',
  outputDir: './test-results/bench',
  retries: 0,
  timeout: 900_000,
  // Playwright's trace snapshots the DOM on every action: measurable work in the page being timed.
  use: { ...base.use, trace: 'off' },
});
