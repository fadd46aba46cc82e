import { expect, test } from './fixtures';
import { localMachine, postRun } from './runs';

// Issue 27, items 1, 2 and 5: a run's launches go round-robin over its items, so no item finishes before
// the last round; the run page counts launches as they end (over its event stream), gives an ETA from
// them, shows each item's launches done, and says where launches were disturbed and why.

test('the run page counts launches before any item finishes, then every item’s', async ({ page, request }) => {
  const machine = (await localMachine(request)).id;
  // 4 items × 3 launches of 2 × 0.1 s (after as much calibrating): items finish only in the third round,
  // the first 8 launches leave seconds to see the counts move with no item done
  const id = await postRun(request, {
    machine_id: machine,
    profile: 'quick',
    launches: 3,
    repetitions: 6,
    min_time_s: 0.1,
    items: [{ kernel: 'syscall.getppid' }, { kernel: 'lock.go_mutex', sweep: { procs: [1, 2, 4] } }],
  });
  await page.goto(`/runs/${id}`);
  const label = page.getByTestId('run-progress').getByTestId('progress-label');
  // Progress moves per launch while every item is still running (the bar sat at 0 / 4 before).
  await expect(label).toHaveText(/^[1-9]\d* \/ 12 launches · 0 \/ 4 items done$/, { timeout: 30_000 });
  await expect(page.getByRole('progressbar')).not.toHaveAttribute('aria-valuenow', '0');
  await expect(page.getByTestId('item-launches').filter({ hasText: /^[12] \/ 3$/ }).first()).toBeVisible();
  await expect(page.getByText('No results yet')).toBeVisible(); // no item has finished, yet progress moved
  // The ETA comes from the launches measured: a figure, counting down.
  await expect(page.getByTestId('run-eta')).toHaveText(/^(about \d+ s left|a few seconds left|any moment now.*)$/);

  await expect(page.getByTestId('run-status')).toHaveText('succeeded', { timeout: 90_000 });
  await expect(label).toHaveText('4 / 4 items');
  await expect(page.getByTestId('item-launches')).toHaveText(['3 / 3', '3 / 3', '3 / 3', '3 / 3']);

  // Disturbed launches say so, with why, where the host disturbed any (this shared host may or may not).
  const results = (await (await request.get(`/api/v1/runs/${id}/results`)).json()) as { interference: { disturbed_launches: number | null } | null }[];
  const disturbed = results.filter((r) => (r.interference?.disturbed_launches ?? 0) > 0).length;
  await expect(page.getByTestId('result-disturbed')).toHaveCount(disturbed);
  if (disturbed > 0) await expect(page.getByTestId('result-disturbed').first()).toHaveText(/^\d of 3 launches disturbed(: .+)?$/);
});
