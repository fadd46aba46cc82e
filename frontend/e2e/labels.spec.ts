import { expect, test } from './fixtures';
import { startAgent, stopAgent } from './agents';
import { localMachine } from './runs';
import { shot } from './screenshots';

// Issue 28 item 1: machine labels in the explorer. A real agent started with --label shows its labels as
// chips with its hardware class; an admin adds labels on the machine's page; the machines list filters by
// a selector kept in the URL and groups by a label. The machine is this spec's own and is deleted after.

test('an agent labels its host, an admin adds a label, and the machines list filters and groups by it', async ({ page, request }) => {
  test.setTimeout(120_000);
  const local = await localMachine(request);
  const { id, agent } = await startAgent(request, 'pw-labelled', local.id, ['--label', 'env=staging', '--label', 'rack=r7']);
  try {
    // The agent's labels, as chips on the machines table, with the hardware class.
    await page.goto('/machines');
    const row = page.locator(`[data-testid="machine-row"][data-machine-id="${id}"]`);
    await expect(row.getByTestId('label-chip')).toHaveText(['env=staging', 'rack=r7']);
    await expect(row.getByTestId('hardware-class')).toHaveText(/CPU/);

    // An admin's labels on the machine's page: one overrides the agent's env, one is new.
    await row.getByTestId('machine-link').click();
    await page.getByTestId('edit-labels').click();
    await page.getByTestId('labels-input').fill('env=prod\nteam/db=pg16');
    await page.getByRole('button', { name: 'Save' }).click();
    const chips = page.getByTestId('machine-labels').getByTestId('label-chip');
    await expect(chips).toHaveText(['env=prod', 'rack=r7', 'team/db=pg16']);
    await expect(chips.first()).toHaveAttribute('title', /set by an admin \(its agent says env=staging\)/);
    await shot(page, 'machine-labels.png');
    const stored = (await (await request.get(`/api/v1/machines/${id}`)).json()) as { admin_labels: object; agent_labels: object };
    expect(stored).toMatchObject({ admin_labels: { env: 'prod', 'team/db': 'pg16' }, agent_labels: { env: 'staging', rack: 'r7' } });

    // A bad label is named before anything is sent.
    await page.getByTestId('edit-labels').click();
    await page.getByTestId('labels-input').fill('bad key=x');
    await page.getByRole('button', { name: 'Save' }).click();
    await expect(page.locator('.field-error')).toContainText('line 1: key "bad key"');
    await page.getByRole('button', { name: 'Cancel' }).click();

    // Filter by a selector: the URL holds it, so a reload (or a shared link) shows the same list.
    await page.goto('/machines');
    await page.getByTestId('machines-selector').fill('team/db=pg16,rack');
    await page.getByTestId('machines-selector').press('Enter');
    await expect(page).toHaveURL(/[?&]selector=team%2Fdb%3Dpg16%2Crack/);
    await expect(page.getByTestId('machine-row')).toHaveCount(1);
    await expect(page.getByTestId('machine-row')).toHaveAttribute('data-machine-id', id);
    await page.reload();
    await expect(page.getByTestId('machines-selector')).toHaveValue('team/db=pg16,rack');
    await expect(page.getByTestId('machine-row')).toHaveCount(1);

    // Group by a label, all machines: the labelled one under its value, the others last.
    await page.getByRole('button', { name: 'Clear' }).click();
    await expect(page).not.toHaveURL(/selector=/);
    await expect(page.locator(`[data-testid="machine-row"][data-machine-id="${local.id}"]`)).toHaveCount(1);
    await page.getByTestId('machines-group').selectOption('label:env');
    await expect(page).toHaveURL(/[?&]group=label%3Aenv/);
    await expect(page.getByTestId('machine-group').first()).toContainText('env=prod');
    await expect(page.getByTestId('machine-group').last()).toContainText('no env label');
    await shot(page, 'machines-grouped.png');

    // A malformed selector: the server's 422 names it, no table.
    await page.getByTestId('machines-selector').fill('bad key');
    await page.getByTestId('machines-selector').press('Enter');
    await expect(page.getByRole('alert')).toContainText(/Could not filter machines:.*selector/);
    await expect(page.getByTestId('machine-row')).toHaveCount(0);
  } finally {
    await stopAgent(agent);
    await expect.poll(async () => (await request.delete(`/api/v1/machines/${id}`)).status(), { timeout: 20_000 }).toBe(204);
  }
});
