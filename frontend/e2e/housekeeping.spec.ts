import { expect, test, type APIRequestContext, type Page } from './fixtures';
import { readFileSync } from 'node:fs';
import { startAgent, stopAgent } from './agents';
import { localMachine, postRun, runToSuccess } from './runs';
import { shot } from './screenshots';

// Issue 13, what remained: runs that say how long (elapsed, per-item duration, ETA), host housekeeping
// (rename and delete machines, title, note and delete runs and batches, run export), the first page's
// next steps, and the kernel column kept in view on a phone. Real server, real agents.
// Kernels: syscall.getppid and call.function only, on the local machine (later specs expect others
// unmeasured); the machine deleted here is an agent of this spec's own.

type RunJson = { id: string; status: string; batch_id: string; name: string | null; note: string | null };

async function getRun(request: APIRequestContext, id: string): Promise<RunJson> {
  return (await (await request.get(`/api/v1/runs/${id}`)).json()) as RunJson;
}

async function noSidewaysScroll(page: Page): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}

test('a running run shows elapsed and an ETA; finished, what it and each item took; it can be titled, noted, exported and deleted', async ({ page, request }) => {
  test.setTimeout(180_000);
  const machine = await localMachine(request);
  // Two kernels, 3 launches each of 2 repetitions at 0.2 s (after as much calibrating): seconds of
  // measuring, long enough to watch.
  const runId = await postRun(request, {
    machine_id: machine.id,
    launches: 3,
    repetitions: 3,
    min_time_s: 0.2,
    items: [{ kernel: 'syscall.getppid' }, { kernel: 'call.function' }],
  });
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('running', { timeout: 30_000 });
  const eta = page.getByTestId('run-eta');
  await expect(eta).toHaveText(/^(about \d+ (s|min) left|a few seconds left|any moment now)/);
  await expect(page.getByTestId('run-elapsed')).toHaveText(/\d/);
  await expect(page.getByTestId('run-took')).toHaveCount(0);
  await shot(page, 'run-eta.png');

  await expect(page.getByTestId('run-status')).toHaveText('succeeded', { timeout: 90_000 });
  // Finished: no ETA; the run's duration and each item's, from its launches' wall time.
  await expect(eta).toHaveCount(0);
  await expect(page.getByTestId('run-elapsed')).toHaveCount(0);
  await expect(page.getByTestId('run-took')).toHaveText(/^\d[\d.]* s$|min/);
  const took = page.getByTestId('item-duration');
  await expect(took).toHaveCount(2);
  for (const cell of await took.all()) await expect(cell).toHaveText(/^\d[\d.]* (s|ms)$/);

  // Title and note: on the page, kept by the server, shown in the runs list.
  await page.getByTestId('edit-run-title').click();
  await page.getByLabel('Title', { exact: true }).fill('baseline before tuning');
  await page.getByLabel('Note', { exact: true }).fill('governor: powersave\nSMT on');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByTestId('run-title')).toHaveText('baseline before tuning');
  await expect(page.getByTestId('run-note')).toHaveText('governor: powersave\nSMT on');
  expect(await getRun(request, runId)).toMatchObject({ name: 'baseline before tuning', note: 'governor: powersave\nSMT on' });
  await page.reload();
  await expect(page.getByTestId('run-title')).toHaveText('baseline before tuning');
  await page.goto('/runs');
  const row = page.getByTestId('run-row').filter({ hasText: 'baseline before tuning' });
  await expect(row.getByTestId('run-row-note')).toContainText('governor: powersave');

  // Export: the results as CSV (one line per item) and JSON (run and results with their samples).
  await row.getByTestId('run-link').click();
  const [csv] = await Promise.all([page.waitForEvent('download'), page.getByTestId('run-export-csv').click()]);
  expect(csv.suggestedFilename()).toMatch(/^ctxbench-run-[0-9a-f]{8}-.*\.csv$/);
  const lines = readFileSync((await csv.path())!, 'utf8').trimEnd().split('\n');
  expect(lines[0]).toMatch(/^run_id,run_name,machine_id,item,kernel,/);
  expect(lines.slice(1).map((l) => l.split(',')[4])).toEqual(['syscall.getppid', 'call.function']);
  const [json] = await Promise.all([page.waitForEvent('download'), page.getByTestId('run-export-json').click()]);
  const exported = JSON.parse(readFileSync((await json.path())!, 'utf8')) as { run: RunJson; results: { samples: number[] }[] };
  expect(exported.run.id).toBe(runId);
  expect(exported.results).toHaveLength(2);
  expect(exported.results[0]!.samples.length).toBeGreaterThan(0);

  // Delete: asked once more, then gone (the server answers 404 for it and its results).
  await page.getByTestId('delete-run').click();
  await expect(page.getByTestId('delete-run-confirm')).toContainText('2 results');
  await page.getByRole('button', { name: 'Yes, delete run' }).click();
  await expect(page).toHaveURL(/\/runs$/);
  expect((await request.get(`/api/v1/runs/${runId}`)).status()).toBe(404);
  await expect(page.getByTestId('run-row').filter({ hasText: 'baseline before tuning' })).toHaveCount(0);
});

test('a batch gets a title and a note and is deleted with its runs', async ({ page, request }) => {
  const machine = await localMachine(request);
  const created = await request.post('/api/v1/runs', {
    data: { machine_ids: [machine.id], profile: 'quick', repetitions: 2, min_time_s: 0.02, items: [{ kernel: 'syscall.getppid' }] },
  });
  expect(created.status()).toBe(201);
  const { batch_id, runs } = (await created.json()) as { batch_id: string; runs: RunJson[] };
  await expect.poll(async () => (await getRun(request, runs[0]!.id)).status, { timeout: 60_000, intervals: [250] }).toBe('succeeded');
  await page.goto(`/batches/${batch_id}`);
  await page.getByTestId('edit-batch-title').click();
  await page.getByLabel('Title', { exact: true }).fill('x'.repeat(250)); // the field stops at the column's 200
  await expect(page.getByLabel('Title', { exact: true })).toHaveValue('x'.repeat(200));
  await page.getByLabel('Title', { exact: true }).fill('nightly getppid');
  await page.getByLabel('Note', { exact: true }).fill('cron at 03:00');
  await page.getByRole('button', { name: 'Save' }).click();
  await expect(page.getByTestId('batch-title')).toHaveText('nightly getppid');
  await expect(page.getByTestId('batch-note')).toHaveText('cron at 03:00');
  await page.reload();
  await expect(page.getByTestId('batch-title')).toHaveText('nightly getppid');
  // The runs list and the run page name the batch by its title.
  await page.goto('/runs');
  await expect(page.getByTestId('run-batch').filter({ hasText: 'nightly getppid' })).toHaveCount(1);
  await page.goto(`/runs/${runs[0]!.id}`);
  await expect(page.getByTestId('batch-link')).toHaveText('nightly getppid');
  await page.getByTestId('batch-link').click();
  await expect(page.getByTestId('batch-title')).toHaveText('nightly getppid');

  await page.getByTestId('delete-batch').click();
  await page.getByRole('button', { name: 'Yes, delete batch' }).click();
  await expect(page).toHaveURL(/\/runs$/);
  expect((await request.get(`/api/v1/batches/${batch_id}`)).status()).toBe(404);
  expect((await request.get(`/api/v1/runs/${runs[0]!.id}`)).status()).toBe(404);
});

test('a machine is renamed (its id stays), refused deletion while online, then deleted with its runs by typing its name', async ({ page, request }) => {
  test.setTimeout(150_000);
  const local = await localMachine(request);
  const { id, agent } = await startAgent(request, 'pw-doomed', local.id);
  try {
    const runId = await runToSuccess(request, id, [{ kernel: 'syscall.getppid', params: {} }]);

    await page.goto(`/machines/${id}`);
    await page.getByTestId('rename-machine').click();
    await page.getByLabel('Display name', { exact: true }).fill('rack 7 (to retire)');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.getByTestId('machine-name')).toHaveText('rack 7 (to retire)');
    await expect(page.getByText('its agent calls it pw-doomed')).toBeVisible();
    expect(((await (await request.get(`/api/v1/machines/${id}`)).json()) as { name: string }).name).toBe('rack 7 (to retire)');
    await page.goto('/machines');
    await expect(page.locator(`[data-machine-id="${id}"]`).getByTestId('machine-link')).toHaveText('rack 7 (to retire)');
    await shot(page, 'machines.png');

    // Online: the button says why not, and the server refuses too.
    await page.goto(`/machines/${id}`);
    await expect(page.getByTestId('delete-machine')).toBeDisabled();
    await expect(page.getByTestId('delete-machine')).toHaveAttribute('title', /agent is connected/);
    expect((await request.delete(`/api/v1/machines/${id}`)).status()).toBe(409);

    await stopAgent(agent);
    await expect(page.getByTestId('delete-machine')).toBeEnabled({ timeout: 20_000 });
    await page.getByTestId('delete-machine').click();
    const confirm = page.getByRole('button', { name: 'Yes, delete machine' });
    await expect(confirm).toBeDisabled();
    await page.getByLabel('Type rack 7 (to retire) to confirm').fill('rack 7');
    await expect(confirm).toBeDisabled();
    await page.getByLabel('Type rack 7 (to retire) to confirm').fill('rack 7 (to retire)');
    await confirm.click();
    await expect(page).toHaveURL(/\/machines$/);
    await expect(page.locator(`[data-machine-id="${id}"]`)).toHaveCount(0);
    await expect(page.locator(`[data-machine-id="${local.id}"]`)).toHaveCount(1);
    expect((await request.get(`/api/v1/machines/${id}`)).status()).toBe(404);
    expect((await request.get(`/api/v1/runs/${runId}`)).status()).toBe(404);
  } finally {
    await stopAgent(agent);
  }
});

test('on a phone the kernel column stays in view while a wide table scrolls, and the page never scrolls sideways', async ({ page, request }) => {
  const machine = await localMachine(request);
  const runId = await runToSuccess(request, machine.id, [{ kernel: 'syscall.getppid', params: {} }, { kernel: 'call.function', params: {} }]);
  await page.setViewportSize({ width: 390, height: 844 });
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('result-row')).toHaveCount(2);
  const wrap = page.locator('.table-wrap').filter({ has: page.getByTestId('result-row') });
  const kernel = page.getByTestId('result-row').first().locator('td.col-kernel');
  const before = (await kernel.boundingBox())!;
  const wrapBox = (await wrap.boundingBox())!;
  await wrap.evaluate((e) => (e.scrollLeft = e.scrollWidth));
  expect(await wrap.evaluate((e) => e.scrollLeft)).toBeGreaterThan(100);
  const after = (await kernel.boundingBox())!;
  expect(Math.abs(after.x - wrapBox.x)).toBeLessThan(3); // pinned at the box's left edge
  expect(after.x).toBeGreaterThanOrEqual(before.x - 3);
  await expect(kernel).toBeInViewport();
  // Scrolled to the median, it shows beside the pinned kernel, not under it.
  const median = page.getByTestId('result-median').first();
  await median.scrollIntoViewIfNeeded();
  await expect(median).toBeInViewport();
  const [k, m] = [(await kernel.boundingBox())!, (await median.boundingBox())!];
  expect(m.x).toBeGreaterThanOrEqual(k.x + k.width - 1);
  await noSidewaysScroll(page);
  // The items table too.
  const items = page.locator('.table-wrap').filter({ has: page.getByTestId('run-item') });
  await items.scrollIntoViewIfNeeded();
  await items.evaluate((e) => (e.scrollLeft = e.scrollWidth));
  const itemKernel = page.getByTestId('run-item').first().locator('td.col-kernel');
  await expect(itemKernel).toBeInViewport();
  const [ik, iw] = [(await itemKernel.boundingBox())!, (await items.boundingBox())!];
  expect(ik.x).toBeGreaterThanOrEqual(iw.x - 1);
  await noSidewaysScroll(page);
});

test('a read-only session sees titles and notes but no edit or delete controls', async ({ browser, request }) => {
  const machine = await localMachine(request);
  const [run] = (await (await request.get(`/api/v1/runs?machine_id=${machine.id}&status=succeeded&limit=1&items=false`)).json()) as RunJson[];
  expect((await request.patch(`/api/v1/runs/${run!.id}`, { data: { note: 'read me' } })).status()).toBe(200);
  const token = ((await (await request.post('/api/v1/tokens', { data: { name: 'pw-reader', scope: 'read' } })).json()) as { token: string }).token;
  const context = await browser.newContext({ storageState: { cookies: [], origins: [] } });
  try {
    expect((await context.request.post('/api/v1/session', { data: { token } })).status()).toBe(200);
    const page = await context.newPage();
    await page.goto(`/runs/${run!.id}`);
    await expect(page.getByTestId('run-note')).toHaveText('read me');
    await expect(page.getByTestId('result-row').first()).toBeVisible();
    await expect(page.getByTestId('edit-run-title')).toHaveCount(0);
    await expect(page.getByTestId('delete-run')).toHaveCount(0);
    await page.goto(`/machines/${machine.id}`);
    await expect(page.getByTestId('machine-name')).toBeVisible();
    await expect(page.getByTestId('rename-machine')).toHaveCount(0);
    await expect(page.getByTestId('delete-machine')).toHaveCount(0);
  } finally {
    await context.close();
  }
});

test('the first page says what to do next when nothing has run yet', async ({ page, request }) => {
  const machine = await localMachine(request);
  await page.goto('/');
  await expect(page.getByTestId('machine-row').first()).toBeVisible();
  await expect(page.getByTestId('getting-started')).toHaveCount(0); // runs exist (the test above left one)
  // A fresh server: machines, no run yet.
  await page.route(/\/api\/v1\/runs\?limit=200&items=false$/, (route) => route.fulfill({ json: [] }));
  await page.reload();
  const next = page.getByTestId('getting-started');
  await expect(next).toBeVisible();
  await expect(next.getByTestId('start-first-run')).toHaveText(`Start a run on ${machine.name}`);
  await expect(next.getByTestId('add-first-host')).toHaveAttribute('href', '/hosts');
  await next.getByTestId('start-first-run').click();
  await expect(page).toHaveURL(new RegExp(`/runs/new\\?machines=${machine.id}`));
  // No machine at all: adding a host comes first.
  await page.route(/\/api\/v1\/machines$/, (route) => route.fulfill({ json: [] }));
  await page.goto('/');
  await expect(page.getByRole('heading', { name: 'No machines yet' })).toBeVisible();
  await expect(page.getByTestId('add-first-host')).toHaveAttribute('href', '/hosts');
});
