import { describe, expect, it } from 'vitest';
import { ciLabel, ciTitle, geomean, geomeanRows, isWorse, kernelScales, rowWarning, ruleShort, ruleTitle, scaleKey, sortMachineOf, sortRows } from './table';
import { cell, response, row } from '@/lib/test-fixtures';

const rows = [
  row('sched.yield', { threads: 16 }, 100, 300),
  row('sched.yield', { threads: 2 }, 100, 50),
  row('ctxswitch.pipe', { placement: 'same_core' }, 1000, 1000),
  row('syscall.getppid', {}, 50, 100, { ratios: {} }),
];

describe('sortRows', () => {
  it('orders by family, kernel, then parameters naturally', () => {
    expect(sortRows(rows, 'kernel', 'B').map((r) => `${r.kernel} ${r.params_key}`)).toEqual([
      'ctxswitch.pipe placement=same_core',
      'sched.yield threads=2',
      'sched.yield threads=16',
      'syscall.getppid ',
    ]);
  });

  it('orders by ratio both ways, rows without a ratio last', () => {
    expect(sortRows(rows, 'ratio', 'B').map((r) => r.ratios.B?.ratio ?? null)).toEqual([0.5, 1, 3, null]);
    expect(sortRows(rows, '-ratio', 'B').map((r) => r.ratios.B?.ratio ?? null)).toEqual([3, 1, 0.5, null]);
  });

  it('falls back to the first machine that is not the baseline', () => {
    expect(sortMachineOf(['A', 'B', 'C'], 'A', null)).toBe('B');
    expect(sortMachineOf(['A', 'B', 'C'], 'A', 'C')).toBe('C');
    expect(sortMachineOf(['A', 'B'], 'A', 'Z')).toBe('B');
    expect(sortMachineOf(['A'], 'A', null)).toBeNull();
  });
});

describe('geomean', () => {
  it('is the nth root of the product, ignoring missing values', () => {
    expect(geomean([2, 8])).toBeCloseTo(4);
    expect(geomean([0.5, 2, null, undefined, Number.NaN])).toBeCloseTo(1);
    expect(geomean([])).toBeNull();
  });
});

describe('geomeanRows', () => {
  it('has one row per family and one overall, computed when the server leaves them out', () => {
    const g = geomeanRows(response(rows));
    expect(g.map((r) => r.label)).toEqual([
      'ctxswitch (geometric mean)',
      'sched (geometric mean)',
      'syscall (geometric mean)',
      'All kernels (geometric mean)',
    ]);
    expect(g[1]!.ratios.B).toBeCloseTo(Math.sqrt(3 * 0.5));
    expect(g[2]!.ratios.B).toBeNull();
    expect(g[3]!.ratios.B).toBeCloseTo(Math.cbrt(3 * 0.5 * 1));
  });

  it("prefers the server's figures", () => {
    const g = geomeanRows(response(rows, { geomean: { A: 1, B: 2.5 }, geomean_by_family: { sched: { A: 1, B: 9 } } }));
    expect(g.find((r) => r.family === 'sched')!.ratios.B).toBe(9);
    expect(g.at(-1)!.ratios.B).toBe(2.5);
  });
});

describe('rowWarning', () => {
  it("finds the server's warning on the row or in the list", () => {
    const r = row('storage.write', { block: 4096 }, 1, 2);
    expect(rowWarning({ ...r, warning: 'units differ' }, [])).toBe('units differ');
    expect(rowWarning(r, [{ kernel: 'storage.write', params_key: 'block=4096', message: 'units differ' }])).toBe('units differ');
    expect(rowWarning(r, [{ row: 'storage.write', message: 'units differ (MB/s vs ns/op)' }])).toBe('units differ (MB/s vs ns/op)');
    expect(rowWarning(r, [{ kernel: 'storage.write', params_key: 'block=8', message: 'another point' }])).toBeNull();
    expect(rowWarning(r, [{ kernel: 'sched.yield', message: 'something' }])).toBeNull();
  });
});

describe('isWorse', () => {
  it('reads the ratio with the unit’s direction', () => {
    expect(isWorse(2, false)).toBe(true);
    expect(isWorse(2, true)).toBe(false);
  });
});

describe('interval labels and the significance rule', () => {
  const ratio = (rule: 'ci_excludes_noise' | 'ci_includes_1' | 'within_noise' | 'too_few_launches', source: 'runs' | 'default' = 'default') => ({
    ratio: 1.2,
    ci_low: 1.1,
    ci_high: 1.3,
    p_value: null,
    significant: rule === 'ci_excludes_noise',
    ci_kind: 'bootstrap_few_launches' as const,
    significance: { significant: rule === 'ci_excludes_noise', rule, noise: 0.05, noise_source: source, ci_level: 0.95, n_launches: [3, 3] },
  });

  it('calls an interval 95 % only when it is one', () => {
    expect(ciLabel('bootstrap95')).toBe('95 % CI');
    expect(ciLabel('minmax')).toBe('min–max');
    expect(ciLabel('bootstrap_few_launches')).toBe('CI < 95 %');
    expect(ciLabel(undefined)).toBe('CI');
    expect(ciTitle('minmax')).toMatch(/^Min–max of the samples/);
    expect(ciTitle('bootstrap_few_launches')).toMatch(/covers less than 95 %/);
    expect(ciTitle(null)).toMatch(/kind is not recorded/);
  });

  it('says which rule decided, with the noise and where it came from', () => {
    expect(ruleShort(ratio('ci_excludes_noise'))).toBe('beyond 5 % noise');
    expect(ruleShort(ratio('within_noise', 'runs'))).toBe('within 5 % noise (runs)');
    expect(ruleShort(ratio('too_few_launches'))).toBe('too few launches');
    expect(ruleShort(ratio('ci_includes_1'))).toBeNull();
    expect(ruleTitle(ratio('within_noise', 'runs'))).toContain("the spread of these machines' own runs");
    expect(ruleTitle(ratio('ci_excludes_noise'))).toMatch(/^Significant: .*default floor.*launches 3 vs 3$/);
  });

  it('keeps older answers (no significance) readable', () => {
    expect(ruleShort({ ratio: 2, ci_low: 1.9, ci_high: 2.1, p_value: 0.01, significant: true })).toBeNull();
    expect(ruleTitle({ ratio: 2, ci_low: 1.9, ci_high: 2.1, p_value: 0.01, significant: true })).toBe('Mann-Whitney U p = 0.010');
  });
});

describe('kernelScales', () => {
  it("gives every row of a kernel (and its chart's axis) one unit, from the kernel's smallest figure", () => {
    const sweep = [row('sched.yield', { threads: 1 }, 514, 600), row('sched.yield', { threads: 8 }, 1420, 2600)];
    const slow = row('process.fork', {}, 80_000, 95_000);
    const scales = kernelScales([...sweep, slow]);
    expect(scales.get(scaleKey(sweep[1]!))).toEqual({ factor: 1, unit: 'ns/op' });
    expect(scales.get(scaleKey(slow))).toEqual({ factor: 1e-3, unit: 'µs/op' });
  });

  it('reads the figures: p5 figures under 1 µs keep ns/op however slow the medians', () => {
    const shortSamples = row('sched.yield', { threads: 2 }, 1500, 2000, {
      cells: { A: cell(1500, { figure: 900, figure_stat: 'p5' }), B: cell(2000, { figure: 1100, figure_stat: 'p5' }) },
    });
    expect(kernelScales([shortSamples]).get(scaleKey(shortSamples))).toEqual({ factor: 1, unit: 'ns/op' });
    // An answer without figures: the medians choose, as before.
    const older = { ...shortSamples, cells: { A: cell(1500, { figure: null }), B: cell(2000, { figure: null }) } };
    expect(kernelScales([older]).get(scaleKey(older))).toEqual({ factor: 1e-3, unit: 'µs/op' });
  });
});
