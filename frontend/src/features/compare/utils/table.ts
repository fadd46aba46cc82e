// Shapes GET /compare's rows for the table: order, geometric-mean rows, per-row warnings.
import type { CompareCell, CompareRatio, CompareResponse, CompareRow } from '@/lib/api-types';
import type { SortKey } from '@/lib/compare-query';
import { figureOf } from '@/lib/figure';
import { formatNumber, seriesScale, type Scale } from '@/lib/format';

export function rowKey(row: Pick<CompareRow, 'kernel' | 'params_key'>): string {
  return `${row.kernel}|${row.params_key}`;
}

const collator = new Intl.Collator('en', { numeric: true });

/** Family, kernel, then parameters in natural order ("threads=2" before "threads=16"). */
export function compareByKernel(a: CompareRow, b: CompareRow): number {
  return collator.compare(a.family, b.family) || collator.compare(a.kernel, b.kernel) || collator.compare(a.params_key, b.params_key);
}

/** The machine whose ratio a ratio sort uses: the one asked for, else the first that is not the baseline. */
export function sortMachineOf(machines: string[], baseline: string, wanted: string | null): string | null {
  if (wanted && machines.includes(wanted)) return wanted;
  return machines.find((m) => m !== baseline) ?? null;
}

/** Rows in table order. Rows without a ratio for the sort machine go last, in kernel order. */
export function sortRows(rows: CompareRow[], sort: SortKey, machine: string | null): CompareRow[] {
  const byKernel = [...rows].sort(compareByKernel);
  if (sort === 'kernel' || machine === null) return byKernel;
  const dir = sort === '-ratio' ? -1 : 1;
  const ratio = (r: CompareRow) => r.ratios[machine]?.ratio ?? null;
  // Array.prototype.sort is stable: equal ratios keep kernel order.
  return byKernel.sort((a, b) => {
    const ra = ratio(a);
    const rb = ratio(b);
    if (ra === null || rb === null) return ra === null ? (rb === null ? 0 : 1) : -1;
    return dir * (ra - rb);
  });
}

/** The geometric mean of positive finite values; null when there are none. */
export function geomean(values: (number | null | undefined)[]): number | null {
  const ok = values.filter((v): v is number => typeof v === 'number' && Number.isFinite(v) && v > 0);
  if (ok.length === 0) return null;
  return Math.exp(ok.reduce((s, v) => s + Math.log(v), 0) / ok.length);
}

export interface GeomeanRow {
  /** "family sched" or "overall". */
  label: string;
  family: string | null;
  ratios: Record<string, number | null>;
  /** How many rows went into it (those with a ratio for every machine is not required: per machine). */
  count: number;
}

/**
 * One geometric-mean row per family and one overall. The server's figures win (they are the contract);
 * when it leaves a family or machine out, the mean of the rows' ratios stands in.
 */
export function geomeanRows(data: Pick<CompareResponse, 'rows' | 'machines' | 'geomean' | 'geomean_by_family'>): GeomeanRow[] {
  const machines = data.machines.map((m) => m.id);
  const families = [...new Set(data.rows.map((r) => r.family))].sort(collator.compare);
  const mean = (rows: CompareRow[], server: Record<string, number | null> | undefined) =>
    Object.fromEntries(
      machines.map((m) => {
        const s = server?.[m];
        return [m, typeof s === 'number' ? s : geomean(rows.map((r) => r.ratios[m]?.ratio))];
      }),
    );
  const out: GeomeanRow[] = families.map((family) => {
    const rows = data.rows.filter((r) => r.family === family);
    return { label: `${family} (geometric mean)`, family, ratios: mean(rows, data.geomean_by_family?.[family]), count: rows.length };
  });
  out.push({ label: 'All kernels (geometric mean)', family: null, ratios: mean(data.rows, data.geomean), count: data.rows.length });
  return out;
}

/** The server's warning about a row (units differ…), from the row itself or the response's list. */
export function rowWarning(row: CompareRow, warnings: CompareResponse['warnings']): string | null {
  if (row.warning) return row.warning;
  for (const w of warnings ?? []) {
    if (w.kernel === row.kernel || w.row === rowKey(row) || w.row === row.kernel) {
      if (w.params_key === undefined || w.params_key === row.params_key) return warningText(w);
    }
  }
  return null;
}

/** Words for a warning that belongs to no row. */
export function warningText(w: CompareResponse['warnings'][number]): string {
  return w.message;
}

/** Is a ratio a slowdown (worse) relative to the baseline? */
export function isWorse(ratio: number, higherIsBetter: boolean | undefined): boolean {
  return higherIsBetter ? ratio < 1 : ratio > 1;
}

/** A ratio as "1.23×"; a dash when there is none. */
export function formatRatio(r: number | null | undefined): string {
  return r === null || r === undefined ? '—' : `${formatNumber(r, 3)}×`;
}

type CiKind = CompareCell['ci_kind'] | CompareRatio['ci_kind'];

/** Each interval's honest name (a 95 % CI only when there were enough launches to make one) and how it was made. */
const CI_WORDS: Record<NonNullable<CiKind>, { label: string; title: string }> = {
  bootstrap95: { label: '95 % CI', title: '95 % interval of a hierarchical bootstrap (launches, then samples)' },
  minmax: { label: 'min–max', title: 'Min–max of the samples: with fewer than 6 launches no interval reaches 95 %' },
  bootstrap_few_launches: { label: 'CI < 95 %', title: 'Hierarchical bootstrap interval; with fewer than 6 launches a side it covers less than 95 %' },
};
const CI_UNKNOWN = { label: 'CI', title: 'Confidence interval (older answer: its kind is not recorded)' };

const ciWords = (kind: CiKind) => (kind ? CI_WORDS[kind] : undefined) ?? CI_UNKNOWN;

/** The honest name of an interval: a 95 % CI only when there were enough launches to make one. */
export function ciLabel(kind: CiKind): string {
  return ciWords(kind).label;
}

/** How the interval was made, for its tooltip. */
export function ciTitle(kind: CiKind): string {
  return ciWords(kind).title;
}

/** 0.05 -> "5 %", 0.125 -> "12.5 %": a noise floor, no trailing zeros. */
function percent(fraction: number): string {
  return `${Math.round(fraction * 1000) / 10} %`;
}

/** Short words for the rule that decided a ratio (shown under it), or null when there is nothing to say. */
export function ruleShort(r: CompareRatio): string | null {
  const s = r.significance;
  if (!s) return null;
  const noise = `${percent(s.noise)} noise${s.noise_source === 'runs' ? ' (runs)' : ''}`;
  switch (s.rule) {
    case 'ci_excludes_noise':
      return `beyond ${noise}`;
    case 'within_noise':
      return `within ${noise}`;
    case 'too_few_launches':
      return 'too few launches';
    default:
      return null;
  }
}

/** The whole reasoning, for the ratio's tooltip. */
export function ruleTitle(r: CompareRatio): string {
  const s = r.significance;
  if (!s) return r.p_value === null ? 'No test' : `Mann-Whitney U p = ${formatNumber(r.p_value, 2)}`;
  const noise = `${percent(s.noise)} (${s.noise_source === 'runs' ? "the spread of these machines' own runs" : 'the default floor'})`;
  const launches = `launches ${s.n_launches.join(' vs ')}`;
  switch (s.rule) {
    case 'ci_excludes_noise':
      return `Significant: the CI lies beyond the run-to-run noise of ${noise}; ${launches}`;
    case 'within_noise':
      return `Not significant: the CI excludes 1 but not the run-to-run noise of ${noise}; ${launches}`;
    case 'too_few_launches':
      return `Not tested: a side has one launch of fewer than 5 samples; ${launches}`;
    default:
      return `Not significant: the CI includes 1; ${launches}`;
  }
}

/** The key `kernelScales` files a row's scale under: its kernel and unit. */
export function scaleKey(row: Pick<CompareRow, 'kernel' | 'unit'>): string {
  return `${row.kernel}|${row.unit}`;
}

/**
 * One scale per kernel (and unit) over every machine's figures, so a kernel's rows and its sweep chart's
 * axis all read in the same unit.
 */
export function kernelScales(rows: readonly CompareRow[]): Map<string, Scale> {
  const figures = new Map<string, { unit: string; values: (number | null)[] }>();
  for (const row of rows) {
    const key = scaleKey(row);
    const series = figures.get(key) ?? { unit: row.unit, values: [] };
    // A machine that answered in another unit is shown in its own unit: it does not choose the scale.
    for (const [id, c] of Object.entries(row.cells)) if (!row.units?.[id] || row.units[id] === row.unit) series.values.push(figureOf(c));
    figures.set(key, series);
  }
  return new Map([...figures].map(([key, { unit, values }]) => [key, seriesScale(values, unit)]));
}
