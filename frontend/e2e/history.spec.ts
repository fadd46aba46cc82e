import { expect, test } from './fixtures';
import { localMachine, runToSuccess } from './runs';
import { shot } from './screenshots';

// Issue 13 "History": a kernel point over time on one machine, from three real runs of run.sh's real
// agent, reached through the page's own pickers; and the fleet's change list. Nothing skips itself.

test.describe.configure({ mode: 'serial' });

const KERNEL = 'syscall.clock_gettime';

test('history of a kernel point over three real runs, reached from the pickers', async ({ page, request }) => {
  const machine = await localMachine(request);
  const runs: string[] = [];
  for (let i = 0; i < 3; i++) runs.push(await runToSuccess(request, machine.id, [{ kernel: KERNEL, params: {} }]));

  // The API: the three runs are the newest points of the series, oldest first.
  const api = await request.get(`/api/v1/history?machine=${encodeURIComponent(machine.id)}&kernel=${KERNEL}`);
  expect(api.status(), await api.text()).toBe(200);
  const body = (await api.json()) as { points: { run_id: string; median: number }[]; unit: string };
  expect(body.points.slice(-3).map((p) => p.run_id)).toEqual(runs);
  expect(body.points.every((p) => p.median > 0)).toBe(true);

  // The page: the nav, then the pickers.
  await page.goto('/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'History' }).click();
  await expect(page).toHaveURL(/\/history$/);
  await expect(page.getByTestId('fleet-changes').or(page.getByTestId('no-changes'))).toBeVisible();
  await page.getByTestId('history-machine').selectOption(machine.id);
  await page.getByTestId('history-kernel').selectOption(KERNEL);
  await expect(page).toHaveURL(new RegExp(`/history\\?machine=.*&kernel=${KERNEL.replace('.', '\\.')}`));

  const chart = page.getByTestId('history-chart');
  await expect(chart).toBeVisible();
  const surface = chart.locator('svg:has(.recharts-cartesian-axis)');
  await expect(surface.locator('.recharts-cartesian-axis')).toHaveCount(2);
  // one dot per run on the figure's line
  await expect(surface.locator('.recharts-line-dots circle')).toHaveCount(body.points.length);
  await expect(page.getByTestId('history-summary')).toContainText(`${body.points.length} runs`);
  // every run is listed, newest first, each linking to its run page
  const rows = page.getByTestId('history-points').locator('tbody tr');
  await expect(rows).toHaveCount(body.points.length);
  for (const [i, run] of [...runs].reverse().entries()) {
    await expect(rows.nth(i).getByRole('link')).toHaveAttribute('href', `/runs/${run}`);
  }
  await shot(page, 'history.png');
  // three runs cannot make a change: too short a series to call a step real
  await expect(page.getByTestId('history-steps').locator('tr[data-significant="true"]')).toHaveCount(0);

  // the newest run's link opens that run
  await rows.first().getByRole('link').click();
  await expect(page).toHaveURL(new RegExp(`/runs/${runs[2]}$`));
});

test('an unknown machine in the address says so', async ({ page }) => {
  await page.goto('/history?machine=no-such-machine&kernel=syscall.getppid');
  await expect(page.getByText(/unknown machine/i)).toBeVisible();
});
