import { expect, signedOutContext, test, type APIRequestContext, type Page } from './fixtures';
import type { ChildProcess } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fakeCompareAndShare } from './compare-fixture';
import { startAgent, stopAgent } from './agents';
import { startRuns, sweepCustom } from './new-run';
import { shot } from './screenshots';
import { localMachine } from './runs';
import { showSweeps } from './sweeps';

// Issue "The explorer: compare machines, kernels and sweeps side by side, and share the comparison".
// The story tests run against the real server and two real agents (run.sh's and one the test starts);
// none skips itself: a missing or renamed route fails the test that needs it.

test.describe.configure({ mode: 'serial' });


/** run.sh's agent and a second one this test starts (own spool, so its own machine id). */
async function twoMachines(request: APIRequestContext): Promise<{ first: string; second: string; agent: ChildProcess }> {
  const first = (await localMachine(request)).id;
  const { id: second, agent } = await startAgent(request, 'second', first);
  return { first, second, agent };
}

async function medians(page: Page): Promise<string[]> {
  return page.getByTestId('compare-median').allTextContents();
}

async function cellResultIds(page: Page): Promise<string[]> {
  return page.getByTestId('compare-cell').evaluateAll((els) => els.map((e) => e.getAttribute('data-result-id') ?? ''));
}

test('compare two real machines after a sweep, share it, and the share stays frozen after a new run', async ({ page, request, browser }) => {
  test.setTimeout(240_000);
  const { first, second, agent } = await twoMachines(request);
  try {
    // A small sweep on both machines from the New run page.
    await page.goto(`/runs/new?machines=${first},${second}&kernel=sched.yield`);
    await expect(page.getByTestId('machine-option').getByRole('checkbox', { checked: true })).toHaveCount(2);
    await page.getByLabel('Profile').selectOption('quick');
    await sweepCustom(page, 'sched.yield', 'threads', '1, 2, 4');
    await startRuns(page, { repetitions: '5', minTime: '0.02', items: /^3 items per machine × 2 machines = 6 items/, machines: 2 });
    const rows = page.getByTestId('batch-run');
    await expect(rows).toHaveCount(2);
    for (const row of await rows.all()) await expect(row.getByTestId('run-status')).toHaveText('succeeded', { timeout: 120_000 });

    // Compare these machines (the batch's results).
    await page.getByTestId('compare-batch').click();
    await expect(page).toHaveURL(/\/compare\?.*batch=/);
    const started = Date.now();
    await expect(page.getByTestId('compare-row')).toHaveCount(3);
    const loadMs = Date.now() - started;
    await expect(page.getByTestId('compare-machine-head')).toHaveCount(2);
    await expect(page.getByTestId('compare-ratio').first()).toHaveText(/\d.*×/);
    await showSweeps(page);
    await expect(page.getByTestId('sweep-chart')).toHaveCount(1);
    await expect(page.getByTestId('heatmap')).toBeVisible();
    await shot(page, 'compare.png');
    const frozen = await medians(page);
    const frozenIds = await cellResultIds(page);
    expect(frozen).toHaveLength(6);
    console.log(`compare table visible ${loadMs} ms after the page opened`);

    // Share: the link opens in a fresh browser context with the same numbers.
    await page.getByRole('button', { name: 'Share' }).click();
    const link = await page.getByTestId('share-link').inputValue();
    expect(link).toMatch(/\/s\/[0-9A-Za-z]{12,}$/);
    // Signed out: a colleague opening the link has no session (issue 9); no CSP violation either.
    const { context: fresh, violations } = await signedOutContext(browser);
    const shared = await fresh.newPage();
    const unauthorized: string[] = [];
    shared.on('response', (r) => {
      if (r.status() === 401) unauthorized.push(r.url());
    });
    await shared.goto(link);
    await expect(shared.getByTestId('frozen-banner')).toContainText('these numbers will not change');
    await expect(shared.getByTestId('compare-row')).toHaveCount(3);
    expect(await medians(shared)).toEqual(frozen);
    await expect(shared.getByRole('button', { name: 'Share' })).toHaveCount(0);
    await expect(shared.locator('details.pickers')).toHaveCount(0);

    // Another run on the same machines.
    const created = await request.post('/api/v1/runs', {
      data: { machine_ids: [first, second], profile: 'quick', repetitions: 5, min_time_s: 0.02, items: [{ kernel: 'sched.yield', params: {}, sweep: { threads: [1, 2, 4] } }] },
    });
    expect(created.status()).toBe(201);
    const { batch_id } = (await created.json()) as { batch_id: string };
    await expect
      .poll(async () => ((await (await request.get(`/api/v1/runs?batch_id=${batch_id}`)).json()) as { status: string }[]).map((r) => r.status).join(','), {
        timeout: 120_000,
        intervals: [250],
      })
      .toBe('succeeded,succeeded');

    // The share did not change.
    await shared.reload();
    await expect(shared.getByTestId('compare-row')).toHaveCount(3);
    expect(await medians(shared)).toEqual(frozen);
    expect(await cellResultIds(shared)).toEqual(frozenIds);
    expect(unauthorized, 'requests answered 401 on the share page').toEqual([]);
    expect(shared.url()).toBe(link);
    expect(violations).toEqual([]);
    await fresh.close();

    // The live comparison of the same machines (from the machines page) shows the new results.
    await page.goto('/machines');
    for (const id of [first, second]) await page.locator(`[data-machine-id="${id}"]`).getByTestId('machine-select').check();
    await page.getByTestId('compare-selected').click();
    await expect(page).toHaveURL(/\/compare\?machines=/);
    await page.getByText('Choose machines, kernels, baseline and runs').click();
    await page.getByLabel('Kernels').fill('sched.yield');
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect(page.getByTestId('compare-row')).toHaveCount(3);
    const liveIds = await cellResultIds(page);
    const newRuns = (await (await request.get(`/api/v1/runs?batch_id=${batch_id}`)).json()) as { id: string }[];
    const newIds = new Set<string>();
    for (const r of newRuns) for (const res of (await (await request.get(`/api/v1/runs/${r.id}/results`)).json()) as { id: string }[]) newIds.add(res.id);
    expect(liveIds.every((id) => newIds.has(id)), `live cells ${liveIds.join(',')} should be the new run's results`).toBe(true);
    expect(liveIds.some((id) => frozenIds.includes(id))).toBe(false);
  } finally {
    await stopAgent(agent);
  }
});

test('the machine picker narrows by a label selector kept in the address', async ({ page, request }) => {
  test.setTimeout(90_000);
  const local = await localMachine(request);
  const { id, agent } = await startAgent(request, 'pw-cmp-labelled', local.id, ['--label', 'tier=e2e-cmp', '--label', 'rack=r9']);
  const option = (mid: string) => page.getByTestId('compare-machine-option').filter({ has: page.locator(`#cmp-${mid}`) });
  try {
    await page.goto('/compare');
    await expect(option(id)).toHaveCount(1);
    await expect(option(local.id)).toHaveCount(1);

    // k=v: only the labelled machine; the address holds the selector, readable.
    await page.getByTestId('compare-selector').fill('tier=e2e-cmp,rack');
    await page.getByTestId('compare-selector').press('Enter');
    await expect(page).toHaveURL(/[?&]selector=tier=e2e-cmp,rack(&|$)/);
    await expect(page.getByTestId('compare-selector-count')).toContainText('1 of');
    await expect(page.getByTestId('compare-machine-option')).toHaveCount(1);
    await expect(option(id)).toHaveCount(1);

    // A machine chosen under the filter, then the filter reversed (!k): the chosen one stays, marked.
    // The box is controlled by the address, which the router commits a moment after the click: click,
    // then wait for it checked (check() reads the box at once and calls an unchanged one a failure).
    await page.locator(`#cmp-${id}`).click();
    await expect(page.locator(`#cmp-${id}`)).toBeChecked();
    await expect(page).toHaveURL(new RegExp(`machines=${id}`));
    await page.getByTestId('compare-selector').fill('!tier');
    await page.getByTestId('compare-selector').press('Enter');
    await expect(page).toHaveURL(/[?&]selector=!tier(&|$)/);
    await expect(option(local.id)).toHaveCount(1);
    await expect(option(id)).toContainText('chosen, not matching the labels');

    // The address is the view: a reload keeps the selector and the choice.
    await page.reload();
    await expect(page.getByTestId('compare-selector')).toHaveValue('!tier');
    await expect(page.locator(`#cmp-${id}`)).toBeChecked();
    await expect(option(local.id)).toHaveCount(1);

    // k!=v and a malformed selector (the server's 422 names it); Clear lists every machine again.
    await page.getByTestId('compare-selector').fill('rack!=r9');
    await page.getByTestId('compare-selector').press('Enter');
    await expect(option(id)).toContainText('chosen, not matching the labels');
    await page.getByTestId('compare-selector').fill('bad key');
    await page.getByTestId('compare-selector').press('Enter');
    await expect(page.getByRole('alert')).toContainText(/Cannot filter by these labels:.*selector/);
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect(page).not.toHaveURL(/selector=/);
    await expect(option(local.id)).toHaveCount(1);
    await expect(option(id)).not.toContainText('not matching');
  } finally {
    await stopAgent(agent);
    await expect.poll(async () => (await request.delete(`/api/v1/machines/${id}`)).status(), { timeout: 20_000 }).toBe(204);
  }
});

test('an unknown machine in the compare address is named in a message', async ({ page }) => {
  await page.goto('/compare?machines=no-such-machine-1,no-such-machine-2');
  await expect(page.getByTestId('compare-error')).toContainText('no-such-machine-1');
  await expect(page.getByRole('heading', { name: 'Compare' })).toBeVisible();
});

test('an unknown or malformed share slug is a not-found page', async ({ page }) => {
  await page.goto('/s/not-a-slug');
  await expect(page.getByRole('heading', { name: 'Share not found' })).toBeVisible();
  await page.goto('/s/AAAAAAAAAAAAAAAAAAAAAA');
  await expect(page.getByRole('heading', { name: 'Share not found' })).toBeVisible();
});

test('the compare page draws a comparison: marks, warnings, sort, charts, samples, exports, share', async ({ page }) => {
  // The server's answer is fixed here (contract shape) so the drawing is checked whatever the server has.
  const fake = await fakeCompareAndShare(page, 'Fixture0Slug01');

  const opened = Date.now();
  await page.goto('/compare?machines=m-a,m-b&baseline=m-a');
  const rows = page.getByTestId('compare-row');
  await expect(rows).toHaveCount(5);
  const usableMs = Date.now() - opened;
  await showSweeps(page);
  await expect(page.getByTestId('sweep-chart').locator('svg.recharts-surface').first()).toBeVisible();
  console.log(`compare page (fixed answer): table ${usableMs} ms, charts ${Date.now() - opened} ms after navigation`);
  // The 1 s budget (about 0.8 s on the dev VM, cold browser context) is a figure to watch in this line,
  // not an assertion: on a busy CI machine a timed check fails for reasons the page does not have.
  // Kernel order: sched (1, 2, 4 threads), storage, syscall.
  await expect(rows.first()).toHaveAttribute('data-params', 'placement=same_core&threads=1');
  await expect(rows.nth(2).getByTestId('compare-ratio').getByTestId('ratio-value')).toHaveText('1.63×');
  await expect(rows.nth(2).getByTestId('significant')).toBeVisible();
  // Each interval says what it is, and each ratio which rule decided it (issue 11).
  await expect(rows.nth(2).getByTestId('cell-ci-kind').first()).toHaveText('min–max');
  await expect(rows.nth(2).getByTestId('ratio-ci-kind')).toHaveText('CI < 95 %');
  await expect(rows.nth(2).getByTestId('ratio-rule')).toHaveText('beyond 5 % noise');
  await expect(rows.filter({ hasText: 'syscall.getppid' }).getByTestId('ratio-rule')).toHaveText('within 5 % noise');
  await expect(rows.filter({ hasText: 'syscall.getppid' }).getByTestId('cell-ci-kind').first()).toHaveText('CI');
  const storage = rows.filter({ hasText: 'storage.write' });
  await expect(storage.getByTestId('row-warning')).toContainText('units differ');
  await expect(storage.getByTestId('compare-ratio')).toHaveText('—');
  await expect(rows.filter({ hasText: 'syscall.getppid' }).getByTestId('noisy')).toBeVisible();
  await expect(page.getByTestId('compare-geomean')).toHaveCount(4);
  await expect(page.getByTestId('geomean-ratio').last()).toHaveText('1.20×');

  // The kernel picker writes the address (and the page asks the API for those kernels).
  const asked = page.waitForRequest((r) => r.url().includes('/api/v1/compare?') && r.url().includes('kernels=sched.*,syscall.getppid'));
  await page.getByText('Choose machines, kernels, baseline and runs').click();
  await page.getByLabel('Kernels').fill('sched.*, syscall.getppid');
  await page.getByRole('button', { name: 'Apply' }).click();
  await expect(page).toHaveURL(/kernels=sched\.\*,syscall\.getppid/);
  await asked;

  // Sort by ratio: the URL says so, and the order follows.
  await page.getByRole('button', { name: /beta \/ alpha/ }).click();
  await expect(page).toHaveURL(/sort=ratio&sortm=m-b/);
  await expect(rows.first()).toContainText('syscall.getppid');
  await page.getByRole('button', { name: /beta \/ alpha/ }).click();
  await expect(page).toHaveURL(/sort=-ratio/);
  await expect(rows.first()).toHaveAttribute('data-params', 'placement=same_core&threads=4');

  // Heatmap, facts diff with hints, a sweep chart with the seed's point and a log scale.
  await expect(page.getByTestId('heat-cell')).toHaveCount(10);
  await expect(page.getByTestId('fact-diff')).toHaveCount(2);
  await expect(page.getByTestId('facts-diff')).toContainText('syscall costs depend on mitigations');
  await showSweeps(page);
  const chart = page.getByTestId('sweep-chart');
  await expect(chart).toHaveCount(1);
  await expect(chart.locator('svg.recharts-surface').first()).toBeVisible();
  await expect(chart.getByTestId('seed-note')).toContainText('seed 001');
  // One line and one CI band per machine.
  await expect(chart.locator('path.recharts-line-curve')).toHaveCount(2);
  await expect(chart.locator('path.recharts-area-area')).toHaveCount(2);
  await page.getByRole('radio', { name: 'log' }).click();
  await expect(page).toHaveURL(/scale=log/);

  // A cell's samples.
  await rows.first().getByTestId('compare-median').first().click();
  await expect(page).toHaveURL(/cell=sched\.yield/);
  await expect(page.getByTestId('distribution')).toBeVisible();
  await expect(page.getByTestId('sample-counts')).toHaveText('alpha: 7 samples · beta: 7 samples');
  // The whole view comes back from its address.
  await page.reload();
  await expect(page.getByTestId('distribution')).toBeVisible();
  await showSweeps(page);
  await expect(page.getByRole('radio', { name: 'log' })).toBeChecked();

  // Exports: CSV and JSON of the table, PNG of a chart.
  const csv = page.waitForEvent('download');
  await page.getByTestId('export-csv').click();
  const csvPath = await (await csv).path();
  const csvText = readFileSync(csvPath, 'utf8');
  expect(csvText.split('\n')[0]).toMatch(/^kernel,family,params,unit,machine_id/);
  expect(csvText).toContain('sched.yield,sched,placement=same_core&threads=4,ns/op,m-b,beta,false,2600');
  const json = page.waitForEvent('download');
  await page.getByTestId('export-json').click();
  expect(JSON.parse(readFileSync(await (await json).path(), 'utf8')).compare.rows).toHaveLength(5);
  const png = page.waitForEvent('download');
  await chart.getByTestId('chart-png').click();
  const pngFile = await png;
  expect(pngFile.suggestedFilename()).toMatch(/\.png$/);
  expect(readFileSync(await pngFile.path()).subarray(1, 4).toString()).toBe('PNG');
  await shot(page, 'compare-drawn.png');

  // Share: the frozen page draws the same table, read-only.
  await page.getByRole('button', { name: 'Share' }).click();
  await expect(page.getByTestId('share-link')).toHaveValue(/\/s\/Fixture0Slug01$/);
  expect(fake.view()).toMatchObject({ machines: ['m-a', 'm-b'], baseline: 'm-a', sort: '-ratio', scale: 'log' });
  const before = await medians(page);
  await page.goto('/s/Fixture0Slug01');
  await expect(page.getByTestId('frozen-banner')).toHaveText(/^Frozen on \d{4}-\d{2}-\d{2} [\d:]+: these numbers will not change/);
  await expect(page.getByTestId('compare-row')).toHaveCount(5);
  expect(await medians(page)).toEqual(before);
  await expect(page.getByRole('button', { name: 'Share' })).toHaveCount(0);
});

test('the kernels page searches the catalog from its address and links to a run', async ({ page }) => {
  await page.goto('/kernels?q=getppid');
  await expect(page.getByTestId('kernel-card')).toHaveCount(1, { timeout: 30_000 });
  await expect(page.getByTestId('kernel-card')).toContainText('syscall.getppid');
  await expect(page.getByTestId('seed-reference')).toContainText('Seed 000');
  await shot(page, 'kernels.png');
  await page.getByLabel('Search').fill('yield threads');
  await expect(page).toHaveURL(/q=yield\+threads/);
  await expect(page.getByTestId('kernel-card').filter({ hasText: 'sched.yield' })).toBeVisible();
  await page.getByTestId('kernel-card').filter({ hasText: 'sched.yield' }).getByTestId('run-this').click();
  await expect(page).toHaveURL(/\/runs\/new\?.*kernel=sched\.yield/);
  await expect(page.getByRole('checkbox', { name: /sched\.yield/ })).toBeChecked();
});

test('a machine has its own page with its facts grouped and its runs', async ({ page }) => {
  await page.goto('/machines');
  const row = page.getByTestId('machine-row').filter({ has: page.getByTestId('machine-online').getByText('online', { exact: true }) }).first();
  await expect(row).toBeVisible({ timeout: 30_000 });
  await row.getByTestId('machine-link').click();
  await expect(page).toHaveURL(/\/machines\/[^/]+$/);
  await expect(page.getByTestId('fact-group').getByRole('heading', { name: 'CPU', exact: true })).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Runs' })).toBeVisible();
  await shot(page, 'machine.png');
});
