import { expect, test, type Page } from './fixtures';

// Issue 28 "Alerts": the header's count of open alerts on every page, the Alerts page, and acknowledging
// one. The alert answers are in the contract's shape (docs/architecture.md "Alerts"), served by the test:
// a real step needs a dozen runs of the real agent; the server's tests open real ones (test_alerts.py).

const alert = (state: 'open' | 'acknowledged') => ({
  id: 'alert-1',
  state,
  summary: 'syscall.getppid +30.0 % on box; governor: powersave → performance',
  machine_id: 'box',
  machine_name: 'box',
  kernel: 'syscall.getppid',
  params_key: '',
  params: {},
  unit: 'ns/op',
  run_id: 'run-7',
  before_run_id: 'run-6',
  at: '2026-11-27T03:00:00Z',
  before: 100,
  after: 130,
  ratio: 1.3,
  ci_low: 1.27,
  ci_high: 1.33,
  significance: { significant: true, rule: 'ci_excludes_noise', noise: 0.05, noise_source: 'runs', ci_level: 0.95, runs: [6, 6] },
  facts_changed: [{ run_id: 'run-7', at: '2026-11-27T03:00:00Z', fact: 'governor', before: 'powersave', after: 'performance', hint: null }],
  opened_at: '2026-11-27T03:01:00Z',
  acknowledged_at: state === 'acknowledged' ? '2026-11-27T04:00:00Z' : null,
  acknowledged_by: state === 'acknowledged' ? 'admin' : null,
  resolved_at: null,
  resolved_by: null,
  note: null,
});

async function serveAlerts(page: Page): Promise<{ acked: () => boolean }> {
  let acked = false;
  await page.route('**/api/v1/alerts/counts', (route) => route.fulfill({ json: { open: acked ? 0 : 1, acknowledged: acked ? 1 : 0, resolved: 0 } }));
  await page.route('**/api/v1/alerts?state=open', (route) => route.fulfill({ json: acked ? [] : [alert('open')] }));
  await page.route('**/api/v1/alerts', (route) => route.fulfill({ json: [alert(acked ? 'acknowledged' : 'open')] }));
  await page.route('**/api/v1/alerts/alert-1/ack', (route) => {
    acked = true;
    return route.fulfill({ json: alert('acknowledged') });
  });
  return { acked: () => acked };
}

test('the header counts open alerts on every page, and an alert is acknowledged from the Alerts page', async ({ page }) => {
  const served = await serveAlerts(page);
  for (const path of ['/', '/runs', '/history']) {
    await page.goto(path);
    await expect(page.getByTestId('alerts-badge')).toHaveText('1');
  }
  await page.getByTestId('alerts-link').click();
  await expect(page).toHaveURL(/\/alerts$/);
  const row = page.getByTestId('alert-row');
  await expect(row).toHaveCount(1);
  await expect(row).toContainText('+30.0 %');
  await expect(row.getByTestId('alert-facts')).toHaveText('governor: powersave → performance');
  await expect(row.getByTestId('alert-history')).toHaveAttribute('href', /\/history\?machine=box&kernel=syscall\.getppid/);
  await row.getByTestId('alert-ack').click();
  expect(served.acked()).toBe(true);
  await expect(page.getByTestId('alerts-badge')).toHaveCount(0);
  await expect(page.getByTestId('alerts-none')).toBeVisible();
  await page.getByLabel('Alert state').selectOption('');
  await expect(page.getByTestId('alert-state')).toContainText('acknowledged by admin');
});

test('the real server answers the Alerts page: none open on a fresh fleet', async ({ page, request }) => {
  const counts = await request.get('/api/v1/alerts/counts');
  expect(counts.status(), await counts.text()).toBe(200);
  await page.goto('/alerts');
  await expect(page.getByRole('heading', { name: 'Alerts' })).toBeVisible();
  await expect(page.getByTestId('alerts-none').or(page.getByTestId('alerts-table'))).toBeVisible();
  await expect(page.getByRole('heading', { name: 'Webhooks' })).toBeVisible(); // the e2e user is an admin
});

test('a webhook chooses the events it receives, on creation and after, stored by the real server', async ({ page, request }) => {
  type HookJson = { id: string; name: string; events: string[] };
  const stored = async (name: string) => ((await (await request.get('/api/v1/webhooks')).json()) as HookJson[]).find((h) => h.name === name);
  await page.goto('/alerts');
  const form = page.getByRole('form', { name: 'New webhook' });
  const events = form.getByRole('group', { name: 'Events' });
  // The server's default, alerts only, is checked; the only one checked cannot be unchecked.
  await expect(events.getByRole('checkbox', { name: 'Alerts opened' })).toBeChecked();
  await expect(events.getByRole('checkbox', { name: 'Alerts opened' })).toBeDisabled();
  await expect(events.getByRole('checkbox', { name: 'Fleet changes opened' })).not.toBeChecked();
  await form.getByLabel('Webhook name').fill('e2e fleet hook');
  await form.getByLabel('Webhook URL').fill('https://hooks.example/e2e');
  await events.getByRole('checkbox', { name: 'Fleet changes opened' }).check();
  await events.getByRole('checkbox', { name: 'Alerts opened' }).uncheck();
  await form.getByRole('button', { name: 'Add webhook' }).click();
  await expect(page.getByTestId('webhook-secret')).toContainText('e2e fleet hook');
  expect((await stored('e2e fleet hook'))?.events).toEqual(['fleet_change.opened']);

  // Changed in its row: each box is a PATCH.
  const row = page.getByTestId('webhook-row').filter({ hasText: 'e2e fleet hook' });
  const rowEvents = row.getByTestId('webhook-events');
  await expect(rowEvents.getByRole('checkbox', { name: 'Fleet changes opened' })).toBeChecked();
  await rowEvents.getByRole('checkbox', { name: 'Alerts opened' }).check();
  await expect.poll(async () => (await stored('e2e fleet hook'))?.events).toEqual(['alert.opened', 'fleet_change.opened']);
  await expect(rowEvents.getByRole('checkbox', { name: 'Fleet changes opened' })).toBeEnabled();
  await rowEvents.getByRole('checkbox', { name: 'Fleet changes opened' }).uncheck();
  await expect.poll(async () => (await stored('e2e fleet hook'))?.events).toEqual(['alert.opened']);
  await expect(rowEvents.getByRole('checkbox', { name: 'Alerts opened' })).toBeDisabled();

  await row.getByRole('button', { name: 'Delete' }).click();
  await expect(row).toHaveCount(0);
  expect(await stored('e2e fleet hook')).toBeUndefined();
});
