import { expect, test, type APIRequestContext, type Page } from './fixtures';
import { localMachine } from './runs';
import { startAgent, stopAgent } from './agents';
import { kernelOption, startRuns, sweepCustom } from './new-run';
import { shot, shotOf } from './screenshots';

// Issue "Runs you can trust to finish", browser part: sweeps from the New run page followed live over
// Server-Sent Events, cancel and retry from the run page, the batch page. No test skips itself: a
// missing or renamed route fails the test that needs it.

test.describe.configure({ mode: 'serial' });

/** run.sh's agent's machine id, once it is online. */
const localMachineId = async (request: APIRequestContext): Promise<string> => (await localMachine(request)).id;

/**
 * Every value the run page's progress bar takes, recorded in the page by a MutationObserver (so no
 * step is missed between two looks from the test), until the run ends.
 */
async function watchProgress(page: Page, timeoutMs: number): Promise<number[]> {
  await page.getByRole('progressbar').first().waitFor();
  await page.evaluate(() => {
    const bar = document.querySelector('[role="progressbar"]');
    const seen: number[] = [Number(bar?.getAttribute('aria-valuenow'))];
    (window as unknown as { progressSeen: number[] }).progressSeen = seen;
    if (bar) {
      new MutationObserver(() => {
        const v = Number(bar.getAttribute('aria-valuenow'));
        if (seen[seen.length - 1] !== v) seen.push(v);
      }).observe(bar, { attributes: true, attributeFilter: ['aria-valuenow'] });
    }
  });
  await expect(page.getByTestId('run-status')).toHaveText(/succeeded|failed|cancelled/, { timeout: timeoutMs });
  return page.evaluate(() => (window as unknown as { progressSeen: number[] }).progressSeen);
}

test('a sweep started from the New run page shows its progress live and succeeds', async ({ page, request }) => {
  const machine = await localMachineId(request);

  await page.goto(`/runs/new?machines=${machine}`);
  // Exactly the machine in the address is ticked (other tests may have left offline machines in the list).
  await expect(page.getByTestId('machine-option').getByRole('checkbox', { checked: true })).toHaveCount(1);
  await expect(page.locator(`[id="machine-${machine}"]`)).toBeChecked();
  await page.getByRole('checkbox', { name: /syscall\.getppid/ }).check();
  await page.getByRole('checkbox', { name: /lock\.go_mutex/ }).check();
  await sweepCustom(page, 'lock.go_mutex', 'procs', '1, 2, 4');
  await expect(kernelOption(page, 'lock.go_mutex').getByTestId('kernel-item-count')).toHaveText('3 items');
  await expect(page.getByTestId('item-count')).toHaveText(/^4 items from 2 kernels/);
  // Quick: 3 launches per item rather than the default profile's 7, the same progress to watch.
  await page.getByLabel('Profile').selectOption('quick');
  await page.getByLabel('Repetitions').fill('3');
  await page.getByLabel(/Min time/).fill('0.1');
  // The chosen kernel with its sweep (a full-page screenshot here made Chromium drop the next click).
  await shotOf(kernelOption(page, 'lock.go_mutex'), 'new-run-sweep.png');

  // Live, not polled: after the first load the page should not keep asking for the run.
  let runGets = 0;
  page.on('request', (r) => {
    if (r.method() === 'GET' && /\/api\/v1\/runs\/[0-9a-f-]{36}$/.test(r.url())) runGets += 1;
  });
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);

  // The page says it follows the run over the stream.
  await expect(page.getByTestId('live-mode').or(page.getByTestId('run-status').filter({ hasText: 'succeeded' }))).toBeVisible();
  const seen = await watchProgress(page, 90_000);
  await expect(page.getByTestId('run-status')).toHaveText('succeeded');
  expect(seen[seen.length - 1]).toBe(4);
  // Some step between nothing and everything was shown as it happened.
  expect(seen.some((v) => v > 0 && v < 4), `progress values seen: ${seen.join(', ')}`).toBe(true);
  await expect(page.getByTestId('result-row')).toHaveCount(4);
  expect(runGets, 'GET /runs/{id} requests while the run went on (polling would make dozens)').toBeLessThanOrEqual(3);
});

test('the quick profile thins a default sweep and the run page says which profile ran', async ({ page, request }) => {
  const machine = await localMachineId(request);

  await page.goto(`/runs/new?machines=${machine}&kernel=syscall.getppid&kernel=lock.go_mutex`);
  await page.getByLabel('Profile').selectOption('quick');
  const mutex = kernelOption(page, 'lock.go_mutex');
  await mutex.getByLabel('procs: value or sweep').selectOption('default');
  // lock.go_mutex's default procs sweep is 1, 2, 4, 8: quick keeps 1, 4, 8.
  await expect(mutex.getByTestId('sweep-points')).toContainText('1, 4, 8');
  await expect(page.getByTestId('item-count')).toHaveText(/^4 items/);
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);

  await expect(page.getByTestId('run-profile')).toHaveText('quick');
  await expect(page.getByTestId('run-status')).toHaveText('succeeded', { timeout: 90_000 });
  await expect(page.getByRole('progressbar')).toHaveAttribute('aria-valuenow', '4');
  await expect(page.getByTestId('result-row')).toHaveCount(4);
});

// Long enough to cancel while it runs, short enough to rerun: the quick profile's 3 launches per item,
// each 2 blocks of 0.05 s after its calibration, 15 launches for 5 items (the cancel comes within a few
// seconds of "running", the run takes several times that). Waits for the end allow 150 s: on a busy
// 2-CPU host with a second agent beside it, 0.5 s blocks took 90 s.
const LONG = { profile: 'quick', repetitions: '3', minTime: '0.05' } as const;
const RUN_END_MS = 150_000;

async function startLongRun(page: Page, machine: string) {
  await page.goto(`/runs/new?machines=${machine}&kernel=syscall.getppid&kernel=call.function&kernel=lock.go_mutex`);
  await sweepCustom(page, 'lock.go_mutex', 'procs', '1, 2, 4');
  await startRuns(page, { ...LONG, items: /^5 items/ });
  await expect(page.getByTestId('run-status')).toHaveText('running', { timeout: 30_000 });
}

/** Cancels the run from its page (confirming) and sees it cancelled within a few seconds. */
async function cancelOnPage(page: Page) {
  await page.getByRole('button', { name: 'Cancel run' }).click();
  await page.getByRole('button', { name: 'Yes, cancel' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('cancelled', { timeout: 5_000 });
}

test('a running run is cancelled from its page within a few seconds', async ({ page, request }) => {
  await startLongRun(page, await localMachineId(request));
  await cancelOnPage(page);
  await expect(page.getByRole('button', { name: 'Cancel run' })).toHaveCount(0);
});

test('a cancelled run is retried from its page and runs again to success', async ({ page, request }) => {
  test.setTimeout(240_000);
  await startLongRun(page, await localMachineId(request));
  await cancelOnPage(page);

  await page.getByRole('button', { name: /^Retry/ }).click();
  await expect(page.getByTestId('run-status')).toHaveText(/queued|running/, { timeout: 10_000 });
  await expect(page.getByTestId('run-status')).toHaveText('succeeded', { timeout: RUN_END_MS });
  await expect(page.getByRole('progressbar')).toHaveAttribute('aria-valuenow', '5');
  await expect(page.getByTestId('failed-count')).toHaveText('0');
  await expect(page.getByTestId('result-row')).toHaveCount(5);
  await shot(page, 'run-retried.png');
});

test('without the event stream the run page polls and still follows the run to the end', async ({ page, request }) => {
  const machine = await localMachineId(request);
  // A proxy that breaks Server-Sent Events: the browser gets an error instead of the stream.
  await page.route('**/api/v1/runs/*/events', (route) => route.fulfill({ status: 503, body: 'no streams here' }));
  await page.goto(`/runs/new?machines=${machine}&kernel=syscall.getppid&kernel=call.function`);
  // 2 items of 3 launches of 2 blocks of 0.2 s: several polls before it ends.
  await startRuns(page, { profile: 'quick', repetitions: '3', minTime: '0.2' });
  await expect(page.getByTestId('live-mode')).toHaveText('updating every 2 s');
  await expect(page.getByTestId('run-status')).toHaveText('succeeded', { timeout: 60_000 });
  await expect(page.getByTestId('result-row')).toHaveCount(2);
});

test('a batch has its own page with one live row per machine', async ({ page, request }) => {
  const machine = await localMachineId(request);
  // One local agent only: a batch of one machine still goes through the whole batch path.
  const created = await request.post('/api/v1/runs', {
    data: { machine_ids: [machine], items: [{ kernel: 'syscall.getppid', params: {} }], profile: 'quick', repetitions: 3, min_time_s: 0.05 },
  });
  expect(created.status()).toBe(201);
  const { batch_id } = (await created.json()) as { batch_id: string };

  await page.goto(`/batches/${batch_id}`);
  const row = page.getByTestId('batch-run');
  await expect(row).toHaveCount(1);
  await expect(row.getByTestId('run-status')).toHaveText('succeeded', { timeout: 60_000 });
  await expect(row.getByTestId('run-progress').getByRole('progressbar')).toHaveAttribute('aria-valuenow', '1');
  await shot(page, 'batch.png');
  await row.getByRole('link').first().click();
  await expect(page.getByTestId('batch-link')).toHaveAttribute('href', `/batches/${batch_id}`);
});

test('a sweep on two machines: both progress live, one is cancelled and retried', async ({ page, request }) => {
  test.setTimeout(300_000);
  const first = await localMachineId(request);
  // A second agent beside the one run.sh started: its own spool, so its own machine id.
  const { id: second, agent } = await startAgent(request, 'second', first);
  try {
    await page.goto(`/runs/new?machines=${first},${second}&kernel=syscall.getppid&kernel=lock.go_mutex`);
    await expect(page.getByTestId('machine-option').getByRole('checkbox', { checked: true })).toHaveCount(2);
    await sweepCustom(page, 'lock.go_mutex', 'procs', '1, 2, 4');
    const posted = page.waitForRequest((r) => r.method() === 'POST' && new URL(r.url()).pathname === '/api/v1/runs');
    await startRuns(page, { ...LONG, items: /^4 items per machine × 2 machines = 8 items/, machines: 2 });
    // A batch asks for its runs without their items: its page lists them so.
    expect(new URL((await posted).url()).searchParams.get('items')).toBe('false');

    const rows = page.getByTestId('batch-run');
    await expect(rows).toHaveCount(2);
    // By the machine's own cell: a row's other text ("started 5 seconds ago") may hold the word too.
    const secondMachine = page.getByTestId('batch-run-machine').filter({ hasText: /^second$/ });
    const other = rows.filter({ has: secondMachine });
    const local = rows.filter({ hasNot: secondMachine });
    await expect(other.getByTestId('run-status')).toHaveText('running', { timeout: 30_000 });
    await expect(local.getByTestId('run-status')).toHaveText(/running|succeeded/, { timeout: 30_000 });
    await shot(page, 'batch-two-machines.png');

    await other.getByRole('button', { name: 'Cancel' }).click();
    await other.getByRole('button', { name: 'Yes, cancel' }).click();
    await expect(other.getByTestId('run-status')).toHaveText('cancelled', { timeout: 5_000 });
    // The other machine's run is not touched.
    await expect(local.getByTestId('run-status')).not.toHaveText('cancelled');

    await other.getByRole('button', { name: 'Retry' }).click();
    await expect(other.getByTestId('run-status')).toHaveText(/queued|running/, { timeout: 10_000 });
    await expect(local.getByTestId('run-status')).toHaveText('succeeded', { timeout: RUN_END_MS });
    await expect(other.getByTestId('run-status')).toHaveText('succeeded', { timeout: RUN_END_MS });
    for (const row of [local, other]) {
      await expect(row.getByTestId('run-progress').getByRole('progressbar')).toHaveAttribute('aria-valuenow', '4');
    }
    await shot(page, 'batch-retried.png');
  } finally {
    await stopAgent(agent);
  }
});
