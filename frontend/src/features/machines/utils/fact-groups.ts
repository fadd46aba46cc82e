// A machine's facts in the groups its page shows them in; anything unknown lands in "Extra".
import type { MachineFacts } from '@/lib/api-types';
import { FACT_GROUP_ORDER, factGroup, factLabel, factRank, factText, preflightChecks, preflightLabel, type PreflightCheck } from '@/lib/facts';

export interface FactLine {
  /** The raw key ("smt_active", "caches.L1d"), for a tooltip. */
  key: string;
  label: string;
  value: string;
}

export interface FactGroup {
  title: string;
  facts: FactLine[];
}

const MAPS = new Set(['caches', 'vulnerabilities', 'extra']);

/** Top-level facts as they are, maps one entry each ("caches.L1d"): the keys the labels know. */
function flatten(facts: Record<string, unknown>): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [k, v] of Object.entries(facts)) {
    if (MAPS.has(k) && v && typeof v === 'object' && !Array.isArray(v)) {
      for (const [sub, sv] of Object.entries(v as Record<string, unknown>)) out.push([`${k}.${sub}`, sv]);
    } else {
      out.push([k, v]);
    }
  }
  return out;
}

/** The agent's preflight (what makes the host noisy): one line per check, warnings first, with the fix. */
function preflightLines(v: unknown): FactLine[] {
  const checks = preflightChecks(v).filter((c) => c.check);
  const rank = (c: PreflightCheck) => (c.status === 'warn' ? 0 : 1);
  return [...checks]
    .sort((a, b) => rank(a) - rank(b))
    .map((c) => ({
      key: `preflight.${c.check ?? ''}`,
      label: preflightLabel(c.check ?? ''),
      value: `${c.status === 'warn' ? 'warn' : 'ok'}: ${c.detail ?? ''}${c.status === 'warn' && c.fix ? ` (fix: ${c.fix})` : ''}`,
    }));
}

export function groupFacts(facts: MachineFacts): FactGroup[] {
  const all = facts as Record<string, unknown>;
  const groups = new Map<string, FactLine[]>([...FACT_GROUP_ORDER, 'Extra'].map((t) => [t, []]));
  const ordered = flatten(all)
    .filter(([k]) => k !== 'hostname' && k !== 'preflight')
    .sort(([a], [b]) => factRank(a) - factRank(b) || a.localeCompare(b));
  for (const [key, v] of ordered) {
    const value = factText(key, v);
    if (value) groups.get(factGroup(key))!.push({ key, label: factLabel(key), value });
  }
  const out: FactGroup[] = [...groups].map(([title, lines]) => ({ title, facts: lines }));
  out.push({ title: 'Preflight (what makes this host noisy)', facts: preflightLines(all.preflight) });
  return out.filter((g) => g.facts.length > 0);
}
