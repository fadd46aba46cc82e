import { expect, test } from './fixtures';
import { localMachine, runToSuccess } from './runs';
import { shot } from './screenshots';

// Issue 13 "Same-machine A/B": runs of one machine put on two sides from the compare page's run picker,
// compared with the same table and ratios as machines, over real runs of run.sh's real agent.

test.describe.configure({ mode: 'serial' });

const KERNEL = 'syscall.getppid';

test('before and after on one machine: runs picked on two sides compare like machines', async ({ page, request }) => {
  const machine = (await localMachine(request)).id;
  const runs: string[] = [];
  // three runs a side: a side learns its run-to-run noise from 3 runs or more (fewer: the default floor)
  for (let i = 0; i < 6; i++) runs.push(await runToSuccess(request, machine, [{ kernel: KERNEL, params: {} }]));

  // From the machine page to the picker
  await page.goto(`/machines/${encodeURIComponent(machine)}`);
  await page.getByTestId('machine-ab').click();
  await expect(page).toHaveURL(/\/compare\?ab=/);
  const picker = page.getByTestId('sides-picker');
  await expect(picker.getByTestId('ab-runs')).toBeVisible();
  await expect(picker.getByTestId('ab-compare')).toBeDisabled();
  for (const [i, run] of runs.entries()) {
    await picker.getByRole('checkbox', { name: `${run} on side ${i < 3 ? 'A' : 'B'}` }).check();
  }
  await expect(picker.getByTestId('ab-compare')).toHaveText('Compare 3 vs 3 runs');
  await picker.getByTestId('ab-compare').click();
  await expect(page).toHaveURL(new RegExp(`sides=before:${runs[0]},${runs[1]},${runs[2]};after:${runs[3]},${runs[4]},${runs[5]}`));

  // The same table as machines get: the two sides as its columns, the ratio with its rule
  await expect(page.getByTestId('compare-machine-head')).toHaveText([/before/, /after/]);
  const row = page.locator(`[data-testid="compare-row"][data-kernel="${KERNEL}"]`);
  await expect(row).toHaveCount(1);
  await expect(row.locator('[data-machine-id="after"] [data-testid="ratio-value"]')).toHaveText(/\d/);
  // the rule that decided is on the cell, as for machines
  await expect(row.locator('[data-testid="compare-ratio"][data-machine-id="after"]')).toHaveAttribute('title', /.+/);

  await shot(page, 'ab.png');
  // The API behind it: each side's cell is its newest run, and noise comes from the sides' own runs
  const qs = new URL(page.url()).search;
  const body = (await (await request.get(`/api/v1/compare${qs}`)).json()) as {
    machines: { id: string }[];
    rows: { kernel: string; cells: Record<string, { run_id: string }>; ratios: Record<string, { significance: { noise_source: string } | null }> }[];
  };
  expect(body.machines.map((m) => m.id)).toEqual(['before', 'after']);
  const r = body.rows.find((x) => x.kernel === KERNEL)!;
  expect(r.cells.before!.run_id).toBe(runs[2]);
  expect(r.cells.after!.run_id).toBe(runs[5]);
  expect(r.ratios.after!.significance!.noise_source).toBe('runs');

  // Back to machines
  await page.getByTestId('sides-picker').getByRole('button', { name: 'Compare machines instead' }).click();
  await expect(page.getByTestId('ab-open')).toBeVisible();
});
