// A machine's facts in the groups its page shows them in; anything unknown lands in "Extra".
import type { MachineFacts } from '@/lib/api-types';
import { boostText, FACT_GROUP_ORDER, factGroup, factLabel, factRank, governorText, sentence } from '@/lib/facts';
import { formatBytes, formatDuration, formatNumber } from '@/lib/format';

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

function text(key: string, v: unknown): string {
  if (key === 'governor') return governorText(v as string | undefined);
  if (key === 'boost') return boostText(v as string | undefined);
  if (v === null || v === undefined || v === '') return '';
  if (key === 'memory_bytes') return formatBytes(v as number | string);
  if (key === 'extra.timer_slack_ns' && /^\d+$/.test(String(v))) return formatDuration(Number(v) / 1e9);
  if (key === 'load_average' && Array.isArray(v)) return v.map((x) => formatNumber(Number(x))).join(', ');
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.map((x) => String(x)).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}

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

const PREFLIGHT_LABELS: Record<string, string> = {
  governor: 'Governor',
  boost: 'Turbo boost',
  smt: 'SMT',
  irqbalance: 'irqbalance',
  isolated_cpus: 'Isolated CPUs',
  virtualization: 'Virtualization',
  steal: 'Steal time',
  cpu_quota: 'CPU quota',
};

function preflightLabel(check: string): string {
  return PREFLIGHT_LABELS[check] ?? sentence(check);
}

interface PreflightCheck {
  check?: string;
  status?: string;
  detail?: string;
  fix?: string;
}

/** The agent's preflight (what makes the host noisy): one line per check, warnings first, with the fix. */
function preflightLines(v: unknown): FactLine[] {
  if (!Array.isArray(v)) return [];
  const checks = (v as PreflightCheck[]).filter((c) => c && typeof c === 'object' && c.check);
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
    const value = text(key, v);
    if (value) groups.get(factGroup(key))!.push({ key, label: factLabel(key), value });
  }
  const out: FactGroup[] = [...groups].map(([title, lines]) => ({ title, facts: lines }));
  out.push({ title: 'Preflight (what makes this host noisy)', facts: preflightLines(all.preflight) });
  return out.filter((g) => g.facts.length > 0);
}
