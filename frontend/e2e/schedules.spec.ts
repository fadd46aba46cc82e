import { expect, test } from './fixtures';
import { kernelOption, sweepCustom } from './new-run';
import { localMachine } from './runs';

// Issue 28: a schedule made in the explorer (kernels with their own parameters and sweeps, as a New run
// has them; a machine, an interval, jitter), listed with its next firing, edited in the same form
// (prefilled, saved with PATCH), then paused. Real server, real agent; the schedule is deleted at the end, so no later spec
// sees a firing of it (paused, it would not fire anyway).

type ScheduleJson = {
  id: string;
  name: string;
  paused: boolean;
  interval_s: number | null;
  jitter_s: number;
  machine_ids: string[] | null;
  run: { items: { kernel: string; params: Record<string, unknown>; sweep?: Record<string, unknown> }[] };
  next_fire_at: string | null;
  next_due_at: string | null;
};

test('a schedule is created from the explorer, shows its next firing, and pauses', async ({ page, request }) => {
  const machine = await localMachine(request);
  await page.goto('/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' }).click();
  await expect(page).toHaveURL(/\/schedules$/);
  await expect(page.getByRole('heading', { name: 'Schedules', level: 1 })).toBeVisible();

  const form = page.getByRole('form', { name: 'New schedule' });
  await form.getByLabel('Name', { exact: true }).fill('e2e hourly getppid');
  await kernelOption(page, 'syscall.getppid').getByRole('checkbox').check();
  // Per-item parameters: sched.yield on another placement, its threads swept.
  await kernelOption(page, 'sched.yield').getByRole('checkbox').check();
  await kernelOption(page, 'sched.yield').locator('select[name="placement"]').selectOption('unpinned');
  await sweepCustom(page, 'sched.yield', 'threads', '1, 2');
  await form.getByRole('checkbox', { name: machine.name }).check();
  await form.getByLabel('Interval (minutes, at least 1)').fill('120');
  await form.getByLabel('Jitter (seconds)').fill('30');
  await form.getByRole('button', { name: 'Create schedule' }).click();

  const row = page.getByTestId('schedule-row').filter({ hasText: 'e2e hourly getppid' });
  await expect(row).toBeVisible();
  await expect(row).toContainText('every 2 h (+ up to 30 s jitter)');
  await expect(row.getByTestId('schedule-next')).toHaveText(/^in \d/);
  await expect(row.getByTestId('schedule-last')).toHaveText('not yet');
  const id = await row.getAttribute('data-schedule-id');
  expect(id).toBeTruthy();
  const stored = (await (await request.get(`/api/v1/schedules/${id}`)).json()) as ScheduleJson;
  expect(stored).toMatchObject({ name: 'e2e hourly getppid', interval_s: 7200, jitter_s: 30, machine_ids: [machine.id], paused: false });
  expect(stored.run.items).toEqual([
    { kernel: 'syscall.getppid', params: {} },
    { kernel: 'sched.yield', params: { placement: 'unpinned' }, sweep: { threads: [1, 2] } },
  ]);

  // Edit: the same form, prefilled with what is stored; Save sends PATCH and the next slot is recomputed.
  await row.getByTestId('schedule-edit').click();
  const edit = page.getByRole('form', { name: 'Edit schedule e2e hourly getppid' });
  await expect(edit.getByLabel('Name', { exact: true })).toHaveValue('e2e hourly getppid');
  await expect(edit.getByLabel('Interval (minutes, at least 1)')).toHaveValue('120');
  await expect(edit.getByLabel('Jitter (seconds)')).toHaveValue('30');
  await expect(page.getByRole('form', { name: 'New schedule' })).toHaveCount(0); // one kernel picker at a time
  await expect(kernelOption(page, 'syscall.getppid').getByRole('checkbox')).toBeChecked();
  const yieldOption = kernelOption(page, 'sched.yield');
  await expect(yieldOption.getByRole('checkbox')).toBeChecked();
  await expect(yieldOption.locator('select[name="placement"]')).toHaveValue('unpinned');
  await expect(yieldOption.locator('input[name="threads"]')).toHaveValue('1, 2');
  await expect(edit.getByRole('checkbox', { name: machine.name })).toBeChecked();
  await yieldOption.locator('input[name="threads"]').fill('1, 2, 4');
  await edit.getByLabel('Interval (minutes, at least 1)').fill('180');
  await edit.getByLabel('Jitter (seconds)').fill('0');
  await edit.getByRole('button', { name: 'Save schedule' }).click();
  await expect(edit).toHaveCount(0);
  await expect(row).toContainText('every 3 h');
  await expect(row).not.toContainText('jitter');
  const edited = (await (await request.get(`/api/v1/schedules/${id}`)).json()) as ScheduleJson;
  expect(edited).toMatchObject({ name: 'e2e hourly getppid', interval_s: 10800, jitter_s: 0, machine_ids: [machine.id], paused: false });
  expect(edited.run.items[1]).toEqual({ kernel: 'sched.yield', params: { placement: 'unpinned' }, sweep: { threads: [1, 2, 4] } });
  // Slots of an interval are its multiples since the epoch: the new slot is one of 3 h, not of 2 h.
  expect((Date.parse(edited.next_due_at ?? '') / 1000) % 10800).toBe(0);
  expect(edited.next_fire_at).toBe(edited.next_due_at);

  // A bad edit: the server's 422 is shown in the edit form, and nothing changes.
  await row.getByTestId('schedule-edit').click();
  await edit.getByRole('radio', { name: 'on a cron line' }).check();
  await edit.getByLabel('Cron (minute hour day month weekday, UTC)').fill('* * *');
  await edit.getByRole('button', { name: 'Save schedule' }).click();
  await expect(edit.getByRole('alert')).toContainText('cron');
  await edit.getByRole('button', { name: 'Cancel' }).click();
  await expect(edit).toHaveCount(0);
  expect(((await (await request.get(`/api/v1/schedules/${id}`)).json()) as ScheduleJson).interval_s).toBe(10800);

  await row.getByRole('button', { name: 'Pause' }).click();
  await expect(row.getByTestId('schedule-next')).toHaveText('paused');
  await expect(row.getByRole('button', { name: 'Resume' })).toBeVisible();
  const paused = (await (await request.get(`/api/v1/schedules/${id}`)).json()) as ScheduleJson;
  expect(paused).toMatchObject({ paused: true, next_fire_at: null });

  // A bad cron line: the server's 422 names the field, shown under the form.
  await form.getByLabel('Name', { exact: true }).fill('bad cron');
  await kernelOption(page, 'syscall.getppid').getByRole('checkbox').check();
  await form.getByRole('checkbox', { name: machine.name }).check();
  await form.getByRole('radio', { name: 'on a cron line' }).check();
  await form.getByLabel('Cron (minute hour day month weekday, UTC)').fill('61 * * * *');
  await form.getByRole('button', { name: 'Create schedule' }).click();
  await expect(form.getByRole('alert')).toContainText('cron');

  // Deleted from its row, after one more question: gone from the page and from the server.
  await row.getByTestId('schedule-delete').click();
  await expect(row.getByTestId('schedule-delete-confirm')).toContainText('The runs it made stay');
  await row.getByRole('button', { name: 'Yes, delete' }).click();
  await expect(page.getByTestId('schedule-row').filter({ hasText: 'e2e hourly getppid' })).toHaveCount(0);
  expect((await request.get(`/api/v1/schedules/${id}`)).status()).toBe(404);
});
