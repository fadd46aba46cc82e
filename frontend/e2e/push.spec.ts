import { expect, test, type Page } from './fixtures';
import { localMachine, postRun } from './runs';

// Issue 14, item 3: one push channel (GET /api/v1/events) for machines and runs instead of timers. The
// machines page asks for nothing while nothing changes, and shows a rename and a run's progress to
// `succeeded` as they happen. Kernels: syscall.getppid only, on the local machine (later specs expect
// others unmeasured).

/** Paths (with query) of the API GETs the page makes from now on that match `path`. */
function fetches(page: Page, path: RegExp): string[] {
  const seen: string[] = [];
  page.on('request', (r) => {
    const url = new URL(r.url());
    if (r.method() === 'GET' && path.test(url.pathname + url.search)) seen.push(url.pathname + url.search);
  });
  return seen;
}

test('the machines page follows the push channel: no timers, a rename and a run show within seconds', async ({ page, request }) => {
  test.setTimeout(120_000);
  const machine = await localMachine(request);
  // The page's timers on Playwright's clock: it runs as a real one, and 7 s of it pass at once below.
  await page.clock.install();
  const channel = page.waitForResponse((r) => new URL(r.url()).pathname === '/api/v1/events' && r.status() === 200);
  await page.goto('/machines');
  expect((await channel).headers()['content-type']).toContain('text/event-stream');
  const row = page.locator(`[data-testid=machine-row][data-machine-id="${machine.id}"]`);
  await expect(row.getByTestId('machine-link')).toHaveText(machine.name);
  await page.waitForTimeout(500); // the page's first reads settle

  const machineReads = fetches(page, /^\/api\/v1\/machines$/);
  const runReads = fetches(page, /^\/api\/v1\/runs\?/);
  // 7 s of page time: the old timers (3 s and 5 s) would have fired (with the stream refused, their
  // reads show here within the 500 ms that follow).
  await page.clock.runFor(7000);
  await page.waitForTimeout(500);
  expect(machineReads).toEqual([]);
  expect(runReads).toEqual([]);

  try {
    const renamed = await request.patch(`/api/v1/machines/${encodeURIComponent(machine.id)}`, { data: { name: 'pushed-name' } });
    expect(renamed.status(), await renamed.text()).toBe(200);
    await expect(row.getByTestId('machine-link')).toHaveText('pushed-name', { timeout: 3000 });
    expect(machineReads.length).toBeGreaterThan(0);

    const runId = await postRun(request, { machine_id: machine.id, repetitions: 2, min_time_s: 0.02, items: [{ kernel: 'syscall.getppid' }] });
    const lastRun = row.getByTestId('machine-last-run');
    await expect(lastRun.locator(`a[href$="${runId}"]`)).toBeVisible({ timeout: 5000 });
    await expect(lastRun).toContainText('succeeded', { timeout: 60_000 });
  } finally {
    await request.patch(`/api/v1/machines/${encodeURIComponent(machine.id)}`, { data: { name: null } });
  }
});
