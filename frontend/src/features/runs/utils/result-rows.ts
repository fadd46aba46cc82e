// Shapes results for the results table: every number of one row on the scale of its figure (the
// median, or the p5 of short samples' repetitions: lib/figure.ts), so a row reads "48.1 [47.9, 48.6]
// ns/op" rather than mixing ns and µs.
import type { Result, RunItem } from '@/lib/api-types';
import { figureOf, figureStat, figureStatText } from '@/lib/figure';
import { chooseScale, formatParams, formatPercent, formatScaled, seriesScale, type Scale } from '@/lib/format';
import { counterLines, counterSummary, type CounterLine } from './counters';

export interface ResultRow {
  id: string;
  kernel: string;
  params: string;
  unit: string;
  n: number;
  /** The figure Compare and History compare; `ci` is its CI. */
  figure: string;
  /** What the figure is: "median" or "p5". */
  figureStat: string;
  /** The figure's stat in words, with the median beside it when the figure is another stat. */
  figureTitle: string;
  /** The samples' median (the figure itself for long samples). */
  median: string;
  ci: string;
  ciMethod: string | null;
  /** The interval is the sample range, not a 95 % interval (too few samples): the table marks it. */
  ciIsRange: boolean;
  mean: string;
  stddev: string;
  cv: string;
  min: string;
  max: string;
  /** Every counter with its label and explanation; `countersSummary` is the table's one line. */
  counters: CounterLine[];
  countersSummary: string;
}

/**
 * One scale per kernel and unit over a run's results, so a sweep's rows read in one unit ("514" and
 * "1,420 ns/op", not "514 ns/op" then "1.42 µs/op").
 */
export function resultScales(results: readonly Result[]): Map<string, Scale> {
  const series = new Map<string, { unit: string; values: (number | null)[] }>();
  for (const r of results) {
    const key = `${r.kernel}|${r.unit}`;
    const s = series.get(key) ?? { unit: r.unit, values: [] };
    s.values.push(figureOf(r));
    series.set(key, s);
  }
  return new Map([...series].map(([key, { unit, values }]) => [key, seriesScale(values, unit)]));
}

/** A result as a table row; `scales` (from `resultScales`) puts it on its kernel's scale. */
export function toResultRow(r: Result, scales?: Map<string, Scale>): ResultRow {
  const scale = scales?.get(`${r.kernel}|${r.unit}`) ?? chooseScale(figureOf(r), r.unit);
  const stat = figureStat(r);
  const median = formatScaled(r.median, scale);
  return {
    id: r.id,
    kernel: r.kernel,
    params: formatParams(r.params),
    unit: scale.unit,
    n: r.n,
    figure: formatScaled(figureOf(r), scale),
    figureStat: stat,
    figureTitle: stat === 'median' ? figureStatText(stat) : `${figureStatText(stat)} (short samples); median ${median}`,
    median,
    ci: `[${formatScaled(r.ci_low, scale)}, ${formatScaled(r.ci_high, scale)}]`,
    ciMethod: r.ci_method ?? null,
    ciIsRange: (r.ci_method ?? '').startsWith('min-max'),
    mean: formatScaled(r.mean, scale),
    stddev: formatScaled(r.stddev, scale),
    cv: formatPercent(r.cv),
    min: formatScaled(r.min, scale),
    max: formatScaled(r.max, scale),
    counters: counterLines(r.counters),
    countersSummary: counterSummary(r.counters),
  };
}

/** Results in the run's item order (the order they were measured in); unknown items last. */
export function sortByItemOrder(results: Result[], items: RunItem[]): Result[] {
  const order = new Map(items.map((i) => [i.id, i.index]));
  const at = (r: Result) => order.get(r.item_id) ?? Number.MAX_SAFE_INTEGER;
  return [...results].sort((a, b) => at(a) - at(b));
}

/**
 * The reruns of one result in words, for the tooltip of its "noisy" / "reruns" badge: how many extra
 * attempts ran and each attempt's CV (the kept one is the lowest), or null when it ran once.
 */
export function rerunNote(r: Pick<Result, 'reruns' | 'noisy' | 'attempt_cvs'>): string | null {
  const reruns = r.reruns ?? 0;
  const cvs = (r.attempt_cvs ?? []).map((cv) => formatPercent(cv));
  if (reruns === 0 && !r.noisy) return null;
  const parts = [
    r.noisy
      ? `Still noisy after ${reruns} ${reruns === 1 ? 'rerun' : 'reruns'}: the attempt with the lowest CV is shown.`
      : `Rerun ${reruns} ${reruns === 1 ? 'time' : 'times'} for a CV above the threshold; the lowest-CV attempt is shown.`,
  ];
  if (cvs.length > 0) parts.push(`Attempt CVs: ${cvs.join(', ')}.`);
  return parts.join(' ');
}
