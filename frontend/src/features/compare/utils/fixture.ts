// A small GET /compare answer for the unit tests (two machines, a sweep, a family mean).
import type { CompareCell, CompareResponse, CompareRow } from '@/lib/api-types';

export function cell(median: number, extra: Partial<CompareCell> = {}): CompareCell {
  return { result_id: `res-${median}`, run_id: 'run-1', median, ci_low: median * 0.9, ci_high: median * 1.1, n: 5, cv: 0.01, noisy: false, samples: [median], created_at: null, ...extra };
}

export function row(kernel: string, params: Record<string, number | string>, a: number, b: number, extra: Partial<CompareRow> = {}): CompareRow {
  const params_key = Object.keys(params).sort().map((k) => `${k}=${params[k]}`).join('&');
  return {
    kernel,
    family: kernel.split('.')[0]!,
    params,
    params_key,
    unit: 'ns/op',
    higher_is_better: false,
    cells: { A: cell(a), B: cell(b) },
    ratios: { A: { ratio: 1, ci_low: 1, ci_high: 1, p_value: null, significant: false }, B: { ratio: b / a, ci_low: (b / a) * 0.9, ci_high: (b / a) * 1.1, p_value: 0.01, significant: true } },
    seed_reference: null,
    ...extra,
  };
}

export function response(rows: CompareRow[], extra: Partial<CompareResponse> = {}): CompareResponse {
  return {
    machines: [
      { id: 'A', name: 'alpha', hostname: 'alpha', online: true, facts: {}, facts_run_id: null },
      { id: 'B', name: 'beta', hostname: 'beta', online: true, facts: {}, facts_run_id: null },
    ],
    baseline: 'A',
    rows,
    geomean: {},
    geomean_by_family: {},
    geomean_direction: 'time: > 1 is slower than the baseline (throughput ratios are inverted first)',
    facts_diff: [],
    result_ids: [],
    warnings: [],
    ...extra,
  };
}
