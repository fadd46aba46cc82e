// Builders of the REST shapes for unit tests: every field the generated types require, filled with a
// neutral value, so a test spells out only what it is about (and a field the server adds is added here
// once, not in each test).
import type { CompareCell, CompareResponse, CompareRow, Kernel, ParamSpec, Result, ResultLaunch, Run, RunItem } from './api-types';
import type { Limits } from './limits';
import type { ParamRule } from './params';

export function aParam(rule: ParamRule): ParamSpec {
  return { default: null, min: null, max: null, sweep: [], choices: [], help: '', ...rule };
}

export function aKernel(id: string, over: Partial<Kernel> = {}): Kernel {
  return {
    id,
    title: id,
    family: id.split('.')[0] ?? '',
    unit: 'ns/op',
    description: '',
    executable: 'ctxbench-kernels-cpp',
    params: [],
    seed_reference: null,
    machines: [],
    aliases: [],
    ...over,
  };
}

export function progress(total: number, done: number, failed = 0, running = 0, launches: Partial<Run['progress']> = {}): Run['progress'] {
  return { total, done, failed, running, launches_done: 0, launches_planned: 0, launches_wall_s: 0, launch_at: null, ...launches };
}

export function aRunItem(over: Pick<RunItem, 'id' | 'index' | 'state'> & Partial<RunItem>): RunItem {
  return {
    kernel: 'k',
    params: {},
    error: null,
    result_id: null,
    timeout_s: 600,
    attempt: 1,
    launches_done: 0,
    launches_planned: 0,
    launches_wall_s: 0,
    launch_at: null,
    ...over,
  };
}

export function aRun(over: Partial<Run> = {}): Run {
  return {
    id: 'r1',
    machine_id: 'm1',
    batch_id: 'r1',
    profile: 'default',
    status: 'running',
    queued_at: '2026-01-01T00:00:00Z',
    created_at: '2026-01-01T00:00:00Z',
    started_at: null,
    finished_at: null,
    error: null,
    repetitions: null,
    min_time_s: null,
    launches: null,
    rerun_cv: null,
    max_reruns: null,
    facts: null,
    request: { items: [], profile: 'default' },
    items: [],
    progress: progress(0, 0),
    ...over,
  };
}

/** One launch of a result: undisturbed, kept. */
export function aLaunch(over: Pick<ResultLaunch, 'index' | 'wall_s' | 'samples'> & Partial<ResultLaunch>): ResultLaunch {
  return { cpu_s: null, other_busy_frac: null, steal_frac: null, throttled_s: null, disturbed: false, remeasured: false, kept: true, ...over };
}

/** A long-sample result: its figure is its median (give `figure`, `figure_stat`, `estimator` for a short-sample one). */
export function aResult(over: Pick<Result, 'id' | 'item_id'> & Partial<Result>): Result {
  const median = over.median === undefined ? 1 : over.median;
  return {
    run_id: 'r1',
    machine_id: 'm1',
    kernel: 'k',
    status: 'succeeded',
    params: {},
    params_key: '',
    unit: 'ns/op',
    n: 5,
    median,
    figure: median,
    figure_stat: 'median',
    estimator: null,
    mean: 1,
    stddev: 0,
    cv: 0,
    min: 1,
    max: 1,
    ci_low: 1,
    ci_high: 1,
    ci_method: null,
    samples: [1, 1, 1, 1, 1],
    iterations: [],
    sample_launches: null,
    counters: {},
    harness: {},
    reruns: 0,
    noisy: false,
    attempt: 1,
    attempt_cvs: [],
    launches: null,
    disturbance: null,
    interference: null,
    agent_version: null,
    error: null,
    exit_code: 0,
    started_at: null,
    finished_at: null,
    created_at: '2026-01-01T00:00:00Z',
    ...over,
  };
}

/** A GET /limits answer (the server's tables as of this writing; tests that are about a limit change it). */
export const LIMITS: Limits = {
  profiles: {
    quick: { min_time_s: 0.05, repetitions: 6, launches: 3, thin_sweeps: true, sample_time_s: 0.0005 },
    default: { min_time_s: 0.1, repetitions: 6, launches: 3, thin_sweeps: false, sample_time_s: 0.0005 },
    thorough: { min_time_s: 0.25, repetitions: 12, launches: 6, thin_sweeps: false, sample_time_s: 0.0005 },
  },
  default_profile: 'default',
  max_items_per_run: 1000,
  max_machines_per_batch: 100,
  max_batch_items: 20000,
  max_params_per_item: 32,
  max_sweep_values: 256,
  max_param_string: 1024,
  max_launches: 20,
  max_run_kernel_s: 86400,
  max_body_bytes: 1048576,
  max_compare_machines: 8,
  item_timeout_s: 600,
  kernel_defaults: { min_time_s: 0.2, repetitions: 5 },
};

// A small GET /compare answer (two machines, A the baseline) from rows of figures: long-sample cells,
// whose figure is their median (`extra` gives another figure).
export function cell(median: number, extra: Partial<CompareCell> = {}): CompareCell {
  return { result_id: `res-${median}`, run_id: 'run-1', median, figure: median, figure_stat: 'median', ci_low: median * 0.9, ci_high: median * 1.1, n: 5, cv: 0.01, noisy: false, samples: [median], created_at: null, ...extra };
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
