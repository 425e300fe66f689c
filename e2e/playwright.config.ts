// e2e tests against the BUILT site (web/dist served by scripts/serve.mjs), in Debian's chromium: Playwright's
// own browser download is unreachable on our machines.
import { defineConfig } from '@playwright/test';

const CI = Boolean(process.env.CI);
// PORT moves the test server off 5173 (several worktrees may test at once on one machine).
const PORT = Number(process.env.PORT ?? 5173);

export default defineConfig({
  testDir: './tests',
  outputDir: './test-results',
  // Each page runs every policy of a scenario in wasm; on a 2-core machine one test at a time is fastest.
  workers: 1,
  fullyParallel: false,
  forbidOnly: CI,
  retries: CI ? 1 : 0,
  timeout: 300_000,
  expect: { timeout: 30_000 },
  reporter: [['list']],
  use: {
    baseURL: `http://127.0.0.1:${PORT}`,
    viewport: { width: 1280, height: 720 },
    trace: 'retain-on-failure',
    launchOptions: {
      executablePath: '/usr/bin/chromium',
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    },
  },
  webServer: {
    command: 'node ../scripts/serve.mjs',
    url: `http://127.0.0.1:${PORT}/`,
    reuseExistingServer: !CI,
    timeout: 30_000,
    stdout: 'pipe',
  },
});
