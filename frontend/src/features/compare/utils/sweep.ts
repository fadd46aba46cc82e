// Shapes compare rows into sweep series: one chart per kernel and swept parameter (the other
// parameters fixed), one line per machine with its CI band.
import type { CompareRow, ParamValue, SeedReference } from '@/lib/api-types';
import { figureOf } from '@/lib/figure';

export interface SweepPoint {
  /** The swept parameter's value (a number on numeric axes, the choice's name otherwise). */
  x: number | string;
  row: CompareRow;
}

export interface SweepGroup {
  key: string;
  kernel: string;
  unit: string;
  param: string;
  /** The other parameters, the same at every point. */
  fixed: Record<string, ParamValue>;
  numeric: boolean;
  /** A log2 x axis: counts and sizes that span at least a factor of 4, all positive. */
  log2: boolean;
  points: SweepPoint[];
}

function sameValue(a: ParamValue | undefined, b: ParamValue | undefined): boolean {
  return String(a) === String(b);
}

function fixedKey(params: Record<string, ParamValue>, except: string): string {
  return Object.keys(params)
    .filter((k) => k !== except)
    .sort()
    .map((k) => `${k}=${String(params[k])}`)
    .join('&');
}

/**
 * Every (kernel, swept parameter, fixed other parameters) with at least two points. A kernel swept on
 * two parameters gives one group per line through the grid. Rows whose units differ between
 * machines give no group (their numbers are not one quantity).
 */
export function sweepGroups(rows: CompareRow[]): SweepGroup[] {
  const byKernel = new Map<string, CompareRow[]>();
  for (const r of rows) {
    if (r.units && new Set(Object.values(r.units)).size > 1) continue;
    byKernel.set(r.kernel, [...(byKernel.get(r.kernel) ?? []), r]);
  }
  const groups: SweepGroup[] = [];
  for (const [kernel, krows] of [...byKernel.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    const names = [...new Set(krows.flatMap((r) => Object.keys(r.params)))].sort();
    const varying = names.filter((n) => new Set(krows.map((r) => String(r.params[n]))).size > 1);
    for (const param of varying) {
      const parts = new Map<string, CompareRow[]>();
      for (const r of krows) {
        if (r.params[param] === undefined) continue;
        const k = fixedKey(r.params, param);
        parts.set(k, [...(parts.get(k) ?? []), r]);
      }
      for (const [fk, prow] of parts) {
        const distinct = new Set(prow.map((r) => String(r.params[param])));
        if (distinct.size < 2) continue;
        const numeric = prow.every((r) => typeof r.params[param] === 'number');
        const points = prow
          .map((r) => ({ x: numeric ? (r.params[param] as number) : String(r.params[param]), row: r }))
          .sort((a, b) => (numeric ? (a.x as number) - (b.x as number) : 0));
        const xs = points.map((p) => p.x).filter((x): x is number => typeof x === 'number');
        const log2 = numeric && xs.every((x) => x > 0) && Math.max(...xs) / Math.min(...xs) >= 4;
        const first = prow[0]!;
        const fixed = Object.fromEntries(Object.entries(first.params).filter(([k]) => k !== param));
        groups.push({ key: `${kernel}|${param}|${fk}`, kernel, unit: first.unit, param, fixed, numeric, log2, points });
      }
    }
  }
  return groups;
}

/**
 * Chart rows for Recharts: x, and per machine its figure (lib/figure.ts: what the ratios compare) and
 * the figure's CI as a [low, high] band.
 */
export function seriesData(group: SweepGroup, machines: string[]): Record<string, unknown>[] {
  return group.points.map(({ x, row }) => {
    const out: Record<string, unknown> = { x };
    for (const m of machines) {
      const c = row.cells[m];
      const figure = c ? figureOf(c) : null;
      if (!c || figure === null) continue;
      out[`figure:${m}`] = figure;
      if (c.ci_low !== null && c.ci_high !== null) out[`ci:${m}`] = [c.ci_low, c.ci_high];
    }
    return out;
  });
}

/** Powers of two covering [min, max], at most `maxTicks` of them (every 2nd, 4th… when more). */
export function log2Ticks(min: number, max: number, maxTicks = 10): number[] {
  if (!(min > 0) || !(max > 0) || !Number.isFinite(min) || !Number.isFinite(max)) return [];
  const lo = Math.floor(Math.log2(Math.min(min, max)));
  const hi = Math.ceil(Math.log2(Math.max(min, max)));
  const count = hi - lo + 1;
  const step = Math.max(1, Math.ceil(count / maxTicks));
  const ticks: number[] = [];
  for (let e = lo; e <= hi; e += step) ticks.push(2 ** e);
  return ticks;
}

/** A tick label that reads like the parameter: 1024 → "1Ki" for sizes, plain for counts up to 9999. */
export function formatTick(value: number): string {
  if (value >= 1024 * 1024 && value % (1024 * 1024) === 0) return `${value / (1024 * 1024)}Mi`;
  if (value >= 10_000 && value % 1024 === 0) return `${value / 1024}Ki`;
  return String(value);
}

export type SeedMark =
  | { kind: 'point'; x: number | string; value: number; seed: SeedReference }
  | { kind: 'line'; value: number; seed: SeedReference };

/**
 * Where a seed's reference figure belongs on a sweep chart, when it measured the same thing: same unit,
 * and its parameters agree with the group's fixed ones. With a value for the swept parameter it is a
 * point there; without one it is a dashed line across.
 */
export function seedMark(group: SweepGroup): SeedMark | null {
  const seed = group.points.map((p) => p.row.seed_reference).find((s): s is SeedReference => !!s);
  if (!seed || seed.unit !== group.unit || !Number.isFinite(seed.value)) return null;
  const params = seed.params ?? {};
  for (const [k, v] of Object.entries(params)) {
    if (k !== group.param && group.fixed[k] !== undefined && !sameValue(group.fixed[k], v)) return null;
  }
  const at = params[group.param];
  if (at === undefined) return { kind: 'line', value: seed.value, seed };
  const x = group.numeric ? Number(at) : String(at);
  return { kind: 'point', x, value: seed.value, seed };
}
