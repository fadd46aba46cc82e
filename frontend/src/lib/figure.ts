// A result's figure: the one number Compare, History, alerts and the kernels page compare
// (docs/architecture.md "Statistics"). For long samples it is the median of the samples; for short
// samples (the result's harness estimator set, e.g. "p5") the 5th percentile of the repetitions, since a
// shared host's slow episodes slow whole repetitions together: their median wanders from run to run, their
// 5th percentile repeats. A result's CI (ci_low, ci_high) is its figure's, and a ratio is figure ÷ the
// baseline's figure. An older server, or an answer cached or shared before the figure, sends none: there
// the median was the figure, and it stands in.

/** Anything that carries a figure: a result, a compare cell, a history point, a ranked result. */
export interface HasFigure<M extends number | null | undefined = number | null | undefined> {
  figure?: number | null;
  figure_stat?: string | null;
  median: M;
}

/** What the figure is, for a column's or a chart's tooltip. */
export const FIGURE_TITLE = 'Figure: the p5 of the repetitions (short samples) or the median (long samples); its CI and the ratios are of it';

/** The figure of a result-like object: its `figure`, else (an older answer) its median. */
export function figureOf<M extends number | null | undefined>(x: HasFigure<M>): number | M {
  return x.figure ?? x.median;
}

/** What `figureOf` gives: "p5", "median"; "median" where the figure is missing (the median stood in). */
export function figureStat(x: Pick<HasFigure, 'figure' | 'figure_stat'>): string {
  if (x.figure === null || x.figure === undefined) return 'median';
  return x.figure_stat || 'median';
}

/** A figure's stat in words: "p5 of the repetitions" (short samples), "median of the samples". */
export function figureStatText(stat: string): string {
  return stat === 'median' ? 'median of the samples' : `${stat} of the repetitions`;
}

/** The distinct stats of several figures: ["p5"], ["median"], or ["median", "p5"] for a mixed series. */
export function figureStats(xs: readonly Pick<HasFigure, 'figure' | 'figure_stat'>[]): string[] {
  return [...new Set(xs.map(figureStat))].sort();
}
