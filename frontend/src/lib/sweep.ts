// Sweeps on the New run page: which points a swept parameter takes and how many items a run will
// have. The server expands the same way (docs/architecture.md, "Profiles"); the form only predicts it.
// `thin` is the chosen profile's `thin_sweeps`, as GET /limits serves it (lib/limits.ts).
import type { ParamValue } from './api-types';
import { coerceParam, type ParamRule } from './params';

/** How one parameter is set: a single value, the kernel's default sweep, or the user's own points. */
export type SweepChoice = { mode: 'default' } | { mode: 'custom'; text: string };

/** Whether the kernel's catalog offers a default sweep for this parameter. */
export function hasDefaultSweep(spec: ParamRule): boolean {
  return (spec.sweep?.length ?? 0) > 0;
}

/** Whether a parameter can be swept over custom points (anything but free text). */
export function canSweep(spec: ParamRule): boolean {
  return spec.type !== 'string';
}

/** A profile's view of a default sweep: a thinning profile keeps every other point, always the first and last. */
export function thinSweep<T>(points: readonly T[], thin: boolean): T[] {
  if (!thin) return [...points];
  return points.filter((_, i) => i % 2 === 0 || i === points.length - 1);
}

/** At most this many bad sweep values are named in one message; the rest are counted. */
export const MAX_NAMED_BAD_VALUES = 10;

/**
 * Bad sweep values in one message, those with the same fault together, in the order typed:
 * `"0", "2048": threads must be between 1 and 1024; "two": threads must be a whole number`, the first
 * MAX_NAMED_BAD_VALUES named and the rest counted ("and 5 more bad values").
 */
export function describeBadValues(bad: readonly { value: string; error: string }[]): string {
  const named = bad.slice(0, MAX_NAMED_BAD_VALUES);
  const byError = new Map<string, string[]>();
  for (const { value, error } of named) byError.set(error, [...(byError.get(error) ?? []), `"${value}"`]);
  const text = [...byError.entries()].map(([error, values]) => `${values.join(', ')}: ${error}`).join('; ');
  const more = bad.length - named.length;
  return more > 0 ? `${text}; and ${more} more bad ${more === 1 ? 'value' : 'values'}` : text;
}

/**
 * Custom sweep points typed as "1, 2, 4": each checked like a single value (type, min/max, choices),
 * repeats dropped, order kept. Every bad value is reported, not only the first.
 */
export function parseSweepValues(
  spec: ParamRule,
  text: string,
): { ok: true; values: ParamValue[] } | { ok: false; error: string } {
  const parts = text
    .split(',')
    .map((p) => p.trim())
    .filter((p) => p !== '');
  if (parts.length === 0) return { ok: false, error: `${spec.name}: give at least one value, separated by commas` };
  const values: ParamValue[] = [];
  const bad: { value: string; error: string }[] = [];
  for (const part of parts) {
    const c = coerceParam(spec, part);
    if (!c.ok) bad.push({ value: part, error: c.error });
    else if (c.value !== undefined && !values.includes(c.value)) values.push(c.value);
  }
  if (bad.length > 0) return { ok: false, error: describeBadValues(bad) };
  return { ok: true, values };
}

/** The points a swept parameter takes under a profile (null when the custom text is invalid). */
export function sweepPoints(spec: ParamRule, choice: SweepChoice, thin: boolean): ParamValue[] | null {
  if (choice.mode === 'default') return thinSweep(spec.sweep ?? [], thin);
  const parsed = parseSweepValues(spec, choice.text);
  return parsed.ok ? parsed.values : null;
}

/**
 * Items one kernel expands to: the cartesian product of its swept parameters' points (1 when nothing
 * is swept; null when a custom sweep does not parse yet).
 */
export function kernelItemCount(
  specs: readonly ParamRule[],
  sweeps: Readonly<Record<string, SweepChoice>>,
  thin: boolean,
): number | null {
  let n = 1;
  for (const spec of specs) {
    const choice = sweeps[spec.name];
    if (!choice) continue;
    const points = sweepPoints(spec, choice, thin);
    if (points === null) return null;
    n *= points.length;
  }
  return n;
}

export interface ItemCount {
  /** Items per kernel, in the order given (null: a sweep does not parse yet). */
  perKernel: (number | null)[];
  /** Items in each machine's run. */
  perRun: number | null;
  /** Items over all machines. */
  total: number | null;
}

/** How many items a run will have: the sum over kernels of their products, times the machines. */
export function countItems(
  kernels: readonly { specs: readonly ParamRule[]; sweeps: Readonly<Record<string, SweepChoice>> }[],
  thin: boolean,
  machines: number,
): ItemCount {
  const perKernel = kernels.map((k) => kernelItemCount(k.specs, k.sweeps, thin));
  const perRun = perKernel.some((n) => n === null) ? null : perKernel.reduce<number>((a, n) => a + (n ?? 0), 0);
  return { perKernel, perRun, total: perRun === null ? null : perRun * machines };
}
