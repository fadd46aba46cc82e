import { expect, test, type APIRequestContext, type Page } from './fixtures';
import { localMachine, postRun, runReaches } from './runs';
import { COMPARE_FIXTURE } from './compare-fixture';
import { startAgent, stopAgent } from './agents';

// Issue 13 "The explorer people live in", its numbered problems 3, 4, 9, 10 and 11, as a new user at
// 1440×900 met them: the results table fits and its counters explain themselves, a median's samples open
// in view, machine facts read as words, kernel texts and titles read as prose, and "Compare with…" leads
// somewhere. The run tests use the real server and run.sh's real agent; none skips itself.

test.describe.configure({ mode: 'serial' });
test.use({ viewport: { width: 1440, height: 900 } });

/** run.sh's agent's machine id, once it is online. */
const localMachineId = async (request: APIRequestContext): Promise<string> => (await localMachine(request)).id;

/** A short run of a few kernels with many counters and long parameters, waited for until it ends. */
let measured: { id: string; machine: string } | null = null;
async function measuredRun(request: APIRequestContext): Promise<{ id: string; machine: string }> {
  if (measured) return measured;
  const machine = await localMachineId(request);
  const id = await postRun(request, {
    machine_id: machine,
    repetitions: 2,
    min_time_s: 0.02,
    items: [
      { kernel: 'syscall.getppid', params: {} },
      { kernel: 'ctxswitch.pipe', params: { placement: 'same_core' } },
      { kernel: 'sched.yield', params: { threads: 2 } },
      { kernel: 'storage.write', params: { pattern: 'rand', block_size: 512, target: 'memory', cache: 'buffered', file_mb: 4 } },
    ],
  });
  await runReaches(request, id, 'succeeded', 120_000);
  measured = { id, machine };
  return measured;
}

/** The page does not scroll sideways, and the element's own box does not either. */
async function expectFits(page: Page, selector: string) {
  const widths = await page.locator(selector).first().evaluate((el) => ({
    scroll: el.scrollWidth,
    client: el.clientWidth,
    page: document.documentElement.scrollWidth,
    viewport: window.innerWidth,
  }));
  expect(widths.scroll, `${selector} scrollWidth vs its clientWidth`).toBeLessThanOrEqual(widths.client);
  expect(widths.page, 'page scrollWidth vs the viewport').toBeLessThanOrEqual(widths.viewport);
}

test('the results table fits at 1440 px and each counter says what it means (issue 13, 3)', async ({ page, request }) => {
  test.setTimeout(180_000);
  const run = await measuredRun(request);
  await page.goto(`/runs/${run.id}`);
  const rows = page.getByTestId('result-row');
  await expect(rows).toHaveCount(4);
  await expectFits(page, '.table-wrap:has(table.results)');

  // Compact: one summary line per row, every counter with its explanation on demand.
  const pipe = rows.filter({ hasText: 'ctxswitch.pipe' });
  const counters = pipe.getByTestId('result-counters');
  await expect(counters.locator('summary')).toHaveText(/switches\/op/);
  await counters.locator('summary').click();
  const voluntary = counters.locator('[data-counter="voluntary_ctxsw_per_op"]');
  await expect(voluntary).toBeVisible();
  await expect(voluntary).toHaveAttribute('title', /Voluntary context switches per op/);
  await expect(voluntary).toContainText('voluntary switches/op');
  await expect(counters.locator('[data-counter="cpu_main"]')).toContainText('The CPU the measuring task was pinned to');
  const yieldCounters = rows.filter({ hasText: 'sched.yield' }).getByTestId('result-counters');
  await yieldCounters.locator('summary').click();
  await expect(yieldCounters.locator('[data-counter="overlap"]')).toContainText('summed run time over the wall time');
  const getppid = rows.filter({ hasText: 'syscall.getppid' }).getByTestId('result-counters');
  await getppid.locator('summary').click();
  await expect(getppid.locator('[data-counter="cpu_wall_ratio"]')).toHaveAttribute('title', /CPU time over wall time/);
  // Opened, the table still fits.
  await expectFits(page, '.table-wrap:has(table.results)');
});

test("a median's samples open in view, focused, even below a long table (issue 13, 4)", async ({ page }) => {
  // Thirty sweep points on top of the fixture's rows: the distribution opens under a long table.
  const template = COMPARE_FIXTURE.rows[0]!;
  const extra = Array.from({ length: 30 }, (_, i) => ({
    ...template,
    kernel: 'sleep.usleep0',
    params: { threads: i + 1, placement: 'same_core' },
    params_key: `placement=same_core&threads=${String(i + 1).padStart(2, '0')}`,
  }));
  await page.route('**/api/v1/compare?**', (route) => route.fulfill({ json: { ...COMPARE_FIXTURE, rows: [...COMPARE_FIXTURE.rows, ...extra] } }));
  await page.goto('/compare?machines=m-a,m-b&baseline=m-a');
  await expect(page.getByTestId('compare-row')).toHaveCount(35);
  const first = page.getByTestId('compare-row').first();
  await expect(first).toBeInViewport();
  await first.getByTestId('compare-median').first().click();
  await expect(page).toHaveURL(/cell=/);
  await expect(page.getByTestId('distribution')).toBeInViewport();
  const panel = page.getByTestId('distribution-panel');
  await expect(panel.getByRole('heading', { name: 'Distribution' })).toBeInViewport();
  await expect(panel).toBeFocused();
  // Another median (the table's last row, syscall.getppid) from the top: the panel comes back into view.
  await page.evaluate(() => window.scrollTo(0, 0));
  await expect(panel).not.toBeInViewport();
  await page.getByTestId('compare-row').last().getByTestId('compare-median').first().click();
  await expect(page.getByTestId('distribution')).toContainText('syscall.getppid');
  await expect(panel.getByRole('heading', { name: 'Distribution' })).toBeInViewport();
});

test('machine facts read as words, in the right groups, with one governor on the list and the page (issue 13, 9)', async ({ page, request }) => {
  const machine = await localMachineId(request);
  await page.goto('/machines');
  const row = page.locator(`[data-machine-id="${machine}"]`);
  const listGovernor = row.locator('.facts div').filter({ has: page.locator('dt', { hasText: /^Governor$/ }) }).locator('dd');
  await expect(listGovernor).not.toHaveText('');
  const governor = (await listGovernor.textContent())!.trim();
  expect(governor).not.toBe('unknown');

  await page.goto(`/machines/${machine}`);
  const group = (title: string) => page.getByTestId('fact-group').filter({ has: page.getByRole('heading', { name: title, exact: true }) });
  const fact = (title: string, label: string) => group(title).locator('dl > div').filter({ has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) });
  // Labels in words, the raw key kept as the tooltip.
  await expect(fact('CPU', 'Logical CPUs').locator('dt')).toHaveAttribute('title', 'logical_cpus');
  await expect(fact('CPU', 'SMT \\(hyper-threading\\)').locator('dt')).toHaveAttribute('title', 'smt_active');
  await expect(fact('CPU', 'L1 data cache').locator('dt')).toHaveAttribute('title', 'caches.L1d');
  await expect(fact('Kernel & mitigations', 'Spectre v2')).toHaveCount(1);
  // No raw key is shown as a label.
  for (const dt of await page.getByTestId('fact-group').locator('dt').allTextContents()) expect(dt, 'a fact label').not.toMatch(/_|^caches\.|^vulnerabilities\./);
  // Load average is load, not virtualization; the governor is under frequency, with the list's value.
  await expect(fact('Load', 'Load average \\(1, 5, 15 min\\)')).toHaveCount(1);
  await expect(group('Virtualization & limits').locator('dt', { hasText: /Load/ })).toHaveCount(0);
  await expect(fact('Frequency & clocks', 'Governor').locator('dd')).toHaveText(governor);
  // Labels do not break inside a word (they wrap between words, if at all) and do not overflow.
  const broken = await page
    .getByTestId('fact-group')
    .locator('dt')
    .evaluateAll((els) => els.filter((el) => getComputedStyle(el).overflowWrap === 'anywhere' || getComputedStyle(el).wordBreak === 'break-all' || el.scrollWidth > el.clientWidth).map((el) => el.textContent));
  expect(broken, 'labels that break inside a word or overflow').toEqual([]);
});

test('kernel texts render code, seeds explain themselves in English, and kernels are links (issue 13, 10)', async ({ page }) => {
  await page.goto('/kernels');
  await expect(page.getByTestId('kernel-card').first()).toBeVisible();
  // Backticks become code.
  const yieldCard = page.getByTestId('kernel-card').filter({ has: page.locator('h3', { hasText: /^sched\.yield/ }) });
  await expect(yieldCard.locator('.kernel-description code', { hasText: /^threads$/ }).first()).toBeVisible();
  await expect(yieldCard.locator('.kernel-description')).not.toContainText('`');
  // "Seed 000" says what a seed is and which write-up it was, and the page lists the write-ups.
  const seed = page.getByTestId('kernel-card').filter({ has: page.locator('h3', { hasText: /^syscall\.getppid/ }) }).getByTestId('seed-reference');
  const seedLink = seed.getByRole('link', { name: 'Seed 000' });
  await expect(seedLink).toHaveAttribute('title', /published write-up.*Efficiency tests/);
  await seedLink.click();
  await expect(page.locator('#seeds')).toBeInViewport();
  await expect(page.locator('#seeds')).toContainText('A seed is one of five published write-ups');
  await expect(page.getByTestId('seed-entry')).toHaveCount(5);
  // Every seed note is English.
  for (const note of await page.getByTestId('seed-reference').allTextContents()) expect(note, 'a seed note').not.toMatch(/[\u3400-\u9fff]/);
  await expect(page.getByTestId('seed-reference')).not.toHaveCount(0);

  // /kernels/<id> is that kernel's own entry.
  await page.goto('/kernels/ctxswitch.pipe');
  await expect(page.getByRole('heading', { level: 1 })).toContainText('ctxswitch.pipe');
  await expect(page.getByTestId('kernel-card')).toHaveCount(1);
  await expect(page.getByTestId('seed-reference')).toContainText('Seed 003');
});

test('a run is titled by what it measured, and its kernels link to their entries (issue 13, 10)', async ({ page, request }) => {
  test.setTimeout(180_000);
  const run = await measuredRun(request);
  const name = ((await (await request.get(`/api/v1/machines/${run.machine}`)).json()) as { name: string }).name;
  await page.goto(`/runs/${run.id}`);
  const title = page.getByRole('heading', { level: 1 });
  await expect(title).toContainText(`4 kernels on ${name}`);
  await expect(title).toContainText(/\d{4}-\d{2}-\d{2} \d{2}:\d{2}/);
  await expect(page.getByTestId('run-id')).toHaveText(run.id);
  await expect(page).toHaveTitle(new RegExp(`4 kernels on ${name}`));
  // The runs list names it the same way.
  await page.goto('/runs');
  await expect(page.getByTestId('run-row').filter({ hasText: `4 kernels on ${name}` }).first()).toBeVisible();

  await page.goto(`/runs/${run.id}`);
  await page.getByTestId('result-row').filter({ hasText: 'ctxswitch.pipe' }).getByTestId('kernel-link').click();
  await expect(page).toHaveURL(/\/kernels\/ctxswitch\.pipe$/);
  await expect(page.getByTestId('kernel-card')).toHaveCount(1);
  await expect(page.getByTestId('kernel-card')).toContainText('ping-pong');
});

test('"Compare with…" opens compare with this machine and offers the others; family shortcuts are chips (issue 13, 11)', async ({ page, request }) => {
  test.setTimeout(180_000);
  // A kernel no other spec runs, so no other machine of this stack has results for it.
  const machine = await localMachineId(request);
  const runId = await postRun(request, { machine_id: machine, repetitions: 2, min_time_s: 0.02, items: [{ kernel: 'call.indirect', params: {} }] });
  await runReaches(request, runId, 'succeeded', 60_000);
  const recent = page.waitForResponse((r) => r.url().includes('/api/v1/runs?') && r.url().includes('status=succeeded'));
  await page.goto(`/runs/${runId}`);
  await recent;
  await page.getByRole('link', { name: 'Compare with…' }).click();
  await expect(page).toHaveURL(new RegExp(`/compare\\?machines=${machine}&kernels=call\\.indirect&baseline=${machine}&runs=${runId}$`));
  const prompt = page.getByTestId('compare-prompt');
  await expect(prompt).toContainText(/Pick a machine to compare with \S+\./);
  await expect(prompt.getByRole('link', { name: /Add hosts/ })).toBeVisible();
  // Every other machine is one click away.
  const others = ((await (await request.get('/api/v1/machines')).json()) as { id: string }[]).filter((m) => m.id !== machine);
  await expect(prompt.getByTestId('add-machine')).toHaveCount(others.length);

  // Family shortcuts: separate chips that toggle a family in the address.
  await page.goto(`/compare?machines=${machine}`);
  const chips = page.getByTestId('family-chip');
  await expect(chips.filter({ hasText: /^syscall$/ })).toBeVisible();
  expect(await chips.count()).toBeGreaterThan(3);
  const boxes = await chips.evaluateAll((els) => els.map((e) => e.getBoundingClientRect()).map((r) => ({ left: r.left, right: r.right, top: r.top })));
  for (let i = 1; i < boxes.length; i++) {
    if (boxes[i]!.top === boxes[i - 1]!.top) expect(boxes[i]!.left - boxes[i - 1]!.right, 'gap between chips').toBeGreaterThanOrEqual(4);
  }
  const sched = chips.filter({ hasText: /^sched$/ });
  await expect(sched).toHaveAttribute('aria-pressed', 'false');
  await sched.click();
  await expect(page).toHaveURL(/kernels=sched\.\*/);
  await expect(sched).toHaveAttribute('aria-pressed', 'true');
  await sched.click();
  await expect(page).not.toHaveURL(/kernels=/);
});

test('"Compare with…" preselects the most recent other machine with results for these kernels (issue 13, 11)', async ({ page, request }) => {
  test.setTimeout(180_000);
  const run = await measuredRun(request);
  const { id: second, agent } = await startAgent(request, 'second', run.machine);
  try {
    const other = await postRun(request, { machine_id: second, repetitions: 2, min_time_s: 0.02, items: [{ kernel: 'syscall.getppid', params: {} }] });
    await runReaches(request, other, 'succeeded', 60_000);

    await page.goto(`/runs/${run.id}`);
    const link = page.getByRole('link', { name: 'Compare with…' });
    await expect(link).toHaveAttribute('href', new RegExp(`machines=${run.machine},${second}&`));
    await link.click();
    await expect(page).toHaveURL(new RegExp(`machines=${run.machine},${second}&.*baseline=${run.machine}&runs=${run.id}`));
    // This run's kernel that the other machine has measured is compared at once.
    await expect(page.getByTestId('compare-row').filter({ hasText: 'syscall.getppid' })).toHaveCount(1);
    await expect(page.getByTestId('compare-row').filter({ hasText: 'syscall.getppid' }).getByTestId('compare-cell')).toHaveCount(2);
  } finally {
    await stopAgent(agent);
  }
});
