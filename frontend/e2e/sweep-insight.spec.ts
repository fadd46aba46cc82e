import { expect, test, type APIRequestContext } from './fixtures';
import { shot } from './screenshots';

// Issue 13 "Sweep insight": on a sweep chart, each machine's scaling against the first point and its
// knee. Two real runs of one thread sweep on run.sh's agent, compared as sides (same-machine A/B), so the
// chart has two lines without a second host.

test.describe.configure({ mode: 'serial' });

async function localMachine(request: APIRequestContext): Promise<string> {
  let id = '';
  await expect
    .poll(
      async () => {
        const machines = (await (await request.get('/api/v1/machines')).json()) as { id: string; name: string; online: boolean }[];
        id = machines.find((m) => m.online && m.name !== 'second')?.id ?? '';
        return id;
      },
      { timeout: 30_000 },
    )
    .not.toBe('');
  return id;
}

async function sweepRun(request: APIRequestContext, machine: string): Promise<string> {
  const created = await request.post('/api/v1/runs', {
    data: {
      machine_id: machine,
      profile: 'quick',
      repetitions: 2,
      min_time_s: 0.02,
      items: [{ kernel: 'lock.pthread_mutex', params: { placement: 'same_core' }, sweep: { threads: [1, 2, 4] } }],
    },
  });
  expect(created.status(), await created.text()).toBe(201);
  const id = ((await created.json()) as { id: string }).id;
  await expect
    .poll(async () => ((await (await request.get(`/api/v1/runs/${id}`)).json()) as { status: string }).status, { timeout: 120_000 })
    .toBe('succeeded');
  return id;
}

test('a sweep chart shows each side’s scaling against the first point and its knee', async ({ page, request }) => {
  const machine = await localMachine(request);
  const a = await sweepRun(request, machine);
  const b = await sweepRun(request, machine);
  await page.goto(`/compare?sides=first:${a};second:${b}&kernels=lock.pthread_mutex`);
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
  // a knee in the table is drawn on the chart, and only then
  const kneesInTable = await insight.getByTestId('insight-knee').filter({ hasNotText: 'none' }).count();
  await expect(chart.locator('.recharts-reference-dot text', { hasText: 'knee' })).toHaveCount(kneesInTable);
});
