// A machine's facts in the groups its page shows them in; anything unknown lands in "Extra".
import type { MachineFacts } from '@/lib/api-types';
import { formatBytes } from '@/lib/format';

export interface FactLine {
  label: string;
  value: string;
}

export interface FactGroup {
  title: string;
  facts: FactLine[];
}

const GROUPS: { title: string; keys: string[] }[] = [
  { title: 'CPU', keys: ['cpu_model', 'arch', 'logical_cpus', 'physical_cores', 'smt_active', 'caches'] },
  { title: 'Memory', keys: ['memory_bytes'] },
  { title: 'Kernel & mitigations', keys: ['os_release', 'kernel_release', 'kernel_cmdline', 'vulnerabilities'] },
  { title: 'Clocks', keys: ['clocksource', 'governor', 'boost', 'timer_slack_ns'] },
  { title: 'Virtualization', keys: ['virtualization', 'cgroup_cpu_limit', 'load_average'] },
];

function text(key: string, v: unknown): string {
  if (v === null || v === undefined || v === '') return '';
  if (key === 'memory_bytes') return formatBytes(v as number | string);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.map((x) => String(x)).join(', ');
  if (typeof v === 'object') return '';
  return String(v);
}

/** Objects (caches, vulnerabilities, extra) open into one line per entry: "vulnerabilities.spectre_v2". */
function lines(key: string, v: unknown): FactLine[] {
  if (v && typeof v === 'object' && !Array.isArray(v)) {
    return Object.entries(v as Record<string, unknown>)
      .sort(([a], [b]) => a.localeCompare(b))
      .map(([k, x]) => ({ label: `${key === 'extra' ? '' : `${key}.`}${k}`, value: typeof x === 'string' ? x : JSON.stringify(x) }));
  }
  const t = text(key, v);
  return t ? [{ label: key, value: t }] : [];
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
      label: c.check ?? '',
      value: `${c.status === 'warn' ? 'warn' : 'ok'}: ${c.detail ?? ''}${c.status === 'warn' && c.fix ? ` (fix: ${c.fix})` : ''}`,
    }));
}

export function groupFacts(facts: MachineFacts): FactGroup[] {
  const all = facts as Record<string, unknown>;
  const used = new Set<string>(['hostname', 'preflight']);
  const out: FactGroup[] = GROUPS.map(({ title, keys }) => {
    keys.forEach((k) => used.add(k));
    return { title, facts: keys.flatMap((k) => lines(k, all[k])) };
  });
  const extra = Object.keys(all)
    .filter((k) => !used.has(k))
    .sort()
    .flatMap((k) => lines(k, all[k]));
  out.push({ title: 'Extra', facts: extra });
  out.push({ title: 'Preflight (what makes this host noisy)', facts: preflightLines(all.preflight) });
  return out.filter((g) => g.facts.length > 0);
}
