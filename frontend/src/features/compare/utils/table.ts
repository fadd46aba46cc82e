// Shapes GET /compare's rows for the table: order, geometric-mean rows, per-row warnings.
import type { CompareResponse, CompareRow } from '@/lib/api-types';
import type { SortKey } from '@/lib/compare-query';
import { formatNumber } from '@/lib/format';

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
    if (typeof w === 'string') {
      if (w.includes(row.kernel) && (row.params_key === '' || w.includes(row.params_key))) return w;
    } else if (w && (w.kernel === row.kernel || w.row === rowKey(row) || w.row === row.kernel)) {
      if (w.params_key === undefined || w.params_key === row.params_key) return w.message ?? w.detail ?? JSON.stringify(w);
    }
  }
  return null;
}

/** Words for a warning that belongs to no row. */
export function warningText(w: CompareResponse['warnings'][number]): string {
  return typeof w === 'string' ? w : (w.message ?? w.detail ?? JSON.stringify(w));
}

/** Is a ratio a slowdown (worse) relative to the baseline? */
export function isWorse(ratio: number, higherIsBetter: boolean | undefined): boolean {
  return higherIsBetter ? ratio < 1 : ratio > 1;
}

/** A ratio as "1.23×"; a dash when there is none. */
export function formatRatio(r: number | null | undefined): string {
  return r === null || r === undefined ? '—' : `${formatNumber(r, 3)}×`;
}
