// Sweep insight: where a machine's cost starts to grow along a sweep (the knee), and how each point
// compares with the first one (scaling), both on the cells' figures (lib/figure.ts), as the ratios are.
// Pure functions over one sweep group; tested in insight.test.ts.
import { figureOf } from '@/lib/figure';
import type { SweepGroup } from './sweep';

/** A knee must be at least this far from the first point, beyond both CIs: 10 %. */
export const KNEE_MIN_RATIO = 1.1;

export interface Knee {
  x: number | string;
  /** The figure there over the first point's, in the "worse" direction (> 1). */
  ratio: number;
  /** The figure there (where the chart rings it). */
  figure: number;
}

export interface Insight {
  machine: string;
  /** x of the first point, the reference of `scaling`. */
  base: number | string;
  /** Per point: the first point's performance over this one's, as a fraction (1 = as good as the first;
   *  0.5 = each op costs twice as much, or half the throughput). Null where a figure is missing. */
  scaling: { x: number | string; value: number | null }[];
  knee: Knee | null;
}

interface Cell {
  figure: number;
  low: number;
  high: number;
}

/**
 * The knee is the first point from which every later point is worse than the first one beyond both
 * their CIs (this point's interval clear of the first one's) and by at least KNEE_MIN_RATIO: a lasting
 * step, not one noisy point. Null when the curve stays within that of its start.
 */
export function sweepInsight(group: SweepGroup, machine: string, higherIsBetter: boolean): Insight | null {
  const cells: (Cell | null)[] = group.points.map(({ row }) => {
    const c = row.cells[machine];
    const figure = c ? figureOf(c) : null;
    if (!c || figure === null || !(figure > 0)) return null;
    return { figure, low: c.ci_low ?? figure, high: c.ci_high ?? figure };
  });
  const first = cells[0];
  if (!first || group.points.length < 2) return null;
  const worse = (c: Cell) =>
    higherIsBetter
      ? c.high < first.low && first.figure / c.figure >= KNEE_MIN_RATIO
      : c.low > first.high && c.figure / first.figure >= KNEE_MIN_RATIO;
  let knee: Knee | null = null;
  for (let i = cells.length - 1; i >= 1; i--) {
    const c = cells[i];
    if (!c || !worse(c)) break;
    knee = { x: group.points[i]!.x, ratio: higherIsBetter ? first.figure / c.figure : c.figure / first.figure, figure: c.figure };
  }
  return {
    machine,
    base: group.points[0]!.x,
    scaling: group.points.map(({ x }, i) => {
      const c = cells[i];
      return { x, value: c ? (higherIsBetter ? c.figure / first.figure : first.figure / c.figure) : null };
    }),
    knee,
  };
}
