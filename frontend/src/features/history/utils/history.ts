import { paths, withQuery } from '@/app/paths';
import { factText } from '@/lib/facts';
import { figureOf, figureStat } from '@/lib/figure';
import { formatNumber } from '@/lib/format';
import type { FactChange, HistoryPoint, Step, StepRule } from '../api/history';

/** The History page's address: /history?machine=&kernel=&params= (params: the canonical key). */
export interface HistoryQuery {
  machine: string;
  kernel: string;
  params: string | null;
}

export function decodeHistoryQuery(search: string | URLSearchParams): HistoryQuery {
  const q = typeof search === 'string' ? new URLSearchParams(search) : search;
  return { machine: q.get('machine') ?? '', kernel: q.get('kernel') ?? '', params: q.get('params') };
}

export function historyPath(query: Partial<HistoryQuery>): string {
  const q = new URLSearchParams();
  if (query.machine) q.set('machine', query.machine);
  if (query.kernel) q.set('kernel', query.kernel);
  if (query.params !== null && query.params !== undefined) q.set('params', query.params);
  return withQuery(paths.history, q.toString());
}

export interface HistoryRow {
  t: number; // ms since the epoch
  /** The run's figure (lib/figure.ts): what the steps compare; `ci` is its CI. */
  figure: number;
  /** What the figure is: "median" or "p5". */
  stat: string;
  ci: [number, number] | undefined;
  run_id: string;
  index: number;
}

/** One chart row per run, on a time axis, with its figure. */
export function historyRows(points: readonly HistoryPoint[]): HistoryRow[] {
  return points.map((p, index) => ({
    t: Date.parse(p.at),
    figure: figureOf(p),
    stat: figureStat(p),
    ci: p.ci_low !== null && p.ci_high !== null ? [p.ci_low, p.ci_high] : undefined,
    run_id: p.run_id,
    index,
  }));
}

/** Fact changes grouped by the run they appeared at (one mark on the axis each). */
export function factMarks(changes: readonly FactChange[]): { at: number; run_id: string; label: string; facts: FactChange[] }[] {
  const byRun = new Map<string, FactChange[]>();
  for (const c of changes) byRun.set(c.run_id, [...(byRun.get(c.run_id) ?? []), c]);
  return [...byRun.entries()].map(([run_id, facts]) => ({
    at: Date.parse(facts[0]!.at),
    run_id,
    label: facts.length === 1 ? facts[0]!.fact : `${facts[0]!.fact} +${facts.length - 1}`,
    facts,
  }));
}

const RULE_TEXT: Record<StepRule, string> = {
  ci_excludes_noise: 'real: the ratio’s CI clears the run-to-run noise',
  ci_includes_1: 'not a change: the ratio’s CI includes 1',
  within_noise: 'not a change: within the run-to-run noise',
  too_few_launches: 'not yet: a side has one run',
  load_changed: 'not a change of the primitive: the host’s load changed',
};

/** Why a step is or is not a change, in words; a load change says how busy other processes kept the CPUs. */
export function ruleText(rule: StepRule, busy?: readonly (number | null)[]): string {
  const [before, after] = busy ?? [];
  if (rule === 'load_changed' && before != null && after != null) {
    return `${RULE_TEXT[rule]} (other processes kept ${Math.round(before * 100)} % → ${Math.round(after * 100)} % of its CPUs busy)`;
  }
  return RULE_TEXT[rule];
}

/** "+30.0 % slower" / "-12.0 % faster" for a per-op cost; throughput units read the other way. */
export function stepText(step: Pick<Step, 'ratio'>, higherIsBetter: boolean): string {
  const pct = (step.ratio - 1) * 100;
  const worse = higherIsBetter ? pct < 0 : pct > 0;
  const sign = pct > 0 ? '+' : '';
  return `${sign}${formatNumber(pct, 3)} % ${worse ? 'slower' : 'faster'}`;
}

/** A fact's value as text, in the words the machine page uses for that fact; empty as "—". */
export function factValue(v: unknown, fact = ''): string {
  return factText(fact, v) || '—';
}

/** A time-axis label in UTC: to the second when the runs span under an hour, else to the minute. */
export function timeTick(t: number, spanMs: number): string {
  const iso = new Date(t).toISOString();
  return spanMs < 3_600_000 ? iso.slice(11, 19) : iso.slice(5, 16).replace('T', ' ');
}
