import { defineConfig } from '@playwright/test';
import { ADMIN_STATE, ADMIN_TOKEN, DIST_DIR, E2E_DIR, RUN_LOG } from './e2e/credentials';
import { GRPC_PORT, HTTP_PORT } from './e2e/ports';

// Browser tests drive Debian's Chromium (no browser download) against the real stack: scripts/run.sh
// starts the server and a local agent on their own ports and a fresh data directory. The server gets
// a known admin token; the global setup signs in with it once, and every spec's browser starts from
// that session (auth.spec.ts makes its own signed-out contexts). run.sh's output is also kept in
// RUN_LOG, where the server's one-time sign-in link is read from.
const baseURL = `http://127.0.0.1:${HTTP_PORT}`;
// `make test` runs the specs in two halves side by side, each on a stack of its own: the first names its
// files, the second leaves them out with CTXBENCH_E2E_IGNORE (a regular expression on the path).
const ignore = process.env.CTXBENCH_E2E_IGNORE;

export default defineConfig({
  testDir: './e2e',
  ...(ignore ? { testIgnore: new RegExp(ignore) } : {}),
  outputDir: `${E2E_DIR}/test-results`,
  fullyParallel: false,
  workers: 1,
  retries: 0,
  timeout: 120_000,
  expect: { timeout: 10_000 },
  forbidOnly: !!process.env.CI,
  reporter: [['list'], ['./e2e/failure-summary.ts']],
  globalSetup: './e2e/global-setup.ts',
  use: {
    baseURL,
    storageState: ADMIN_STATE,
    browserName: 'chromium',
    headless: true,
    // A step that hangs fails at that step, naming it, rather than as the whole test's timeout.
    actionTimeout: 30_000,
    navigationTimeout: 30_000,
    // A failed test keeps its trace: the DOM before and after each step, without the screencast, whose
    // frames cost the browser CPU in every test that passes (the failure's screenshot is kept anyway).
    trace: { mode: 'retain-on-failure', screenshots: false },
    screenshot: 'only-on-failure',
    launchOptions: {
      executablePath: process.env.CTXBENCH_CHROMIUM ?? '/usr/bin/chromium',
      args: [
        '--no-sandbox',
        '--headless',
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
    command: `mkdir -p '${E2E_DIR}' && bash -o pipefail -c "bash ../scripts/run.sh | tee '${RUN_LOG}'"`,
    url: `${baseURL}/api/v1/health`,
    reuseExistingServer: false,
    timeout: 120_000,
    stdout: 'pipe',
    stderr: 'pipe',
    env: {
      CTXBENCH_HTTP_PORT: HTTP_PORT,
      CTXBENCH_GRPC_PORT: GRPC_PORT,
      CTXBENCH_DATA_DIR: `${E2E_DIR}/data`,
      CTXBENCH_AGENT_SPOOL: `${E2E_DIR}/spool`,
      CTXBENCH_RUN_FRESH: '1',
      CTXBENCH_ADMIN_TOKEN: ADMIN_TOKEN,
      CTXBENCH_DIST_DIR: DIST_DIR,
    },
  },
});
