import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { E2E_DIR, ADMIN_TOKEN } from './credentials';
import { expect, test, type APIRequestContext, type Page } from './fixtures';
import { GRPC_TARGET, HTTP_PORT } from './ports';
import { shot } from './screenshots';

// Issue 28 "Tests and figures": a REAL alert, end to end. Two test agents over real gRPC
// (server/tests/fleet_agents.py, as fleet-changes.spec.ts uses it) report a probe through runs posted to
// the real API: host a reconnects with kernel 6.8.0 and reports 60 % more, host d stays flat on 6.1.0.
// The server's alert watcher opens one alert for a's series, naming the kernel change; the header counts
// it, the Alerts page shows it (the README's screenshot), links to the series in History, and
// acknowledging it drops the count. The machines are this spec's own and are deleted after (their
// alerts go with them), so other specs see no alert of ours.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const KERNEL = 'e2e.alert_probe';
const PREFIX = 'pw-alert';

type AlertJson = {
  id: string;
  state: string;
  summary: string;
  machine_id: string;
  kernel: string;
  params_key: string;
  ratio: number;
  facts_changed: { fact: string; before: unknown; after: unknown }[];
  acknowledged_by: string | null;
};

async function fleet(): Promise<Record<string, string>> {
  const { stdout } = await promisify(execFile)(
    resolve(ROOT, '.venv/bin/python'),
    ['-m', 'tests.fleet_agents', '--http', `http://127.0.0.1:${HTTP_PORT}`, '--grpc', GRPC_TARGET, '--admin-token', ADMIN_TOKEN,
      '--agent-token-file', resolve(E2E_DIR, 'data/agent-token'), '--ca-file', resolve(E2E_DIR, 'data/tls/ca.pem'),
      '--prefix', PREFIX, '--kernel', KERNEL, '--hosts', 'ad'],
    { cwd: resolve(ROOT, 'server'), timeout: 90_000 },
  );
  return (JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { machines: Record<string, string> }).machines;
}

async function openAlerts(request: APIRequestContext, machines: string[]): Promise<AlertJson[]> {
  const r = await request.get(`/api/v1/alerts?state=open&machine=${machines.join(',')}`);
  expect(r.status(), await r.text()).toBe(200);
  return (await r.json()) as AlertJson[];
}

async function openCount(request: APIRequestContext): Promise<number> {
  return ((await (await request.get('/api/v1/alerts/counts')).json()) as { open: number }).open;
}

/** The header's badge shows `n` open alerts (none at all when n is 0). */
async function expectBadge(page: Page, n: number): Promise<void> {
  const badge = page.getByTestId('alerts-badge');
  if (n === 0) await expect(badge).toHaveCount(0);
  else await expect(badge).toHaveText(n > 99 ? '99+' : String(n));
}

async function remove(request: APIRequestContext, ids: string[]): Promise<void> {
  for (const id of ids) {
    await expect.poll(async () => [204, 404].includes((await request.delete(`/api/v1/machines/${id}`)).status()), { timeout: 20_000 }).toBe(true);
  }
}

// README-sized: as wide as a laptop, as tall as the page (the full-page shot adds no empty space below).
test.use({ viewport: { width: 1280, height: 520 } });

test('a real step after a kernel change opens a real alert, shown with its fact change and acknowledged', async ({ page, request }) => {
  test.setTimeout(150_000);
  const machines = await fleet();
  const stepped = machines[`${PREFIX}-a`]!;
  const flat = machines[`${PREFIX}-d`]!;
  try {
    // The API: the watcher checks the series a moment after their runs (CTXBENCH_ALERT_SETTLE_S), and
    // opens one alert, on the series that stepped, naming the kernel change.
    await expect.poll(async () => (await openAlerts(request, [stepped, flat])).length, { timeout: 30_000 }).toBe(1);
    const [alert] = await openAlerts(request, [stepped, flat]);
    expect(alert!.machine_id).toBe(stepped);
    expect(alert!.kernel).toBe(KERNEL);
    expect(alert!.ratio).toBeCloseTo(1.6, 2);
    expect(alert!.facts_changed.map(({ fact, before, after }) => ({ fact, before, after }))).toEqual([
      { fact: 'kernel_release', before: '6.1.0', after: '6.8.0' },
    ]);
    expect(alert!.summary).toBe(`${KERNEL} +60.0 % on ${PREFIX}-a; kernel_release: 6.1.0 → 6.8.0`);
    const open = await openCount(request); // other specs' alerts, if any, count too

    // The header counts it on any page; its link opens the Alerts page with the row.
    await page.goto('/runs');
    await expectBadge(page, open);
    await page.getByTestId('alerts-link').click();
    await expect(page).toHaveURL(/\/alerts$/);
    const row = page.locator(`[data-testid="alert-row"][data-alert-id="${alert!.id}"]`);
    await expect(row).toHaveAttribute('data-state', 'open');
    await expect(row.getByTestId('alert-history')).toHaveText(`${KERNEL} on ${PREFIX}-a`);
    await expect(row).toContainText('+60.0 %');
    await expect(row.getByTestId('alert-facts')).toHaveText('kernel_release: 6.1.0 → 6.8.0');
    await expect(row.getByTestId('alert-state')).toHaveText('open');
    await expect(page.locator(`[data-testid="alert-row"][data-alert-id]`).filter({ hasText: `${PREFIX}-d` })).toHaveCount(0);
    await shot(page, 'alert.png');

    // Its link: the series in History, where the step is, with the same fact change.
    await expect(row.getByTestId('alert-history')).toHaveAttribute('href', `/history?machine=${stepped}&kernel=${KERNEL}&params=`);
    await row.getByTestId('alert-history').click();
    await expect(page).toHaveURL(new RegExp(`/history\\?machine=${stepped}&kernel=${KERNEL.replace('.', '\\.')}`));
    await expect(page.getByTestId('history-chart')).toBeVisible();
    const step = page.getByTestId('history-steps').locator('tr[data-significant="true"]');
    await expect(step).toHaveCount(1);
    await expect(step).toContainText('6.1.0 → 6.8.0');

    // Acknowledged from the Alerts page: the row says who, the header's count drops by one.
    await page.goBack();
    await expect(page).toHaveURL(/\/alerts$/);
    await row.getByTestId('alert-ack').click();
    await expect(row).toHaveCount(0); // the page shows the open ones
    await expectBadge(page, open - 1);
    const acked = (await (await request.get(`/api/v1/alerts/${alert!.id}`)).json()) as AlertJson;
    expect(acked.state).toBe('acknowledged');
    expect(acked.acknowledged_by).toBeTruthy();
    await page.getByLabel('Alert state').selectOption('acknowledged');
    await expect(row.getByTestId('alert-state')).toContainText(`acknowledged by ${acked.acknowledged_by}`);
    expect(await openCount(request)).toBe(open - 1);
  } finally {
    await remove(request, Object.values(machines));
  }
});
