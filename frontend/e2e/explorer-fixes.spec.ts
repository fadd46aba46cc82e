import { expect, test, type APIRequestContext, type Page } from './fixtures';
import { kernelOption } from './new-run';
import { localMachine, postRun } from './runs';
import { readFileSync } from 'node:fs';
import { COMPARE_FIXTURE, fakeCompareAndShare } from './compare-fixture';
import { showSweeps } from './sweeps';

// Issue 13 "The explorer people live in", its numbered problems 1, 2 and 8: a chart's PNG is the chart,
// "Run again…" repeats the run, Cancel asks first and a cancelled run says so. The run tests use the
// real server and run.sh's real agent; none skips itself.

test.describe.configure({ mode: 'serial' });

interface RunBody {
  id: string;
  status: string;
  profile: string;
  repetitions: number | null;
  min_time_s: number | null;
  request: Record<string, unknown>;
  items: { kernel: string; params: Record<string, unknown>; state: string }[];
}

/** run.sh's agent's machine id, once it is online. */
const localMachineId = async (request: APIRequestContext): Promise<string> => (await localMachine(request)).id;

async function getRun(request: APIRequestContext, id: string): Promise<RunBody> {
  const r = await request.get(`/api/v1/runs/${id}`);
  expect(r.status()).toBe(200);
  return (await r.json()) as RunBody;
}

/** Width and height from a PNG's IHDR chunk (bytes 16–23, big-endian). */
function pngSize(png: Buffer): { width: number; height: number } {
  expect(png.subarray(1, 4).toString()).toBe('PNG');
  expect(png.subarray(12, 16).toString()).toBe('IHDR');
  return { width: png.readUInt32BE(16), height: png.readUInt32BE(20) };
}

/** The share of the PNG's pixels that have its most common colour (drawn in the page: no decoder here). */
async function dominantColourShare(page: Page, png: Buffer): Promise<number> {
  return page.evaluate(async (b64) => {
    const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
    const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
    const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext('2d')!;
    ctx.drawImage(bitmap, 0, 0);
    const data = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data;
    const counts = new Map<number, number>();
    for (let i = 0; i < data.length; i += 4) {
      const key = (data[i] << 16) | (data[i + 1] << 8) | data[i + 2];
      counts.set(key, (counts.get(key) ?? 0) + 1);
    }
    return Math.max(...counts.values()) / (data.length / 4);
  }, png.toString('base64'));
}

/** Saves the first sweep chart as PNG and checks the file is that chart: its size, with axes drawn. */
async function checkChartPng(page: Page) {
  await showSweeps(page);
  const chart = page.getByTestId('sweep-chart').first();
  // The chart's drawing (the SVG holding the axes), not one of the legend's icons.
  const surface = chart.locator('svg:has(.recharts-cartesian-axis)');
  await expect(surface).toHaveCount(1);
  await expect(surface.locator('.recharts-cartesian-axis')).toHaveCount(2);
  await expect(chart.locator('.recharts-legend-wrapper svg.recharts-surface').first()).toBeAttached();
  const box = (await surface.boundingBox())!;
  const download = page.waitForEvent('download');
  await chart.getByTestId('chart-png').click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/\.png$/);
  const png = readFileSync(await file.path());
  const { width, height } = pngSize(png);
  // Drawn at 2×: the PNG has the chart's own width (a legend icon gives 28×28), and its height plus
  // the title and legend above it (issue 27, 9).
  expect(width).toBeGreaterThan(300);
  expect(height).toBeGreaterThan(150);
  expect(width).toBe(Math.ceil(box.width * 2));
  expect(height).toBeGreaterThan(Math.ceil(box.height * 2));
  // Lines, axes and labels on white: not one flat colour.
  expect(await dominantColourShare(page, png)).toBeLessThan(0.97);
}

test('a chart saved as PNG is the whole chart with its axes, on the live and on the shared page (issue 13, 1)', async ({ page }) => {
  await fakeCompareAndShare(page, 'Fixture0Slug13');

  await page.goto('/compare?machines=m-a,m-b&baseline=m-a');
  await expect(page.getByTestId('compare-row')).toHaveCount(5);
  await checkChartPng(page);

  await page.getByRole('button', { name: 'Share' }).click();
  await expect(page.getByTestId('share-link')).toHaveValue(/\/s\/Fixture0Slug13$/);
  await page.goto('/s/Fixture0Slug13');
  await expect(page.getByTestId('frozen-banner')).toBeVisible();
  await checkChartPng(page);
});

test('"Run again…" repeats a quick sweep exactly: same form, same items (issue 13, 2)', async ({ page, request }) => {
  test.setTimeout(180_000);
  const machine = await localMachineId(request);
  // Old links name go.mutex, renamed lock.go_mutex (kernels/contract/legacy-ids.json): they open the new id.
  await page.goto('/kernels/go.mutex');
  await expect(page).toHaveURL(/\/kernels\/lock\.go_mutex$/);
  await expect(page.getByRole('heading', { level: 1 })).toContainText('lock.go_mutex');
  await page.goto(`/compare?machines=${machine}&kernels=go.mutex,syscall.getppid`);
  await expect(page).toHaveURL(/kernels=lock\.go_mutex,syscall\.getppid/);
  await page.goto(`/runs/new?machines=${machine}&kernel=syscall.getppid&kernel=go.mutex`);
  await expect(page).toHaveURL(/kernel=lock\.go_mutex/);
  await page.getByLabel('Profile').selectOption('quick');
  const mutex = kernelOption(page, 'lock.go_mutex');
  await mutex.locator('input[name="goroutines"]').fill('4');
  await mutex.getByLabel('procs: value or sweep').selectOption('custom');
  await mutex.locator('input[name="procs"]').fill('1, 2');
  await page.getByLabel('Repetitions').fill('3');
  await page.getByLabel(/Min time/).fill('0.02');
  await expect(page.getByTestId('item-count')).toHaveText(/^3 items/);
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  const firstId = page.url().split('/').pop()!;
  await expect(page.getByTestId('run-status')).toHaveText('succeeded', { timeout: 90_000 });

  await page.getByRole('link', { name: 'Run again…' }).click();
  await expect(page).toHaveURL(/\/runs\/new\?/);
  await expect(page.getByLabel('Profile')).toHaveValue('quick');
  await expect(page.getByRole('checkbox', { name: /syscall\.getppid/ })).toBeChecked();
  await expect(page.getByRole('checkbox', { name: /lock\.go_mutex/ })).toBeChecked();
  const again = kernelOption(page, 'lock.go_mutex');
  await expect(again.locator('input[name="goroutines"]')).toHaveValue('4');
  await expect(again.getByLabel('procs: value or sweep')).toHaveValue('custom');
  await expect(again.locator('input[name="procs"]')).toHaveValue('1, 2');
  await expect(page.getByLabel('Repetitions')).toHaveValue('3');
  await expect(page.getByLabel(/Min time/)).toHaveValue('0.02');
  await expect(page.getByTestId('item-count')).toHaveText(/^3 items/);
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  const secondId = page.url().split('/').pop()!;
  expect(secondId).not.toBe(firstId);
  await expect(page.getByTestId('run-profile')).toHaveText('quick');

  const [first, second] = [await getRun(request, firstId), await getRun(request, secondId)];
  const items = (r: RunBody) => r.items.map((i) => ({ kernel: i.kernel, params: i.params }));
  expect(items(second)).toEqual(items(first));
  expect(items(first)).toHaveLength(3);
  expect([second.profile, second.repetitions, second.min_time_s]).toEqual([first.profile, first.repetitions, first.min_time_s]);
  expect(second.request.launches).toEqual(first.request.launches);
  await expect(page.getByTestId('run-status')).toHaveText('succeeded', { timeout: 90_000 });
});

test('Cancel asks first, and a cancelled run says so on a bar that is not green, with the counts shown (issue 13, 8)', async ({ page, request }) => {
  const machine = await localMachineId(request);
  const runId = await postRun(request, {
    machine_id: machine,
    repetitions: 3,
    min_time_s: 0.5,
    items: [{ kernel: 'syscall.getppid', params: {} }, { kernel: 'call.function', params: {} }, { kernel: 'lock.go_mutex', params: {}, sweep: { procs: [1, 2, 4] } }],
  });
  await page.goto(`/runs/${runId}`);
  await expect(page.getByTestId('run-status')).toHaveText('running', { timeout: 30_000 });
  const bar = page.getByTestId('run-progress');

  // Cancel asks in place; "Keep running" leaves the run alone.
  await page.getByRole('button', { name: 'Cancel run' }).click();
  const confirm = page.getByTestId('cancel-confirm');
  await expect(confirm).toContainText('Cancel this run?');
  await page.waitForTimeout(500);
  expect((await getRun(request, runId)).status).toBe('running');
  await confirm.getByRole('button', { name: 'Keep running' }).click();
  await expect(confirm).toHaveCount(0);
  expect((await getRun(request, runId)).status).toBe('running');

  await page.getByRole('button', { name: 'Cancel run' }).click();
  await page.getByRole('button', { name: 'Yes, cancel' }).click();
  await expect(page.getByTestId('run-status')).toHaveText('cancelled', { timeout: 5_000 });

  await expect(bar).toHaveAttribute('data-tone', 'cancelled');
  await expect(bar.getByTestId('progress-label')).toHaveText(/^Cancelled: \d+ of 5 items measured/);
  const run = await getRun(request, runId);
  const measured = run.items.filter((i) => i.state === 'succeeded').length;
  // The label counts what the page shows: the results table's rows (none when nothing was measured).
  await expect(page.getByTestId('result-row')).toHaveCount(measured);
  if (measured === 0) await expect(page.getByText('No item of this run measured anything.')).toBeVisible();
  await expect(bar.getByTestId('progress-label')).toHaveText(new RegExp(`^Cancelled: ${measured} of 5 items measured`));
  await expect(bar.getByRole('progressbar')).toHaveAttribute('aria-valuenow', String(measured));
  // Not the success green (--ok, #1a7f37).
  const colour = await bar.locator('.progress-done').evaluate((el) => getComputedStyle(el).backgroundColor);
  expect(colour).not.toBe('rgb(26, 127, 55)');

  // The runs list counts the same items measured, not every item with a (cancelled) result (issue 27, 3).
  await page.goto('/runs');
  const row = page.getByTestId('run-row').filter({ has: page.locator(`a[href="/runs/${runId}"]`) });
  await expect(row.getByTestId('run-items')).toHaveText(new RegExp(`^${measured} / 5`));
  const notRun = run.items.filter((i) => i.state !== 'succeeded' && i.state !== 'failed').length;
  if (notRun > 0) await expect(row.getByTestId('run-items')).toContainText(`(${notRun} not run)`);
});

test("a sweep's rows and its chart's axis read in one unit (issue 13, 7)", async ({ page }) => {
  // sched.yield's figures run from 100 to 2,600 ns/op: one unit, not ns then µs.
  await page.route('**/api/v1/compare?**', (route) => route.fulfill({ json: COMPARE_FIXTURE }));
  await page.goto('/compare?machines=m-a,m-b&baseline=m-a');
  const sweep = page.getByTestId('compare-row').and(page.locator('[data-kernel="sched.yield"]'));
  await expect(sweep).toHaveCount(3);
  // The unit column (found by its text, so the check does not lean on a test id).
  expect(await sweep.locator('td').filter({ hasText: /^(ns|µs|ms|s)\/op$/ }).allTextContents()).toEqual(['ns/op', 'ns/op', 'ns/op']);
  await expect(sweep.last().getByTestId('compare-median').last()).toHaveText('2,600');
  // The chart of the same kernel labels its y axis with the table's unit.
  await showSweeps(page);
  const chart = page.getByTestId('sweep-chart').filter({ hasText: 'sched.yield' }).first();
  await expect(chart.locator('text.recharts-label').filter({ hasText: /\/op$/ })).toHaveText('ns/op');
});
