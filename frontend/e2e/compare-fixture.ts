import type { Page } from './fixtures';

// A GET /compare answer in the contract's shape (docs/architecture.md "Compare and share"), for the
// browser test that checks how the page draws one without depending on the server's statistics.
const samples = (median: number, n = 7) => Array.from({ length: n }, (_, i) => median * (1 + (i - (n - 1) / 2) * 0.004));

// Long-sample cells: the figure (what the ratios compare) is the median.
const cell = (median: number, extra: Record<string, unknown> = {}) => ({
  result_id: `res-${median}`,
  run_id: 'run-x',
  median,
  figure: median,
  figure_stat: 'median',
  ci_low: median * 0.98,
  ci_high: median * 1.02,
  n: 7,
  cv: 0.01,
  noisy: false,
  samples: samples(median),
  created_at: '2026-11-22T03:00:00',
  ...extra,
});

const ratio = (r: number, significant = true) => ({
  ratio: r,
  ci_low: r * 0.97,
  ci_high: r * 1.03,
  p_value: null,
  significant,
  ci_kind: 'bootstrap_few_launches',
  significance: { significant, rule: significant ? 'ci_excludes_noise' : 'within_noise', noise: 0.05, noise_source: 'default', ci_level: 0.95, n_launches: [3, 3] },
});
const base = { ratio: 1, ci_low: 1, ci_high: 1, p_value: null, significant: false };

const yieldRow = (threads: number, a: number, b: number) => ({
  kernel: 'sched.yield',
  family: 'sched',
  params: { threads, placement: 'same_core' },
  params_key: `placement=same_core&threads=${threads}`,
  unit: 'ns/op',
  cells: { 'm-a': cell(a, { ci_kind: 'minmax', n_launches: 3 }), 'm-b': cell(b, { ci_kind: 'minmax', n_launches: 3 }) },
  ratios: { 'm-a': base, 'm-b': ratio(b / a) },
  seed_reference: { seed: '001', value: 900, unit: 'ns/op', machine: 'seed laptop', params: { threads: 2, placement: 'same_core' }, note: null },
});

export const COMPARE_FIXTURE = {
  machines: [
    { id: 'm-a', name: 'alpha', hostname: 'alpha.local', online: true, facts: {} },
    { id: 'm-b', name: 'beta', hostname: 'beta.local', online: false, facts: {} },
  ],
  baseline: 'm-a',
  rows: [
    yieldRow(1, 100, 150),
    yieldRow(2, 800, 1000),
    yieldRow(4, 1600, 2600),
    {
      kernel: 'syscall.getppid',
      family: 'syscall',
      params: {},
      params_key: '',
      unit: 'ns/op',
      cells: { 'm-a': cell(50), 'm-b': cell(48, { noisy: true, cv: 0.05 }) },
      ratios: { 'm-a': base, 'm-b': ratio(0.96, false) },
      seed_reference: null,
    },
    {
      kernel: 'storage.write',
      family: 'storage',
      params: { block: 4096 },
      params_key: 'block=4096',
      unit: 'MB/s',
      units: { 'm-a': 'MB/s', 'm-b': 'ns/op' },
      cells: { 'm-a': cell(900), 'm-b': cell(4000) },
      ratios: {},
      seed_reference: null,
      warning: 'storage.write block=4096: units differ between machines (MB/s vs ns/op): no ratio',
    },
  ],
  geomean: { 'm-a': 1, 'm-b': 1.2 },
  geomean_by_family: { sched: { 'm-a': 1, 'm-b': 1.35 }, syscall: { 'm-a': 1, 'm-b': 0.96 } },
  facts_diff: [
    { fact: 'cpu_model', values: { 'm-a': 'Xeon E5', 'm-b': 'EPYC 7B13' }, hint: 'different CPUs: every figure moves' },
    { fact: 'vulnerabilities.spectre_v2', values: { 'm-a': 'Mitigation: IBRS', 'm-b': 'Not affected' }, hint: 'syscall costs depend on mitigations' },
  ],
  result_ids: ['res-100', 'res-150'],
  warnings: ['storage.write block=4096: units differ between machines (MB/s vs ns/op): no ratio'],
};

/**
 * The server faked for a page: GET /compare answers COMPARE_FIXTURE, POST /shares answers with `slug`,
 * and GET /shares/`slug` gives back the view that was posted, frozen with the fixture. `view()` is what
 * the page posted (null before it shared).
 */
export async function fakeCompareAndShare(page: Page, slug: string): Promise<{ view: () => unknown }> {
  let sharedView: unknown = null;
  await page.route('**/api/v1/compare?**', (route) => route.fulfill({ json: COMPARE_FIXTURE }));
  await page.route('**/api/v1/shares', (route) => {
    sharedView = (route.request().postDataJSON() as { view: unknown }).view;
    return route.fulfill({ status: 201, json: { slug, url: `/s/${slug}` } });
  });
  await page.route(`**/api/v1/shares/${slug}`, (route) =>
    route.fulfill({ json: { view: sharedView, result_ids: COMPARE_FIXTURE.result_ids, created_at: '2026-11-22T03:00:00', compare: COMPARE_FIXTURE } }),
  );
  return { view: () => sharedView };
}
