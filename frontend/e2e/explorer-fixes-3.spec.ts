import { expect, signedOutContext, test, type APIRequestContext, type Page } from './fixtures';
import { kernelOption } from './new-run';
import type { Route } from '@playwright/test';
import { COMPARE_FIXTURE } from './compare-fixture';

// Issue 13 "The explorer people live in", problems 5 and 6: the New run page a person can use (search
// and families, short descriptions, errors beside their field and brought into view, every bad sweep
// value named, the one online machine chosen, a duration estimate), and every page at 390 × 844 with
// no sideways scrolling of the page, the nav in reach, and a dark scheme. Real server, real agent.

test.describe.configure({ mode: 'serial' });

interface KernelBody {
  id: string;
  title: string;
  family: string;
  unit: string;
  description: string;
  params: { name: string }[];
  machines: string[];
}

/** run.sh's agent's machine id, once it is the only machine online. */
async function onlyOnlineMachine(request: APIRequestContext): Promise<string> {
  let id = '';
  await expect
    .poll(
      async () => {
        const machines = (await (await request.get('/api/v1/machines')).json()) as { id: string; online: boolean }[];
        const online = machines.filter((m) => m.online);
        id = online.length === 1 ? online[0]!.id : '';
        return id;
      },
      { timeout: 30_000 },
    )
    .not.toBe('');
  return id;
}

async function kernelsOn(request: APIRequestContext, machine: string): Promise<KernelBody[]> {
  const kernels = (await (await request.get('/api/v1/kernels')).json()) as KernelBody[];
  return kernels.filter((k) => k.machines.includes(machine));
}

/** The ids of the kernel checkboxes on the page, in order. */
async function shownKernelIds(page: Page): Promise<string[]> {
  return page.getByTestId('kernel-option').locator('input[type="checkbox"]').evaluateAll((els) => els.map((e) => e.id.replace(/^kernel-/, '')));
}

test('New run: the one online machine is chosen, its kernels are listed short, searchable and foldable (issue 13, 6)', async ({ page, request }) => {
  const machine = await onlyOnlineMachine(request);
  const kernels = await kernelsOn(request, machine);
  expect(kernels.length).toBeGreaterThan(30);

  // No machine in the address: the only online one is ticked and its kernels are there at once.
  await page.goto('/runs/new');
  await expect(page.locator(`[id="machine-${machine}"]`)).toBeChecked();
  await expect(page.getByTestId('kernel-option')).toHaveCount(kernels.length);
  await expect(page.getByTestId('kernel-search-count')).toHaveText(`${kernels.length} kernels`);

  // Each description is its first sentence; the whole paragraph is one click away.
  const getppid = kernelOption(page, 'syscall.getppid');
  const full = kernels.find((k) => k.id === 'syscall.getppid')!.description;
  const desc = getppid.getByTestId('kernel-desc');
  const short = (await desc.innerText()).replace(/\s*more$/, '');
  expect(full.startsWith(short)).toBe(true);
  expect(short.length).toBeLessThan(full.length);
  expect(short).toMatch(/\.$/);
  await getppid.getByRole('button', { name: 'More about syscall.getppid' }).click();
  await expect(desc).toContainText(full);
  await getppid.getByRole('button', { name: 'Less about syscall.getppid' }).click();
  await expect(desc).not.toContainText(full);
  // The whole list, every family open, was ~7,200 px with full paragraphs.
  const height = await page.evaluate(() => document.documentElement.scrollHeight);
  console.log(`New run page with ${kernels.length} kernels listed: ${height} px`);
  expect(height, 'page height with every kernel listed').toBeLessThan(5_000);

  // Search matches id, title, family and the full description (not only the sentence shown).
  const search = page.getByLabel('Search kernels');
  const expected = (q: string) =>
    kernels
      .filter((k) => [k.id, k.title, k.description, k.family, k.unit, ...k.params.map((p) => p.name)].join(' ').toLowerCase().includes(q))
      .map((k) => k.id)
      .sort();
  for (const q of ['futex', 'ctxswitch', 'vdso']) {
    await search.fill(q);
    await expect.poll(async () => (await shownKernelIds(page)).sort()).toEqual(expected(q));
    expect(expected(q).length).toBeGreaterThan(0);
    await expect(page.getByTestId('kernel-search-count')).toHaveText(`${expected(q).length} of ${kernels.length} kernels match`);
  }
  // Enter in the search box does not start a run (it sits inside the form).
  await search.fill('futex');
  await kernelOption(page, 'ctxswitch.futex').getByRole('checkbox').check();
  await search.press('Enter');
  await page.waitForTimeout(500);
  await expect(page).toHaveURL(/\/runs\/new/);
  await kernelOption(page, 'ctxswitch.futex').getByRole('checkbox').uncheck();
  await search.fill('no such kernel anywhere');
  await expect(page.getByTestId('kernel-option')).toHaveCount(0);
  await expect(page.getByText('No kernel matches “no such kernel anywhere”.')).toBeVisible();

  // A chosen kernel stays in sight (with its parameters) whatever the search.
  await search.fill('mutex');
  await kernelOption(page, 'lock.go_mutex').getByRole('checkbox').check();
  await search.fill('getppid');
  expect(await shownKernelIds(page)).toEqual(expect.arrayContaining(['syscall.getppid', 'lock.go_mutex']));
  await expect(kernelOption(page, 'lock.go_mutex').locator('input[name="goroutines"]')).toBeVisible();
  await search.fill('');
  await expect(page.getByTestId('kernel-option')).toHaveCount(kernels.length);

  // A family folds to its chosen kernels and says how many it holds.
  const lockFamily = page.getByTestId('kernel-family').and(page.locator('[data-family="lock"]'));
  const lockCount = kernels.filter((k) => k.family === 'lock').length;
  const toggle = lockFamily.getByRole('button', { name: /^lock \d+ kernels/ });
  await expect(toggle).toHaveAttribute('aria-expanded', 'true');
  await expect(toggle).toContainText(`${lockCount} kernels, 1 chosen`);
  await toggle.click();
  await expect(toggle).toHaveAttribute('aria-expanded', 'false');
  expect(await lockFamily.getByTestId('kernel-option').locator('input[type="checkbox"]').evaluateAll((els) => els.map((e) => e.id))).toEqual([
    'kernel-lock.go_mutex',
  ]);
  await page.getByRole('button', { name: 'Fold all', exact: true }).click();
  await expect(page.getByTestId('kernel-option')).toHaveCount(1);
  await page.getByRole('button', { name: 'Unfold all' }).click();
  await expect(page.getByTestId('kernel-option')).toHaveCount(kernels.length);

  // Unticking the machine is honoured (it is not ticked again behind the person's back).
  await page.locator(`[id="machine-${machine}"]`).uncheck();
  await expect(page.getByTestId('kernel-option')).toHaveCount(0);
  await expect(page.locator(`[id="machine-${machine}"]`)).not.toBeChecked();
});

test('New run: a refused form brings its first bad field into view with the cursor in it, and names every bad sweep value (issue 13, 6)', async ({ page, request }) => {
  const machine = await onlyOnlineMachine(request);
  await page.goto(`/runs/new?machines=${machine}`);

  // No kernel chosen: the message is at the kernel list's top and the cursor in its search box.
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page.locator('#kernels-error')).toHaveText('Choose at least one kernel.');
  await expect(page.getByLabel('Search kernels')).toBeFocused();
  await expect(page.getByLabel('Search kernels')).toBeInViewport();

  // A sweep with several bad values, far above the Start button.
  await page.getByRole('checkbox', { name: /lock\.go_mutex/ }).check();
  const mutex = kernelOption(page, 'lock.go_mutex');
  await mutex.getByLabel('procs: value or sweep').selectOption('custom');
  const procs = mutex.locator('input[name="procs"]');
  await procs.fill('0, 1, two, 2048, 4, 99999, x');
  await page.getByLabel('Repetitions').fill('0');
  await page.getByRole('button', { name: 'Start run' }).scrollIntoViewIfNeeded();
  await expect(procs).not.toBeInViewport();
  await page.getByRole('button', { name: 'Start run' }).click();
  // The first bad field in the page's order (procs comes before Repetitions) has the cursor, in view.
  await expect(procs).toBeFocused();
  await expect(procs).toBeInViewport();
  await expect(procs).toHaveAttribute('aria-invalid', 'true');
  const error = page.locator('[id="param-lock.go_mutex-procs-error"]');
  await expect(error).toBeVisible();
  for (const bad of ['"0"', '"two"', '"2048"', '"99999"', '"x"']) await expect(error).toContainText(bad);
  await expect(error).not.toContainText('"1"');
  await expect(error).not.toContainText('"4"');
  // Its message is beside it: directly under the field, not at the bottom of the form.
  const [fieldBox, errorBox] = [(await procs.boundingBox())!, (await error.boundingBox())!];
  expect(errorBox.y - (fieldBox.y + fieldBox.height)).toBeLessThan(80);
  await expect(page.locator('#repetitions + .muted + .field-error')).toHaveText(/Repetitions must be between 1 and 1000/);
  await expect(page.getByRole('alert')).toHaveText(/Please fix the 2 marked fields/);

  // Many bad values: the first ten are named, the rest counted.
  await procs.fill(Array.from({ length: 25 }, (_, i) => String(5000 + i)).join(', '));
  await page.getByLabel('Repetitions').fill('');
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(procs).toBeFocused();
  await expect(error).toContainText('"5009"');
  await expect(error).not.toContainText('"5010"');
  await expect(error).toContainText('and 15 more bad values');

  // A refusal from the server: a field it names gets the message and the cursor; one it names no field
  // for, the summary. (The server's checks are the form's, so its answer is staged here.)
  await procs.fill('1, 2');
  const refuse = (detail: unknown) => (route: Route) =>
    route.request().method() === 'POST' ? route.fulfill({ status: 422, json: { detail } }) : route.fallback();
  await page.route('**/api/v1/runs', refuse([{ loc: ['body', 'items', 0, 'params', 'goroutines'], msg: 'goroutines: more than this host allows', type: 'value_error' }]));
  await page.getByRole('button', { name: 'Start run' }).click();
  const goroutines = mutex.locator('input[name="goroutines"]');
  await expect(goroutines).toBeFocused();
  await expect(page.locator('[id="param-lock.go_mutex-goroutines-error"]')).toHaveText('goroutines: more than this host allows');
  await page.unrouteAll();
  await page.route('**/api/v1/runs', refuse('the queue is full'));
  await goroutines.fill('3');
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page.locator('#form-errors')).toBeFocused();
  await expect(page.locator('#form-errors')).toContainText('the queue is full');
  await page.unrouteAll();

  // No machine: the cursor goes to the machine list.
  await page.locator(`[id="machine-${machine}"]`).uncheck();
  await page.getByRole('button', { name: 'Start run' }).click();
  // (the list's first checkbox: other specs may have left offline machines above this one)
  await expect(page.locator('input[type="checkbox"][id^="machine-"]').first()).toBeFocused();
  await expect(page.getByText('Choose at least one machine.')).toBeVisible();
  // Unticked stays unticked: the address says so, and a reload does not tick the online machine again.
  await expect(page).toHaveURL(/[?&]machines=(&|$)/);
  await page.reload();
  await expect(page.locator(`[id="machine-${machine}"]`)).not.toBeChecked();
});

test('New run: the page estimates how long a run takes before it starts, and learns from the runs it saw (issue 13, 6)', async ({ page, request }) => {
  test.setTimeout(180_000);
  const machine = await onlyOnlineMachine(request);
  const fill = async () => {
    await page.goto(`/runs/new?machines=${machine}&kernel=ucontext.swapcontext&kernel=lock.go_mutex`);
    await page.getByLabel('Profile').selectOption('quick');
    const mutex = kernelOption(page, 'lock.go_mutex');
    await mutex.getByLabel('procs: value or sweep').selectOption('custom');
    await mutex.locator('input[name="procs"]').fill('1, 2');
    await page.getByLabel('Repetitions').fill('6');
    await page.getByLabel(/Min time/).fill('0.2');
    await expect(page.getByTestId('item-count')).toHaveText(/^3 items from 2 kernels/);
  };
  await fill();
  const estimate = page.getByTestId('run-estimate');
  await expect(estimate).toHaveText(/^about \d+ (s|min) \(estimate: 3 items × 3 launches × 2 repetitions × 0\.2 s, plus each launch's start/);
  const seconds = (text: string) => {
    const m = /^about (\d+) (s|min)/.exec(text)!;
    return Number(m[1]) * (m[2] === 'min' ? 60 : 1);
  };
  // The stack's machine has never run these two kernels: no spec before this one runs them (specs run in
  // file order; keep ucontext.swapcontext and lock.go_mutex out of the earlier ones).
  await expect(estimate).not.toContainText('learnt');
  const guessed = seconds(await estimate.innerText());
  // 3 items × 3 launches × (0.3 s start + 2 × 0.2 s calibration + 2 × 0.2 s) = 9.9 s.
  expect(guessed).toBe(10);
  // It follows the settings: the thorough profile's 30 repetitions over 15 launches take longer.
  await page.getByLabel('Repetitions').fill('');
  await page.getByLabel(/Min time/).fill('');
  await page.getByLabel('Profile').selectOption('thorough');
  await expect(estimate).toHaveText(/× 15 launches × 2 repetitions × 0\.05 s/);
  expect(seconds(await estimate.innerText())).toBeGreaterThan(guessed);

  await fill();
  await page.getByRole('button', { name: 'Start run' }).click();
  await expect(page).toHaveURL(/\/runs\/[0-9a-f-]{36}$/);
  const runId = page.url().split('/').pop()!;
  await expect(page.getByTestId('run-status')).toHaveText('succeeded', { timeout: 90_000 });
  const run = (await (await request.get(`/api/v1/runs/${runId}`)).json()) as { started_at: string; finished_at: string };
  const took = (Date.parse(run.finished_at) - Date.parse(run.started_at)) / 1000;
  console.log(`estimate before any run: ${guessed} s; the run took ${took.toFixed(1)} s`);
  // An estimate, not a promise: within a factor of three of what the run took.
  expect(guessed).toBeGreaterThan(took / 3);
  expect(guessed).toBeLessThan(took * 3);

  // The same form again: the estimate now comes from the launches this machine just ran.
  await fill();
  await expect(estimate).toContainText('learnt from earlier runs here for 2 of 2 kernels');
  const learnt = seconds(await estimate.innerText());
  console.log(`estimate learnt from that run: ${learnt} s`);
  expect(learnt).toBeGreaterThan(took / 2);
  expect(learnt).toBeLessThan(took * 2);
});

/** The page itself does not scroll sideways at this width. */
async function expectNoSidewaysScroll(page: Page, what: string) {
  const { scrollWidth, innerWidth, offenders } = await page.evaluate(() => {
    const w = window.innerWidth;
    // What sticks out of the window outside any box that scrolls or clips it, to say what broke.
    const clipped = (e: Element) => {
      for (let p = e.parentElement; p && p !== document.body; p = p.parentElement) {
        const style = getComputedStyle(p);
        // A scroller clips an absolutely placed descendant only when it is its containing block.
        if (style.overflowX !== 'visible' && (getComputedStyle(e).position !== 'absolute' || style.position !== 'static')) return true;
      }
      return false;
    };
    const offenders = Array.from(document.querySelectorAll('body *'))
      .filter((e) => e.getBoundingClientRect().right > w + 1 && !clipped(e))
      .slice(0, 5)
      .map((e) => `${e.tagName.toLowerCase()}.${Array.from(e.classList).join('.')} right=${Math.round(e.getBoundingClientRect().right)}`);
    return { scrollWidth: document.documentElement.scrollWidth, innerWidth: w, offenders };
  });
  expect(scrollWidth, `${what}: page wider than the window (${offenders.join('; ')})`).toBeLessThanOrEqual(innerWidth);
}

test('every main page fits a 390 × 844 phone: no sideways page scroll, the nav in a menu, wide tables scroll in their box (issue 13, 5)', async ({ page, request, browser }) => {
  test.setTimeout(180_000);
  const machine = await onlyOnlineMachine(request);
  const created = await request.post('/api/v1/runs', {
    data: { machine_ids: [machine], profile: 'quick', repetitions: 2, min_time_s: 0.02, items: [{ kernel: 'lock.go_mutex', params: {}, sweep: { procs: [1, 2] } }] },
  });
  expect(created.status()).toBe(201);
  const { batch_id, runs } = (await created.json()) as { batch_id: string; runs: { id: string }[] };
  const runId = runs[0]!.id;
  await expect.poll(async () => ((await (await request.get(`/api/v1/runs/${runId}`)).json()) as { status: string }).status, { timeout: 60_000, intervals: [250] }).toBe('succeeded');

  await page.route('**/api/v1/compare?**', (route) => route.fulfill({ json: COMPARE_FIXTURE }));
  await page.route('**/api/v1/shares/Fixture0Slug39', (route) =>
    route.fulfill({ json: { view: { machines: ['m-a', 'm-b'], baseline: 'm-a' }, result_ids: COMPARE_FIXTURE.result_ids, created_at: '2026-11-22T03:00:00', compare: COMPARE_FIXTURE } }),
  );
  await page.setViewportSize({ width: 390, height: 844 });

  const pages: [string, string, () => Promise<void>][] = [
    ['/machines', 'Machines', async () => void (await expect(page.getByTestId('machine-row').first()).toBeVisible())],
    [`/machines/${machine}`, '', async () => void (await expect(page.getByRole('heading', { level: 1 })).toBeVisible())],
    ['/kernels', 'Kernels', async () => void (await expect(page.getByTestId('kernel-card').first()).toBeVisible())],
    ['/runs/new', 'New run', async () => void (await expect(page.getByTestId('kernel-option').first()).toBeVisible())],
    ['/runs', 'Runs', async () => void (await expect(page.getByRole('table')).toBeVisible())],
    [`/runs/${runId}`, '', async () => void (await expect(page.getByTestId('result-row')).toHaveCount(2))],
    [`/batches/${batch_id}`, '', async () => void (await expect(page.getByTestId('batch-run')).toHaveCount(1))],
    ['/compare?machines=m-a,m-b&baseline=m-a', 'Compare', async () => void (await expect(page.getByTestId('compare-row').first()).toBeVisible())],
    ['/s/Fixture0Slug39', '', async () => void (await expect(page.getByTestId('frozen-banner')).toBeVisible())],
    ['/hosts', 'Add hosts', async () => void (await expect(page.getByRole('heading', { level: 1 })).toBeVisible())],
    ['/schedules', 'Schedules', async () => void (await expect(page.getByRole('heading', { name: 'New schedule' })).toBeVisible())],
    ['/tokens', 'API tokens', async () => void (await expect(page.getByRole('heading', { level: 1 })).toBeVisible())],
  ];
  const nav = page.getByRole('navigation', { name: 'Main' });
  const menu = nav.getByRole('button', { name: 'Menu' });
  for (const [path, link, ready] of pages) {
    await page.goto(path);
    await ready();
    await page.waitForTimeout(300); // charts and late layout settle
    await expectNoSidewaysScroll(page, path);
    // The links sit behind the menu button; opened, each is on screen and can be followed.
    await expect(menu).toBeVisible();
    await expect(menu).toHaveAttribute('aria-expanded', 'false');
    await expect(nav.getByRole('link', { name: 'Kernels' })).toBeHidden();
    await menu.click();
    for (const name of ['Machines', 'Kernels', 'Compare', 'Runs', 'New run', 'Schedules', 'Add hosts', 'API docs', 'API tokens']) {
      const a = nav.getByRole('link', { name, exact: true });
      await expect(a).toBeInViewport({ ratio: 0.95 }); // sub-pixel layout: not exactly 1
    }
    await expectNoSidewaysScroll(page, `${path} with the menu open`);
    if (link) {
      await nav.getByRole('link', { name: link, exact: true }).click();
      await expect(menu).toHaveAttribute('aria-expanded', 'false');
    } else {
      await menu.click();
    }
  }

  // The results table is wider than the phone: it scrolls inside its own box, to the Figure column.
  await page.goto(`/runs/${runId}`);
  const wrap = page.locator('.table-wrap').filter({ has: page.getByTestId('result-row') });
  await expect(page.getByTestId('result-row')).toHaveCount(2);
  const { scrollWidth, clientWidth } = await wrap.evaluate((e) => ({ scrollWidth: e.scrollWidth, clientWidth: e.clientWidth }));
  expect(scrollWidth).toBeGreaterThan(clientWidth);
  expect(clientWidth).toBeLessThanOrEqual(390);
  const median = page.getByTestId('result-median').first();
  await median.scrollIntoViewIfNeeded();
  await expect(median).toBeInViewport({ ratio: 0.95 });
  await expectNoSidewaysScroll(page, 'run page scrolled to the median');

  // The New run form stacks its fields: Repetitions above Min time, at the same left edge.
  await page.goto(`/runs/new?machines=${machine}`);
  const [reps, minTime] = [(await page.getByLabel('Repetitions').boundingBox())!, (await page.getByLabel(/Min time/).boundingBox())!];
  expect(minTime.y).toBeGreaterThan(reps.y + reps.height);
  expect(Math.abs(minTime.x - reps.x)).toBeLessThan(2);

  // On a wide window the links are in the bar and there is no menu button.
  await page.setViewportSize({ width: 1280, height: 800 });
  await expect(menu).toBeHidden();
  await expect(nav.getByRole('link', { name: 'Kernels' })).toBeVisible();
  // Between the two (a split window), the bar wraps rather than overflowing.
  await page.setViewportSize({ width: 800, height: 800 });
  await expect(menu).toBeHidden();
  await expect(nav.getByRole('button', { name: 'Sign out' })).toBeInViewport({ ratio: 0.95 });
  await expectNoSidewaysScroll(page, 'New run at 800 px');

  // Signed out: the sign-in page fits too.
  const { context } = await signedOutContext(browser);
  const signedOut = await context.newPage();
  await signedOut.setViewportSize({ width: 390, height: 844 });
  await signedOut.goto('/signin');
  await expect(signedOut.getByRole('heading', { level: 1 })).toBeVisible();
  await expectNoSidewaysScroll(signedOut, '/signin');
  await context.close();
});

/** Relative luminance (0 black, 1 white) of a CSS rgb() colour. */
function luminance(rgb: string): number {
  const [r, g, b] = (rgb.match(/\d+(\.\d+)?/g) ?? []).slice(0, 3).map(Number).map((c) => {
    const s = c / 255;
    return s <= 0.03928 ? s / 12.92 : ((s + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r! + 0.7152 * g! + 0.0722 * b!;
}

test('the explorer follows a dark colour scheme, with readable text (issue 13, 5)', async ({ page }) => {
  const colours = () =>
    page.evaluate(() => {
      const root = getComputedStyle(document.documentElement);
      const cell = document.querySelector('.table td, .table th');
      return {
        bg: root.backgroundColor,
        fg: root.color,
        header: getComputedStyle(document.querySelector('.header')!).backgroundColor,
        cell: cell ? getComputedStyle(cell).color : root.color,
      };
    });
  await page.emulateMedia({ colorScheme: 'light' });
  await page.goto('/machines');
  await expect(page.getByTestId('machine-row').first()).toBeVisible();
  const light = await colours();
  expect(luminance(light.bg)).toBeGreaterThan(0.9);

  await page.emulateMedia({ colorScheme: 'dark' });
  const dark = await colours();
  expect(luminance(dark.bg), `dark background ${dark.bg}`).toBeLessThan(0.05);
  expect(luminance(dark.header)).toBeLessThan(0.05);
  // Text light on dark: a contrast ratio of at least 7:1.
  for (const fg of [dark.fg, dark.cell]) expect((luminance(fg) + 0.05) / (luminance(dark.bg) + 0.05)).toBeGreaterThan(7);
});
