import { readFileSync } from 'node:fs';
import type { Locator } from '@playwright/test';
import { expect, test, type Page } from './fixtures';
import { COMPARE_FIXTURE } from './compare-fixture';
import { localMachine, runToSuccess } from './runs';
import { showSweeps } from './sweeps';

// Issue 27 item 9: a chart saved as PNG says what it is on its own (its title, and its legend when it
// has one, above the drawing) and History's PNG keeps its last x label. Real server and agent for
// History; Compare draws the contract-shaped fixture.

test.describe.configure({ mode: 'serial' });

interface PngFacts {
  width: number;
  height: number;
  /** Rows of the caption's band (above the drawing) that hold any non-white pixel. */
  inkRowsAbove: number;
  /** For each colour asked about: pixels in that band within 40 of it per channel. */
  near: number[];
  /** Non-white pixels in the image's right-most 6 columns: a label cut by the edge leaves some. */
  inkRightEdge: number;
}

/** Saves the chart in `frame` as PNG and reads it back in the page (no decoder here). */
async function savedPng(page: Page, frame: Locator, colours: string[]): Promise<{ png: PngFacts; box: { width: number; height: number } }> {
  const surface = frame.locator('svg:has(.recharts-cartesian-axis)');
  const box = (await surface.boundingBox())!;
  const download = page.waitForEvent('download');
  await frame.getByTestId('chart-png').click();
  const file = await download;
  expect(file.suggestedFilename()).toMatch(/\.png$/);
  const b64 = readFileSync(await file.path()).toString('base64');
  const png = await page.evaluate(
    async ({ b64, chartHeight, colours }) => {
      const bytes = Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));
      const bitmap = await createImageBitmap(new Blob([bytes], { type: 'image/png' }));
      const canvas = new OffscreenCanvas(bitmap.width, bitmap.height);
      const ctx = canvas.getContext('2d')!;
      ctx.drawImage(bitmap, 0, 0);
      // The caption's first 44 px (title and one legend row, at 2×): above the drawing whatever follows it.
      const above = Math.min(88, bitmap.height - Math.ceil(chartHeight * 2));
      const probe = document.createElement('span');
      document.body.append(probe);
      const rgb = colours.map((c) => {
        probe.style.color = c;
        return getComputedStyle(probe).color.match(/\d+/g)!.slice(0, 3).map(Number);
      });
      probe.remove();
      const data = ctx.getImageData(0, 0, bitmap.width, Math.max(1, above)).data;
      let inkRowsAbove = 0;
      const near = rgb.map(() => 0);
      for (let y = 0; y < above; y++) {
        let ink = false;
        for (let x = 0; x < bitmap.width; x++) {
          const i = (y * bitmap.width + x) * 4;
          const [r, g, b] = [data[i]!, data[i + 1]!, data[i + 2]!];
          if (r < 235 || g < 235 || b < 235) ink = true;
          rgb.forEach(([cr, cg, cb], k) => {
            if (Math.abs(r - cr!) < 40 && Math.abs(g - cg!) < 40 && Math.abs(b - cb!) < 40) near[k]!++;
          });
        }
        if (ink) inkRowsAbove++;
      }
      const edge = ctx.getImageData(bitmap.width - 6, 0, 6, bitmap.height).data;
      let inkRightEdge = 0;
      for (let i = 0; i < edge.length; i += 4) if (edge[i]! < 200 || edge[i + 1]! < 200 || edge[i + 2]! < 200) inkRightEdge++;
      return { width: bitmap.width, height: bitmap.height, inkRowsAbove, near, inkRightEdge };
    },
    { b64, chartHeight: box.height, colours },
  );
  return { png, box };
}

test('a sweep chart saved as PNG carries its title and its legend, in the series colours (issue 27, 9)', async ({ page }) => {
  await page.route('**/api/v1/compare?**', (route) => route.fulfill({ json: COMPARE_FIXTURE }));
  await page.goto('/compare?machines=m-a,m-b&baseline=m-a');
  await showSweeps(page);
  const frame = page.getByTestId('sweep-chart').first();
  await expect(frame.locator('.recharts-line').first()).toBeVisible();
  const legend = frame.locator('.recharts-legend-item-text');
  await expect(legend).toHaveText(['alpha', 'beta']);
  const colours = await legend.evaluateAll((els) => els.map((e) => (e as HTMLElement).style.color));
  const { png, box } = await savedPng(page, frame, colours);
  expect(png.width).toBe(Math.ceil(box.width * 2));
  // Before: exactly the drawing's height, nothing above it.
  expect(png.height).toBeGreaterThan(Math.ceil(box.height * 2) + 60);
  expect(png.inkRowsAbove, 'title and legend drawn above the chart').toBeGreaterThan(30);
  for (const [i, n] of png.near.entries()) expect(n, `legend swatch in ${colours[i]}`).toBeGreaterThan(50);
});

test('History: the last x label is inside the chart, and its PNG has a title and a legend (issue 27, 9)', async ({ page, request }) => {
  test.setTimeout(120_000);
  const machine = await localMachine(request);
  for (let i = 0; i < 2; i++) await runToSuccess(request, machine.id, [{ kernel: 'call.indirect', params: {} }]);
  await page.goto(`/history?machine=${encodeURIComponent(machine.id)}&kernel=call.indirect`);
  const frame = page.getByTestId('history-chart');
  const surface = frame.locator('svg:has(.recharts-cartesian-axis)');
  await expect(surface.locator('.recharts-line-dots circle').first()).toBeVisible();
  const overflow = await surface.evaluate((svg) => {
    const { right, bottom } = svg.getBoundingClientRect();
    // The x axis's tick labels: the tick values in the chart's bottom band.
    const ticks = Array.from(svg.querySelectorAll('.recharts-cartesian-axis-tick-value')).filter((t) => t.getBoundingClientRect().top > bottom - 60);
    return { ticks: ticks.length, past: Math.max(...ticks.map((t) => t.getBoundingClientRect().right - right)) };
  });
  expect(overflow.ticks).toBeGreaterThan(1);
  expect(overflow.past, 'the last x label runs past the chart’s edge').toBeLessThanOrEqual(0);
  await expect(frame.locator('.recharts-legend-item-text')).toHaveText(['CI of the figure', 'figure']);
  const { png, box } = await savedPng(page, frame, []);
  expect(png.width).toBe(Math.ceil(box.width * 2));
  expect(png.inkRowsAbove).toBeGreaterThan(30);
  // In the image the labels have no page CSS to size them: the last one still ends inside.
  expect(png.inkRightEdge, 'the last x label cut at the image’s right edge').toBe(0);
});
