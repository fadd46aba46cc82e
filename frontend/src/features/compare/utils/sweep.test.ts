import { describe, expect, it } from 'vitest';
import { formatTick, log2Ticks, seedMark, seriesData, sweepGroups } from './sweep';
import { cell, row } from '@/lib/test-fixtures';

describe('sweepGroups', () => {
  it('groups a kernel’s points by the swept parameter, the others fixed', () => {
    const rows = [
      row('sched.yield', { threads: 4, policy: 'other' }, 4, 8),
      row('sched.yield', { threads: 1, policy: 'other' }, 1, 2),
      row('sched.yield', { threads: 16, policy: 'other' }, 16, 32),
      row('sched.yield', { threads: 1, policy: 'fifo' }, 1, 2),
      row('syscall.getppid', {}, 50, 60),
    ];
    const g = sweepGroups(rows);
    const threads = g.filter((x) => x.param === 'threads');
    expect(threads).toHaveLength(1);
    expect(threads[0]!.fixed).toEqual({ policy: 'other' });
    expect(threads[0]!.points.map((p) => p.x)).toEqual([1, 4, 16]);
    expect(threads[0]!.log2).toBe(true);
    // policy varies only at threads=1: a two-point categorical group.
    const policy = g.find((x) => x.param === 'policy')!;
    expect(policy.numeric).toBe(false);
    expect(policy.points.map((p) => p.x)).toEqual(['other', 'fifo']);
    expect(g.some((x) => x.kernel === 'syscall.getppid')).toBe(false);
  });

  it('uses a linear axis for a narrow or non-positive range, and skips rows whose units differ', () => {
    const g = sweepGroups([row('k.a', { n: 1 }, 1, 1), row('k.a', { n: 2 }, 1, 1), row('k.b', { n: 1 }, 1, 1, { units: { A: 'ns/op', B: 'MB/s' } }), row('k.b', { n: 8 }, 1, 1)]);
    expect(g).toHaveLength(1);
    expect(g[0]!.log2).toBe(false);
  });

  it('gives chart rows with a figure and its CI band per machine', () => {
    const [group] = sweepGroups([row('k.a', { n: 1 }, 10, 20), row('k.a', { n: 4 }, 40, 80)]);
    expect(seriesData(group!, ['A', 'B'])[1]).toEqual({ x: 4, 'figure:A': 40, 'ci:A': [36, 44], 'figure:B': 80, 'ci:B': [72, 88] });
  });

  it('draws the figure, not the median, and the median of an answer without figures', () => {
    const p5 = row('k.a', { n: 4 }, 40, 80, { cells: { A: cell(40, { figure: 31, figure_stat: 'p5', ci_low: 30, ci_high: 33 }), B: cell(80, { figure: null }) } });
    const [group] = sweepGroups([row('k.a', { n: 1 }, 10, 20), p5]);
    expect(seriesData(group!, ['A', 'B'])[1]).toEqual({ x: 4, 'figure:A': 31, 'ci:A': [30, 33], 'figure:B': 80, 'ci:B': [72, 88] });
  });
});

describe('log2Ticks', () => {
  it('gives the powers of two over the range', () => {
    expect(log2Ticks(1, 16)).toEqual([1, 2, 4, 8, 16]);
    expect(log2Ticks(3, 100)).toEqual([2, 4, 8, 16, 32, 64, 128]);
  });
  it('thins long ranges and refuses non-positive ones', () => {
    expect(log2Ticks(1, 2 ** 20, 6)).toEqual([1, 16, 256, 4096, 65536, 1048576]);
    expect(log2Ticks(0, 8)).toEqual([]);
  });
  it('labels sizes compactly', () => {
    expect(formatTick(64)).toBe('64');
    expect(formatTick(4096)).toBe('4096');
    expect(formatTick(65536)).toBe('64Ki');
    expect(formatTick(1048576)).toBe('1Mi');
  });
});

describe('seedMark', () => {
  const seed = { seed: '001', value: 2000, unit: 'ns/op', machine: 'old laptop', params: {}, note: '' };
  it('is a point at the seed’s value of the swept parameter', () => {
    const [g] = sweepGroups([row('k.a', { n: 1, p: 'x' }, 1, 1, { seed_reference: { ...seed, params: { n: '2', p: 'x' } } }), row('k.a', { n: 2, p: 'x' }, 1, 1)]);
    expect(seedMark(g!)).toMatchObject({ kind: 'point', x: 2, value: 2000 });
  });
  it('is a line when the seed names no value for it, nothing when it measured something else', () => {
    const base = [row('k.a', { n: 1, p: 'x' }, 1, 1), row('k.a', { n: 2, p: 'x' }, 1, 1)];
    const withSeed = (s: object) => base.map((r) => ({ ...r, seed_reference: { ...seed, ...s } }));
    expect(seedMark(sweepGroups(withSeed({}))[0]!)).toMatchObject({ kind: 'line', value: 2000 });
    expect(seedMark(sweepGroups(withSeed({ params: { p: 'y' } }))[0]!)).toBeNull();
    expect(seedMark(sweepGroups(withSeed({ unit: 'MB/s' }))[0]!)).toBeNull();
    expect(seedMark(sweepGroups(base)[0]!)).toBeNull();
  });
});
