import { spawn, type ChildProcess } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ADMIN_TOKEN, E2E_DIR } from './credentials';
import { expect, signedOutPage, test } from './fixtures';
import { GRPC_PORT, HTTP_PORT } from './ports';

// Issue 27 item 4: the explorer with its server stopped under it. A stack of its own (run.sh: a real
// server and a real agent, on ports and a data directory beside the suite's), stopped mid-test: the
// machines' states turn unknown at once (not "online" under a late banner), a page whose code was not
// loaded says the server did not answer (not "Failed to fetch dynamically imported module"), and a run
// posted to no one says the server could not be reached (not "The server refused the run").

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const PORT = String(Number(HTTP_PORT) + 7);
const BASE = `http://127.0.0.1:${PORT}`;

function startStack(): ChildProcess {
  return spawn('bash', [resolve(ROOT, 'scripts/run.sh')], {
    env: {
      ...process.env,
      CTXBENCH_HTTP_PORT: PORT,
      CTXBENCH_GRPC_PORT: String(Number(GRPC_PORT) + 7),
      CTXBENCH_DATA_DIR: resolve(E2E_DIR, 'down-data'),
      CTXBENCH_AGENT_SPOOL: resolve(E2E_DIR, 'down-spool'),
      CTXBENCH_RUN_FRESH: '1',
      CTXBENCH_ADMIN_TOKEN: ADMIN_TOKEN,
      CTXBENCH_AGENT_NAME: 'going-away',
    },
    stdio: 'ignore',
  });
}

/** Stops run.sh (it stops its server and agent and waits for them) and waits until it has exited. */
async function stopStack(stack: ChildProcess): Promise<void> {
  if (stack.exitCode !== null) return;
  const gone = new Promise((done) => stack.once('exit', done));
  stack.kill('SIGTERM');
  await Promise.race([gone, new Promise((done) => setTimeout(done, 15_000))]);
}

test('with the server stopped: states unknown at once, a missing page and a lost POST say so (issue 27, 4)', async ({ browser }) => {
  test.setTimeout(150_000);
  const stack = startStack();
  const { context, page } = await signedOutPage(browser);
  try {
    // Up, signed in, the one agent online.
    await expect.poll(async () => (await page.request.get(`${BASE}/api/v1/health`).catch(() => null))?.status() ?? 0, { timeout: 60_000, intervals: [250] }).toBe(200);
    expect((await page.request.post(`${BASE}/api/v1/session`, { data: { token: ADMIN_TOKEN } })).status()).toBe(200);
    // New run's code and data loaded, a kernel chosen (the form keeps it in the address); then
    // Machines, the agent online.
    await page.goto(`${BASE}/runs/new`);
    // Opened right after the server answered, often before run.sh's agent has said Hello: the form
    // ticks the one machine once it is online (issue 27: a newcomer's first `make run`).
    await expect(page.getByRole('checkbox', { name: /^going-away/ })).toBeChecked({ timeout: 30_000 });
    await page.getByLabel('Search kernels').fill('getppid');
    await page.locator('[id="kernel-syscall.getppid"]').check();
    await expect(page).toHaveURL(/syscall\.getppid/);
    const nav = page.getByRole('navigation', { name: 'Main' });
    await nav.getByRole('link', { name: 'Machines', exact: true }).click();
    const state = page.getByTestId('machine-online');
    await expect(state).toHaveText('online', { timeout: 30_000 });
    // The machine's own page too (its code and data loaded), then back.
    const machineLink = page.getByTestId('machine-link').first();
    await machineLink.click();
    await expect(page.getByTestId('machine-name')).toHaveText('going-away');
    await page.goBack();
    await expect(state).toHaveText('online');

    // The server goes away under the open page: the state turns unknown within seconds (the push
    // channel drops, the refresh fails once), under a message that says why.
    await stopStack(stack);
    expect(stack.exitCode ?? stack.signalCode, 'the stack stopped').not.toBeNull();
    const stopped = Date.now();
    await expect(state).toHaveText('unknown', { timeout: 8_000 });
    console.log(`machine state unknown ${Date.now() - stopped} ms after the server stopped`);
    // run.sh stops its agent with the server: the last state the page heard may be either.
    await expect(state).toHaveAttribute('title', /^Last known: (online|offline)\. The server cannot be reached/);
    const alert = page.getByRole('alert');
    await expect(alert).toContainText('Could not refresh the machines: their states are unknown');
    await expect(alert).toContainText('Cannot reach the ctxbench server');

    // The machine's page says the same of it.
    await machineLink.click();
    await expect(page.getByTestId('machine-name')).toHaveText('going-away');
    await expect(page.getByTestId('machine-online')).toHaveText('unknown', { timeout: 8_000 });
    await page.goBack();

    // Back to the form (its code loaded, its choice in the address): a POST that reached no one is
    // not a refusal.
    await page.goBack();
    await expect(page.locator('[id="kernel-syscall.getppid"]')).toBeChecked();
    await expect(page.getByTestId('machine-option').getByTestId('machine-online')).toHaveText('unknown', { timeout: 8_000 });
    await page.getByRole('button', { name: /^Start/ }).click();
    const refusal = page.locator('#form-errors');
    await expect(refusal).toContainText('The server could not be reached, so the run may not have started:');
    await expect(refusal).toContainText(/Cannot reach the ctxbench server .*Is it running\?/);
    await expect(refusal).not.toContainText('refused');

    // A page whose code was never loaded: a sentence, and a way back once the server answers.
    await nav.getByRole('link', { name: 'Add hosts', exact: true }).click();
    await expect(page.getByRole('heading', { level: 1 })).toHaveText('The server did not answer');
    await expect(page.getByRole('alert')).toContainText("This page's code could not be loaded from the ctxbench server");
    await expect(page.locator('body')).not.toContainText('dynamically imported module');
    await expect(page.getByRole('button', { name: 'Reload' })).toBeVisible();
  } finally {
    await context.close();
    await stopStack(stack);
  }
});
