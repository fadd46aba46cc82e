import AxeBuilder from '@axe-core/playwright';
import { expect, test, type Page } from './fixtures';
import { COMPARE_FIXTURE } from './compare-fixture';
import { localMachine, runToSuccess } from './runs';
import { showSweeps } from './sweeps';

// Issue 27 item 13: axe-core on the main pages, light and dark, at a phone's width and a desktop's,
// with no serious or critical violation; a skip link; charts with a name; Escape closes the samples
// panel; heatmap cells reached and read from the keyboard. Real server, real agent; Compare draws the
// contract-shaped fixture (two machines, sweeps) so the page is the same whatever this host measures.

test.describe.configure({ mode: 'serial' });

const WCAG = ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa'];
const COMPARE = '/compare?machines=m-a,m-b&baseline=m-a';

async function fixtureCompare(page: Page): Promise<void> {
  await page.route('**/api/v1/compare?**', (route) => route.fulfill({ json: COMPARE_FIXTURE }));
}

/**
 * The serious and critical violations axe finds on the page as it is, one line each. Legacy mode runs
 * axe.run in the page itself: the same rules and results as the default (runPartial in each frame, then
 * finishRun in a blank page opened for it), whose extra page and injection only cross-origin frames
 * need, and the explorer has none.
 */
async function seriousViolations(page: Page): Promise<string[]> {
  const { violations } = await new AxeBuilder({ page }).withTags(WCAG).setLegacyMode().analyze();
  return violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id} (${v.impact}): ${v.help} at ${v.nodes.slice(0, 4).map((n) => n.target.join(' ')).join(', ')}`);
}

/** Every chart surface (Recharts' role="application" svg) has a name a screen reader can say. */
async function unnamedCharts(page: Page): Promise<number> {
  return page.locator('svg[role="application"]:not([aria-label]):not([aria-labelledby])').count();
}

let runId = '';
let machineId = '';

test.beforeAll(async ({ request }) => {
  test.setTimeout(150_000);
  const machine = await localMachine(request);
  machineId = machine.id;
  runId = await runToSuccess(request, machine.id, [
    { kernel: 'call.indirect', params: {} },
    // Not lock.go_mutex nor ucontext.swapcontext: explorer-fixes-3 needs them never run before it.
    { kernel: 'lock.pthread_mutex', params: {}, sweep: { threads: [1, 2] } },
  ]);
});

test('no serious or critical axe violation on the main pages, light and dark, at 390 and 1280 px (issue 27, 13)', async ({ page }) => {
  test.setTimeout(300_000);
  await fixtureCompare(page);
  const pages: [string, () => Promise<void>][] = [
    ['/machines', async () => void (await expect(page.getByTestId('machine-row').first()).toBeVisible())],
    ['/runs/new', async () => void (await expect(page.getByTestId('kernel-option').first()).toBeVisible())],
    [`/runs/${runId}`, async () => void (await expect(page.getByTestId('result-row')).toHaveCount(3))],
    [
      COMPARE,
      async () => {
        await showSweeps(page);
        await expect(page.locator('.recharts-line').first()).toBeVisible();
      },
    ],
    [`/history?machine=${encodeURIComponent(machineId)}&kernel=call.indirect`, async () => void (await expect(page.getByTestId('history-chart')).toBeVisible())],
    ['/kernels/call.indirect', async () => void (await expect(page.getByTestId('ranked-chart')).toBeVisible())],
  ];
  const found: string[] = [];
  // Each page loaded once, at 390 px, then checked in both schemes at both widths: the scheme is CSS
  // alone (styles.css's prefers-color-scheme; no script reads it) and the width CSS and charts that
  // redraw on a resize, so either switched in place gives what a load with it gives (axe finds the same
  // passes and violations, node for node).
  for (const [path, ready] of pages) {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.emulateMedia({ colorScheme: 'light' });
    await page.goto(path);
    await ready();
    for (const width of [390, 1280]) {
      await page.setViewportSize({ width, height: 844 });
      await page.waitForTimeout(300); // charts draw after the tables, and again at a new width
      for (const scheme of ['light', 'dark'] as const) {
        await page.emulateMedia({ colorScheme: scheme });
        for (const v of await seriousViolations(page)) found.push(`${path} ${scheme} ${width}px: ${v}`);
        const unnamed = await unnamedCharts(page);
        if (unnamed > 0) found.push(`${path} ${scheme} ${width}px: ${unnamed} chart(s) without a name`);
      }
    }
  }
  expect(found, found.join('\n')).toEqual([]);
});

test('the first Tab reaches a skip link that moves past the navigation (issue 27, 13)', async ({ page }) => {
  await page.goto('/machines');
  await expect(page.getByTestId('machine-row').first()).toBeVisible();
  await page.keyboard.press('Tab');
  const skip = page.getByRole('link', { name: 'Skip to content' });
  await expect(skip).toBeFocused();
  await expect(skip).toBeInViewport();
  await page.keyboard.press('Enter');
  await expect(page.locator('main')).toBeFocused();
  // The next Tab lands inside the page, not on the navigation.
  await page.keyboard.press('Tab');
  expect(await page.evaluate(() => Boolean(document.activeElement?.closest('main')))).toBe(true);
});

test('Escape closes the samples panel and gives the focus back to the median (issue 27, 13)', async ({ page }) => {
  await fixtureCompare(page);
  await page.goto(COMPARE);
  const median = page.getByTestId('compare-median').first();
  await median.click();
  const panel = page.getByTestId('distribution-panel');
  await expect(panel).toBeVisible();
  await expect(panel).toBeFocused();
  await expect(page).toHaveURL(/cell=/);
  await page.keyboard.press('Escape');
  await expect(panel).toHaveCount(0);
  await expect(page).not.toHaveURL(/cell=/);
  await expect(median).toBeFocused();
});

test('heatmap cells are buttons: focusable, named with their value, Enter opens the samples (issue 27, 13)', async ({ page }) => {
  await fixtureCompare(page);
  await page.goto(COMPARE);
  const cell = page.getByTestId('heat-cell').filter({ hasNotText: '—' }).first();
  await expect(cell).toBeVisible();
  // The value a pointer's hover shows is in the cell's name for everyone (not only in a title).
  const control = cell.getByRole('button');
  await expect(control).toHaveAccessibleName(/× the baseline/);
  const name = (await control.getAttribute('aria-label')) ?? '';
  expect(name).toMatch(/^\S+.*: .+× the baseline$/);
  await control.focus();
  await expect(control).toBeFocused();
  await page.keyboard.press('Enter');
  await expect(page.getByTestId('distribution-panel')).toBeVisible();
  await expect(page).toHaveURL(/cell=/);
});
