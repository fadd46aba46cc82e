import { expect, test } from './fixtures';
import { localMachine } from './runs';

// Issue 28: a schedule made in the explorer (kernels, a machine, an interval, jitter), listed with its
// next firing, then paused. Real server, real agent; the schedule is deleted at the end, so no later spec
// sees a firing of it (paused, it would not fire anyway).

type ScheduleJson = { id: string; name: string; paused: boolean; interval_s: number | null; jitter_s: number; machine_ids: string[] | null; next_fire_at: string | null };

test('a schedule is created from the explorer, shows its next firing, and pauses', async ({ page, request }) => {
  const machine = await localMachine(request);
  await page.goto('/');
  await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Schedules' }).click();
  await expect(page).toHaveURL(/\/schedules$/);
  await expect(page.getByRole('heading', { name: 'Schedules', level: 1 })).toBeVisible();

  const form = page.getByRole('form', { name: 'New schedule' });
  await form.getByLabel('Name').fill('e2e hourly getppid');
  await form.getByRole('checkbox', { name: 'syscall.getppid' }).check();
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

  await row.getByRole('button', { name: 'Pause' }).click();
  await expect(row.getByTestId('schedule-next')).toHaveText('paused');
  await expect(row.getByRole('button', { name: 'Resume' })).toBeVisible();
  const paused = (await (await request.get(`/api/v1/schedules/${id}`)).json()) as ScheduleJson;
  expect(paused).toMatchObject({ paused: true, next_fire_at: null });

  // A bad cron line: the server's 422 names the field, shown under the form.
  await form.getByLabel('Name').fill('bad cron');
  await form.getByRole('checkbox', { name: 'syscall.getppid' }).check();
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
