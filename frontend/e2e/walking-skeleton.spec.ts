import { expect, test, type Page } from './fixtures';
import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// One run from the browser to a kernel on the real local agent and back (issue: walking skeleton).
const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../build/screenshots');

test.describe.configure({ mode: 'serial' });

async function onlineMachineRow(page: Page) {
  await page.goto('/');
  // The agent connects a moment after the server answers; the page polls until it shows up. (Other
  // tests may leave a second, stopped agent behind: its row says offline.)
  const row = page.getByTestId('machine-row').filter({ has: page.getByTestId('machine-online').getByText('online', { exact: true }) }).first();
  await expect(row.getByTestId('machine-online')).toHaveText('online', { timeout: 30_000 });
  return row;
}

test('the machines page shows the local agent online', async ({ page }) => {
  const row = await onlineMachineRow(page);
  await expect(row.getByRole('link', { name: /New run/ })).toBeVisible();
  await expect(page.getByRole('navigation', { name: 'Main' }).getByRole('link', { name: 'API docs' })).toHaveAttribute(
    'href',
    '/docs',
  );
});

test('a getppid run launched from the browser succeeds and shows its median', async ({ page }) => {
  const row = await onlineMachineRow(page);
  await row.getByRole('link', { name: /New run/ }).click();
  await expect(page).toHaveURL(/\/runs\/new\?machines=/);

  await page.getByRole('checkbox', { name: /syscall\.getppid/ }).check();
  await page.getByLabel('Repetitions').fill('5');
  await page.getByLabel(/Min time/).fill('0.05');
  await page.getByRole('button', { name: 'Start run' }).click();

  await expect(page).toHaveURL(/\/runs\/[^/?]+$/);
  expect(page.url()).not.toMatch(/\/runs\/new/);
  await expect(page.getByTestId('run-status')).toHaveText('succeeded', { timeout: 60_000 });

  const result = page.getByTestId('result-row').first();
  await expect(result).toBeVisible();
  await expect(result).toContainText('syscall.getppid');
  await expect(result.getByTestId('result-median')).toHaveText(/^\d[\d,.]*$/);

  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: resolve(SCREENSHOTS, 'run.png'), fullPage: true });
});

test('an unknown run id says the run is not found', async ({ page }) => {
  await page.goto('/runs/00000000-0000-0000-0000-000000000000');
  await expect(page.getByRole('heading', { name: 'Run not found' })).toBeVisible();
});
