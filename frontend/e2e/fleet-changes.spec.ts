import { execFile } from 'node:child_process';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { E2E_DIR, ADMIN_TOKEN } from './credentials';
import { expect, test, type APIRequestContext } from './fixtures';
import { GRPC_TARGET, HTTP_PORT } from './ports';
import { shot } from './screenshots';

// Issue 28 item 4 "Fleet-wide changes": six labelled test agents over real gRPC (server/tests/fleet_agents.py,
// the server tests' agent whose Hello carries chosen facts), with runs posted through the real API. Three
// reconnect with kernel 6.8.0 and report 60 % more; two stay on 6.1.0; one was on 6.8.0 all along with
// the powersave governor, three times its class. The Fleet page tells the change in words and flags the outlier, each
// linking to its series in History. The machines are this spec's own and are deleted after.

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const KERNEL = 'e2e.fleet_probe';
const PREFIX = 'pw-fleet';

async function fleet(): Promise<Record<string, string>> {
  const { stdout } = await promisify(execFile)(
    resolve(ROOT, '.venv/bin/python'),
    ['-m', 'tests.fleet_agents', '--http', `http://127.0.0.1:${HTTP_PORT}`, '--grpc', GRPC_TARGET, '--admin-token', ADMIN_TOKEN,
      '--agent-token-file', resolve(E2E_DIR, 'data/agent-token'), '--ca-file', resolve(E2E_DIR, 'data/tls/ca.pem'), '--prefix', PREFIX, '--kernel', KERNEL],
    { cwd: resolve(ROOT, 'server'), timeout: 90_000 },
  );
  return (JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as { machines: Record<string, string> }).machines;
}

async function remove(request: APIRequestContext, ids: string[]): Promise<void> {
  for (const id of ids) {
    await expect.poll(async () => [204, 404].includes((await request.delete(`/api/v1/machines/${id}`)).status()), { timeout: 20_000 }).toBe(true);
  }
}

test('a kernel change on three of six hosts is one fleet change, and an outlier among its peers is flagged', async ({ page, request }) => {
  test.setTimeout(150_000);
  const machines = await fleet();
  const id = (name: string) => machines[`${PREFIX}-${name}`]!;
  try {
    // The API: one change of the probe, the three that stepped, the three that did not.
    const api = await request.get(`/api/v1/fleet-changes?kernel=${KERNEL}`);
    expect(api.status(), await api.text()).toBe(200);
    const [change] = ((await api.json()) as { fleet_changes: { hosts: { machine_id: string }[]; others: { machine_id: string }[] }[] }).fleet_changes;
    expect(change!.hosts.map((h) => h.machine_id).sort()).toEqual([id('a'), id('b'), id('c')].sort());
    expect(change!.others.map((o) => o.machine_id).sort()).toEqual([id('d'), id('e'), id('f')].sort());

    // The page: from the nav, filtered to the probe (the URL keeps it).
    await page.goto('/');
    await page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'Fleet' }).click();
    await expect(page).toHaveURL(/\/fleet$/);
    await expect(page.getByRole('heading', { name: 'Fleet', level: 1 })).toBeVisible();
    await page.getByTestId('fleet-kernel').fill(KERNEL);
    await page.getByRole('button', { name: 'Show' }).click();
    await expect(page).toHaveURL(new RegExp(`/fleet\\?kernel=${KERNEL.replace('.', '\\.')}$`));

    const item = page.getByTestId('fleet-change');
    await expect(item).toHaveCount(1);
    const summary = item.getByTestId('fleet-change-summary');
    await expect(summary).toContainText(`${KERNEL} +60.0 % on 3 of 6 hosts`);
    await expect(summary).toContainText('all 3 went from kernel_release 6.1.0 to 6.8.0; the other 3 did not');
    await expect(item.getByTestId('fleet-host-link')).toHaveCount(3); // in the order they stepped
    expect((await item.getByTestId('fleet-host-link').allTextContents()).sort()).toEqual([`${PREFIX}-a`, `${PREFIX}-b`, `${PREFIX}-c`]);
    await expect(item.getByTestId('fleet-other-link')).toHaveText([`${PREFIX}-d`, `${PREFIX}-e`, `${PREFIX}-f`]);

    // The outlier among its class (6.8.0): f, with the governor that differs.
    const outlier = page.getByTestId('peer-outlier');
    await expect(outlier).toHaveCount(1);
    await expect(outlier).toHaveAttribute('data-machine-id', id('f'));
    await expect(outlier.getByTestId('peer-summary')).toContainText(`on ${PREFIX}-f: +200.0 % against the median of its 3 peers`);
    await expect(outlier.getByTestId('peer-summary')).toContainText('governor powersave (3 of 4: performance)');
    await expect(outlier.getByTestId('peer-history')).toHaveAttribute('href', `/history?machine=${id('f')}&kernel=${KERNEL}&params=`);
    await shot(page, 'fleet.png');

    // Each host links to its series in History, where the step is.
    await item.getByTestId('fleet-host-link').first().click();
    await expect(page).toHaveURL(new RegExp(`/history\\?machine=.+&kernel=${KERNEL.replace('.', '\\.')}`));
    await expect(page.getByTestId('history-chart')).toBeVisible();
    await expect(page.getByTestId('history-steps').locator('tr[data-significant="true"]')).toHaveCount(1);

    // A kernel the fleet never ran: nothing, said so.
    await page.goto('/fleet?kernel=no.such_kernel&days=7');
    await expect(page.getByTestId('fleet-range')).toHaveValue('7');
    await expect(page.getByTestId('fleet-changes-none')).toBeVisible();
    await expect(page.getByTestId('peer-outliers-none')).toBeVisible();
  } finally {
    await remove(request, Object.values(machines));
  }
});
