import { expect, test, type Page } from './fixtures';
import { COMPARE_FIXTURE } from './compare-fixture';
import { localMachine, runToSuccess } from './runs';

// Issue 27 item 10, at 390 px: the pinned kernel column holds its content (nothing runs under the
// params), Compare shows a number without scrolling sideways, machine rows are compact. Real server
// and agent; Compare draws the contract-shaped fixture.

test.describe.configure({ mode: 'serial' });

const PHONE = { width: 390, height: 844 };

/** Each pinned kernel cell: how far its content runs past its own box, and past the next cell's left edge. */
async function kernelCellOverflow(page: Page): Promise<{ own: number; intoNext: number }[]> {
  return page.locator('tbody td.col-kernel').evaluateAll((cells) =>
    cells.map((c) => {
      const box = c.getBoundingClientRect();
      const next = c.nextElementSibling?.getBoundingClientRect();
      let right = box.right;
      for (const el of Array.from(c.querySelectorAll('*'))) right = Math.max(right, el.getBoundingClientRect().right);
      return { own: Math.round(c.scrollWidth - c.clientWidth), intoNext: next ? Math.round(right - next.left) : 0 };
    }),
  );
}

test('the pinned kernel column holds its ids and badges at 390 px (issue 27, 10)', async ({ page, request }) => {
  const machine = await localMachine(request);
  // Long ids, and badges (interference, reruns) in the same cell on a busy host.
  const run = await runToSuccess(request, machine.id, [
    { kernel: 'lock.go_mutex', params: {}, sweep: { procs: [1, 2] } },
    { kernel: 'ctxswitch.futex', params: {} },
  ]);
  await page.setViewportSize(PHONE);
  await page.goto(`/runs/${run}`);
  await expect(page.getByTestId('result-row')).toHaveCount(3);
  const cells = await kernelCellOverflow(page);
  expect(cells.length).toBeGreaterThanOrEqual(3);
  for (const c of cells) {
    expect(c.own, 'kernel cell content wider than the cell').toBeLessThanOrEqual(1);
    expect(c.intoNext, 'kernel cell content running under the next column').toBeLessThanOrEqual(1);
  }
  // Each row's params are there to read, not covered.
  await expect(page.getByTestId('result-row').first().locator('td.params-cell')).toBeVisible();
});

test('Compare shows a median without sideways scrolling at 390 px, and its params and unit beside the kernel (issue 27, 10)', async ({ page }) => {
  await page.route('**/api/v1/compare?**', (route) => route.fulfill({ json: COMPARE_FIXTURE }));
  await page.setViewportSize(PHONE);
  await page.goto('/compare?machines=m-a,m-b&baseline=m-a');
  const row = page.getByTestId('compare-row').first();
  await expect(row).toBeVisible();
  const median = row.getByTestId('compare-median').first();
  // On screen as the page opens: the table box not scrolled, the page not wider than the window.
  await expect(median).toBeInViewport({ ratio: 1 });
  expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(PHONE.width);
  await expect(row.getByTestId('compare-point-narrow')).toContainText('threads=1, placement=same_core · ns/op');
  // The geomean rows still put each ratio under its ratio column.
  const ratioHead = page.getByRole('columnheader', { name: /beta \/ alpha/ });
  const geo = page.getByTestId('geomean-ratio').first();
  const [h, g] = [(await ratioHead.boundingBox())!, (await geo.boundingBox())!];
  expect(Math.abs(h.x - g.x)).toBeLessThanOrEqual(1);

  // A desktop keeps the params and unit in their own columns.
  await page.setViewportSize({ width: 1280, height: 800 });
  await expect(row.getByTestId('compare-unit')).toBeVisible();
  await expect(row.getByTestId('compare-point-narrow')).toBeHidden();
  const [h2, g2] = [(await ratioHead.boundingBox())!, (await geo.boundingBox())!];
  expect(Math.abs(h2.x - g2.x)).toBeLessThanOrEqual(1);
});

test('machine rows are compact at 390 px: the key facts in one line (issue 27, 10)', async ({ page, request }) => {
  await localMachine(request);
  await page.setViewportSize(PHONE);
  await page.goto('/machines');
  const row = page.getByTestId('machine-row').first();
  await expect(row).toBeVisible();
  const height = (await row.boundingBox())!.height;
  console.log(`machine row at 390 px: ${Math.round(height)} px tall`);
  // It was ~540 px (later ~250), most of it the facts column's empty height.
  expect(height).toBeLessThan(120);
  await expect(row.locator('.narrow-only')).toContainText(/\d+ CPUs/);
  await expect(row.locator('td.col-facts')).toBeHidden();
  // On a desktop the facts are in their column.
  await page.setViewportSize({ width: 1280, height: 800 });
  await expect(row.locator('td.col-facts')).toBeVisible();
  await expect(row.locator('.narrow-only')).toBeHidden();
});
