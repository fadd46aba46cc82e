import { describe, expect, it } from 'vitest';
import { counterLines, counterSummary, describeCounter, formatPerOp } from './counters';

describe('describeCounter', () => {
  it('explains the counters kernels/README.md describes', () => {
    expect(describeCounter('voluntary_ctxsw_per_op').help).toMatch(/^Voluntary context switches per op/);
    expect(describeCounter('cpu_wall_ratio')).toMatchObject({ label: 'CPU/wall', help: expect.stringContaining('about 1.0 on a quiet host') });
    expect(describeCounter('overlap').help).toMatch(/about N when N threads really ran side by side/);
    expect(describeCounter('cpu_main').label).toBe('CPU (main)');
  });

  it('still says something about a counter it does not know', () => {
    expect(describeCounter('resumes_per_op')).toEqual({ name: 'resumes_per_op', label: 'resumes/op', help: 'resumes per op, counted by the kernel while it measured.' });
    expect(describeCounter('odd')).toEqual({ name: 'odd', label: 'odd', help: 'Reported by the kernel as "odd".' });
  });
});

describe('counterLines', () => {
  it('orders the checks of the op first, then the rest by name', () => {
    const lines = counterLines({ zeta_per_op: 1, cpu_main: 0, overlap: 3.9, involuntary_ctxsw_per_op: 0.01, voluntary_ctxsw_per_op: 1 });
    expect(lines.map((l) => l.name)).toEqual(['voluntary_ctxsw_per_op', 'involuntary_ctxsw_per_op', 'overlap', 'cpu_main', 'zeta_per_op']);
    expect(lines[2]).toMatchObject({ label: 'overlap', value: '3.90' });
  });
});

describe('counterSummary', () => {
  it('sums the switches when there is no total, and adds CPU/wall', () => {
    expect(counterSummary({ voluntary_ctxsw_per_op: 1, involuntary_ctxsw_per_op: 0.5, cpu_wall_ratio: 0.98 })).toBe('1.50 switches/op · CPU/wall 0.980');
    expect(counterSummary({ ctxsw_per_op: 2, voluntary_ctxsw_per_op: 1 })).toBe('2.00 switches/op');
    expect(counterSummary({ gomaxprocs: 2 })).toBe('');
    expect(counterSummary(undefined)).toBe('');
  });

  it('writes a rare switch readably, not as "7.19e-6", "0.00000719" nor "7.19 × 10⁻⁶" (issue 27, 12)', () => {
    expect(counterSummary({ ctxsw_per_op: 7.19e-6 })).toBe('1 switch per 139,000 ops');
    expect(counterLines({ involuntary_ctxsw_per_op: 7.19e-6 })[0]!.value).toBe('1 per 139,000 ops');
    expect(counterLines({ involuntary_ctxsw_per_op: 0.0123 })[0]!.value).toBe('0.0123');
    expect(formatPerOp(0)).toBe('0');
    expect(formatPerOp(1e-9)).toBe('1 per 1,000,000,000 ops');
    expect(formatPerOp(0.00099)).toBe('1 per 1,010 ops');
    expect(counterLines({ acquisitions_per_s: 51234567.8 })[0]!.value).toBe('51,234,568');
  });
});
