import { expect, test } from './fixtures';
import { localMachine, runToSuccess } from './runs';
import { shot } from './screenshots';

// Issue 13 "A kernel page": /kernels/<id> shows what the kernel measures and its latest result on every
// machine, ranked, with a chart, from a real run of run.sh's agent.

test.describe.configure({ mode: 'serial' });

const KERNEL = 'call.indirect';

test('a kernel page ranks every machine’s latest result, with a chart and links', async ({ page, request }) => {
  const machine = await localMachine(request);
  const run = await runToSuccess(request, machine.id, [{ kernel: KERNEL, params: {} }]);
  const [point] = (await (await request.get(`/api/v1/kernels/${KERNEL}/latest`)).json()) as { results: { machine_id: string; run_id: string }[] }[];
  const mine = point!.results.find((r) => r.machine_id === machine.id)!;
  expect(mine.run_id).toBe(run);

  await page.goto(`/kernels/${KERNEL}`);
  const rows = page.getByTestId('ranking-row');
  await expect(rows).toHaveCount(point!.results.length);
  const row = rows.filter({ hasText: machine.name });
  await expect(row).toContainText(/ns\/op|µs\/op/);
  await shot(page, 'kernel.png');
  // one bar per ranked machine
  await expect(page.getByTestId('ranked-chart').locator('.recharts-bar-rectangle')).toHaveCount(point!.results.length);
  // the row leads to the run it came from and to the machine's history of this point
  await expect(row.getByRole('link', { name: /ago|just now|s$/ })).toHaveAttribute('href', `/runs/${run}`);
  await row.getByRole('link', { name: 'history' }).click();
  await expect(page).toHaveURL(new RegExp(`/history\\?machine=.*&kernel=${KERNEL.replace('.', '\\.')}`));
  await expect(page.getByTestId('history-chart')).toBeVisible();
});

test('a kernel no machine has measured says how to measure it', async ({ page }) => {
  await page.goto('/kernels/jmp.setjmp_longjmp');
  await expect(page.getByTestId('ranking-empty')).toBeVisible();
  await expect(page.getByTestId('ranking-empty').getByRole('link', { name: 'New run' })).toHaveAttribute('href', '/runs/new');
});

// Issue 27 item 11: the CI whiskers were drawn near-black on the dark page.
test('in the dark scheme the CI whiskers stand out from the page', async ({ page, request }) => {
  const machine = await localMachine(request);
  const latest = async () => (await (await request.get(`/api/v1/kernels/${KERNEL}/latest`)).json()) as unknown[];
  if ((await latest()).length === 0) await runToSuccess(request, machine.id, [{ kernel: KERNEL, params: {} }]);
  // WCAG 2.1 contrast of two CSS colours (rgb()/rgba() as getComputedStyle gives them).
  const contrast = (a: string, b: string) => {
    const lum = (c: string) => {
      const [r, g, bl] = (c.match(/[\d.]+/g) ?? []).slice(0, 3).map((v) => {
        const s = Number(v) / 255;
        return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
      });
      return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!;
    };
    const [hi, lo] = [lum(a), lum(b)].sort((x, y) => y - x);
    return (hi! + 0.05) / (lo! + 0.05);
  };
  for (const scheme of ['dark', 'light'] as const) {
    await page.emulateMedia({ colorScheme: scheme });
    await page.goto(`/kernels/${KERNEL}`);
    const whisker = page.getByTestId('ranked-chart').locator('.recharts-errorBar line').first();
    await expect(whisker).toBeAttached();
    const { stroke, background } = await whisker.evaluate((el) => ({
      stroke: getComputedStyle(el).stroke,
      background: getComputedStyle(document.documentElement).backgroundColor,
    }));
    // 3:1 is WCAG's floor for graphics (1.4.11); the whisker had about 1.1:1 on the dark page.
    expect(contrast(stroke, background), `${scheme}: whisker ${stroke} on ${background}`).toBeGreaterThanOrEqual(3);
  }
});
