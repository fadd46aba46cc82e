import { describe, expect, it } from 'vitest';
import { geomean, geomeanRows, isWorse, rowWarning, sortMachineOf, sortRows } from './table';
import { response, row } from './fixture';

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
    expect(rowWarning(r, ['storage.write block=4096: units differ (MB/s vs ns/op)'])).toMatch(/units differ/);
    expect(rowWarning(r, [{ kernel: 'storage.write', params_key: 'block=4096', message: 'units differ' }])).toBe('units differ');
    expect(rowWarning(r, ['sched.yield: something'])).toBeNull();
  });
});

describe('isWorse', () => {
  it('reads the ratio with the unit’s direction', () => {
    expect(isWorse(2, false)).toBe(true);
    expect(isWorse(2, true)).toBe(false);
  });
});
