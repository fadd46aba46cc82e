import { expect, test } from './fixtures';
import { localMachine, runToSuccess } from './runs';
import { shot } from './screenshots';
import { showSweeps } from './sweeps';

// Issue 13 "Sweep insight": on a sweep chart, each machine's scaling against the first point and its
// knee. Two real runs of one thread sweep on run.sh's agent, compared as sides (same-machine A/B), so the
// chart has two lines without a second host.

test.describe.configure({ mode: 'serial' });

test('a sweep chart shows each side’s scaling against the first point and its knee', async ({ page, request }) => {
  const machine = (await localMachine(request)).id;
  const sweep = [{ kernel: 'lock.pthread_mutex', params: { placement: 'same_core' }, sweep: { threads: [1, 2, 4] } }];
  const a = await runToSuccess(request, machine, sweep, 120_000);
  const b = await runToSuccess(request, machine, sweep, 120_000);
  await page.goto(`/compare?sides=first:${a};second:${b}&kernels=lock.pthread_mutex`);
  // a link naming only the sides still shows their machine in the picker
  await expect(page.getByTestId('ab-machine')).toHaveValue(machine);
  await showSweeps(page);
  const chart = page.getByTestId('sweep-chart').filter({ hasText: 'threads' }).first();
  await expect(chart).toBeVisible();
  const insight = chart.getByTestId('sweep-insight');
  const rows = insight.getByTestId('insight-row');
  await expect(rows).toHaveCount(2);
  for (const side of ['first', 'second']) {
    const row = insight.locator(`[data-testid="insight-row"][data-machine-id="${side}"]`);
    const cells = row.locator('td');
    // threads 1, 2, 4 then the knee: the first point is the reference
    await expect(cells).toHaveCount(4);
    await expect(cells.nth(0)).toHaveText('100 %');
    for (const i of [1, 2]) await expect(cells.nth(i)).toHaveText(/^\d[\d.,]* %$/);
    const knee = (await row.getByTestId('insight-knee').textContent()) ?? '';
    expect(knee).toMatch(/^(none|threads = (2|4) \(×\d[\d.]*\))$/);
    if (knee !== 'none') {
      expect(Number(/×([\d.]+)/.exec(knee)![1])).toBeGreaterThanOrEqual(1.1);
    }
  }
  await shot(page, 'sweep-insight.png');
  // a knee in the table is drawn on the chart, and only then (Recharts 3 draws a reference dot's label in
  // a layer of its own, not inside the dot's group: the label's text is what says it is there)
  const kneesInTable = await insight.getByTestId('insight-knee').filter({ hasNotText: 'none' }).count();
  await expect(chart.locator('svg text').filter({ hasText: /^knee ×/ })).toHaveCount(kneesInTable);
});
