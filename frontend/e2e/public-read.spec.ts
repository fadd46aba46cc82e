import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { ADMIN_TOKEN, E2E_DIR } from './credentials';
import { expect, signedOutContext, test } from './fixtures';

// Issue 9 with CTXBENCH_PUBLIC_READ=true: a browser that never signed in reads (no detour to the
// sign-in page), and its first write is what asks it to sign in, coming back to the same page.
// A second stack of its own (server and agent on ports the kernel picks, port 0), so the main stack
// keeps the default (reads need a credential).

test.describe.configure({ mode: 'serial' });

const ROOT = resolve(E2E_DIR, '../..');
const DIR = resolve(E2E_DIR, 'public-read');
let server: ChildProcess | null = null;
let agent: ChildProcess | null = null;
let baseURL = '';

/** Starts the server on port 0 and reads the ports it got from its `ctxbench-server: ...` lines. */
async function startServer(): Promise<{ http: string; grpc: string }> {
  const child = spawn(resolve(ROOT, '.venv/bin/ctxbench-server'), [], {
    cwd: ROOT,
    env: {
      ...process.env,
      CTXBENCH_HTTP_HOST: '127.0.0.1',
      CTXBENCH_HTTP_PORT: '0',
      CTXBENCH_GRPC_HOST: '127.0.0.1',
      CTXBENCH_GRPC_PORT: '0',
      CTXBENCH_DATA_DIR: resolve(DIR, 'data'),
      CTXBENCH_FRONTEND_DIR: resolve(ROOT, 'build/frontend'),
      CTXBENCH_PUBLIC_READ: 'true',
      CTXBENCH_ADMIN_TOKEN: ADMIN_TOKEN,
    },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  server = child;
  let http = '';
  let grpc = '';
  const lines = createInterface({ input: child.stdout! });
  await new Promise<void>((done, fail) => {
    const timer = setTimeout(() => fail(new Error('the public-read server did not say where it listens in 60 s')), 60_000);
    child.once('exit', (code) => fail(new Error(`the public-read server exited (${code})`)));
    lines.on('line', (line) => {
      grpc ||= /^ctxbench-server: grpc listening on (\S+)$/.exec(line)?.[1] ?? '';
      http ||= /^ctxbench-server: http listening on (\S+)$/.exec(line)?.[1] ?? '';
      if (http && grpc) {
        clearTimeout(timer);
        done();
      }
    });
  });
  return { http, grpc };
}

test.beforeAll(async () => {
  rmSync(DIR, { recursive: true, force: true });
  const { http, grpc } = await startServer();
  baseURL = http;
  agent = spawn(
    resolve(ROOT, 'build/bin/ctxbench-agent'),
    ['--server', grpc, '--token-file', resolve(DIR, 'data/agent-token'), '--ca-file', resolve(DIR, 'data/tls/ca.pem'), '--kernels', resolve(ROOT, 'build/kernels'), '--spool', resolve(DIR, 'spool')],
    { env: { ...process.env, CTXBENCH_AGENT_NAME: 'public-read' }, stdio: 'ignore' },
  );
});

test.afterAll(async () => {
  for (const child of [agent, server]) {
    if (!child || child.exitCode !== null) continue;
    const gone = new Promise((done) => child.once('exit', done));
    child.kill('SIGTERM');
    await Promise.race([gone, new Promise((done) => setTimeout(done, 10_000))]);
  }
});

test('with public reads, a signed-out browser reads; its first write asks it to sign in and comes back', async ({ browser, playwright }) => {
  const { context, violations } = await signedOutContext(browser);
  const page = await context.newPage();
  await page.goto(`${baseURL}/machines`);
  const row = page.getByTestId('machine-row').filter({ hasText: 'public-read' });
  await expect(row.getByTestId('machine-online')).toHaveText('online', { timeout: 30_000 });
  expect(new URL(page.url()).pathname).toBe('/machines');
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Sign in' })).toBeVisible();

  // A write without a credential: refused (and nothing stored), and the browser goes to sign in.
  await row.getByRole('link', { name: /New run/ }).click();
  await expect(page).toHaveURL(/\/runs\/new\?machines=/);
  await page.getByRole('checkbox', { name: /syscall\.getppid/ }).check();
  // The page keeps its choices in its address: coming back after sign-in keeps them.
  await expect(page).toHaveURL(/kernel=syscall\.getppid/);
  const newRun = new URL(page.url());
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(new RegExp(`/signin\\?next=${encodeURIComponent(newRun.pathname + newRun.search).replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}$`));
  await expect(page.getByText('Reading is open on this server')).toBeVisible();
  const anonymous = await playwright.request.newContext({ baseURL, storageState: { cookies: [], origins: [] } });
  expect(((await (await anonymous.get('/api/v1/runs')).json()) as unknown[]).length).toBe(0);
  await anonymous.dispose();

  await page.getByLabel('Token').fill(ADMIN_TOKEN);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await expect(page).toHaveURL(`${baseURL}${newRun.pathname}${newRun.search}`);
  await expect(page.getByTestId('session-scope')).toHaveText('Signed in: admin');
  await page.getByRole('checkbox', { name: /syscall\.getppid/ }).check();
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/[^/?]+$/);
  expect(violations).toEqual([]);
  await context.close();
});
