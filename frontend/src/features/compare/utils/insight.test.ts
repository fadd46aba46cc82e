import { describe, expect, it } from 'vitest';
import type { CompareRow } from '@/lib/api-types';
import { sweepInsight } from './insight';
import type { SweepGroup } from './sweep';

type Cell = (value: number) => { median: number; figure?: number | null; figure_stat?: string };

function group(points: [number, number, number, number][], cell: Cell = (figure) => ({ figure, figure_stat: 'p5', median: figure * 1.5 })): SweepGroup {
  // [x, figure, ci_low, ci_high] for machine "m"; the median (what the insight must not read) elsewhere
  return {
    key: 'k',
    kernel: 'lock.pthread_mutex',
    unit: 'ns/op',
    param: 'threads',
    fixed: {},
    numeric: true,
    log2: true,
    points: points.map(([x, figure, ci_low, ci_high]) => ({
      x,
      row: { cells: { m: { ...cell(figure), ci_low, ci_high } } } as unknown as CompareRow,
    })),
  };
}

describe('sweep insight', () => {
  it('finds the knee where cost starts to grow and stays up', () => {
    const g = group([
      [1, 20, 19, 21],
      [2, 21, 20, 22], // within the first point's CI
      [4, 60, 55, 66],
      [8, 140, 130, 150],
    ]);
    const s = sweepInsight(g, 'm', false)!;
    expect(s.knee).toEqual({ x: 4, ratio: 3, figure: 60 });
    expect(s.scaling.map((p) => [p.x, p.value])).toEqual([
      [1, 1],
      [2, 20 / 21],
      [4, 20 / 60],
      [8, 20 / 140],
    ]);
  });

  it('a single bad point that comes back is no knee, nor a step under 10 %', () => {
    expect(
      sweepInsight(
        group([
          [1, 20, 19, 21],
          [2, 40, 38, 42],
          [4, 20.5, 19.5, 21.5],
        ]),
        'm',
        false,
      )!.knee,
    ).toBeNull();
    expect(
      sweepInsight(
        group([
          [1, 100, 99.5, 100.5],
          [2, 105, 104.5, 105.5], // beyond the CI but only 5 %
          [4, 106, 105.5, 106.5],
        ]),
        'm',
        false,
      )!.knee,
    ).toBeNull();
  });

  it('reads throughput the other way', () => {
    const g = group([
      [4096, 1000, 950, 1050],
      [65536, 400, 380, 420],
    ]);
    const s = sweepInsight(g, 'm', true)!;
    expect(s.knee).toEqual({ x: 65536, ratio: 2.5, figure: 400 });
    expect(s.scaling[1]!.value).toBeCloseTo(0.4);
  });

  it('reads the figures, not the medians, and the median of an answer without figures', () => {
    // Medians flat at 50 (beyond both CIs nowhere), figures tripling: the knee is the figures'.
    const points: [number, number, number, number][] = [
      [1, 20, 19, 21],
      [2, 60, 55, 66],
    ];
    const flatMedians = sweepInsight(group(points, (figure) => ({ figure, figure_stat: 'p5', median: 50 })), 'm', false)!;
    expect(flatMedians.knee).toEqual({ x: 2, ratio: 3, figure: 60 });
    expect(flatMedians.scaling[1]!.value).toBeCloseTo(1 / 3);
    const older = sweepInsight(group(points, (median) => ({ median })), 'm', false)!;
    expect(older.knee).toEqual({ x: 2, ratio: 3, figure: 60 });
  });

  it('needs the first point of the machine', () => {
    expect(sweepInsight(group([[1, 10, 9, 11]]), 'm', false)).toBeNull();
    expect(sweepInsight(group([[1, 10, 9, 11], [2, 30, 29, 31]]), 'other', false)).toBeNull();
  });
});
