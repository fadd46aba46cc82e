// Machine facts in words: a label for every key the agent reports (agent/internal/facts), the group it
// belongs to, and how its value reads. The raw key stays available (the pages put it in a tooltip).
// Keys are as the server's facts diff names them: top-level ("governor"), or one entry of a map
// ("caches.L1d", "vulnerabilities.spectre_v2", "extra.timer_slack_ns"). Tested in facts.test.ts.

import { formatBytes, formatCacheSize, formatDuration, formatNumber } from './format';

// Each group's facts, the groups and the facts in the order the machine page lists them.
const GROUPS = {
  CPU: {
    cpu_model: 'CPU model',
    'extra.cpu_vendor': 'Vendor',
    arch: 'Architecture',
    logical_cpus: 'Logical CPUs',
    physical_cores: 'Physical cores',
    smt_active: 'SMT (hyper-threading)',
    'caches.L1d': 'L1 data cache',
    'caches.L1i': 'L1 instruction cache',
    'caches.L2': 'L2 cache',
    'caches.L3': 'L3 cache',
    'extra.cpu_flags_count': 'CPU feature flags',
    'extra.microcode': 'Microcode revision',
  },
  Memory: {
    memory_bytes: 'Memory',
    'extra.numa_nodes': 'NUMA nodes',
    'extra.thp': 'Transparent huge pages',
  },
  'Kernel & mitigations': {
    os_release: 'Operating system',
    kernel_release: 'Kernel',
    kernel_cmdline: 'Kernel command line',
    'extra.perf_event_paranoid': 'perf event paranoia',
  },
  'Frequency & clocks': {
    governor: 'Governor',
    boost: 'Turbo boost',
    'extra.cpu_mhz': 'Clock now (MHz)',
    'extra.cpufreq_driver': 'Frequency driver',
    'extra.energy_perf_pref': 'Energy/performance preference',
    'extra.energy_perf_bias': 'Energy/performance bias',
    'extra.cpuidle_driver': 'Idle driver',
    clocksource: 'Clock source',
    'extra.available_clocksource': 'Available clock sources',
    'extra.timer_slack_ns': 'Timer slack',
  },
  Scheduler: {
    'extra.isolated_cpus': 'Isolated CPUs',
    'extra.nohz_full': 'Tickless CPUs (nohz)',
    'extra.sched_autogroup': 'Autogroup scheduling',
  },
  'Virtualization & limits': {
    virtualization: 'Virtualization',
    'extra.cgroup_cpu_max': 'cgroup CPU limit (cpu.max)',
    'extra.cpu_quota': 'CPU quota',
    'extra.cgroup_cpuset': 'cgroup CPU set',
  },
  Load: {
    load_average: 'Load average (1, 5, 15 min)',
  },
} satisfies Record<string, Record<string, string>>;

export type FactGroupTitle = keyof typeof GROUPS;

export const FACT_GROUP_ORDER = Object.keys(GROUPS) as readonly FactGroupTitle[];

interface FactInfo {
  label: string;
  group: FactGroupTitle;
}

const FACTS: Record<string, FactInfo> = Object.fromEntries(
  FACT_GROUP_ORDER.flatMap((group) => Object.entries(GROUPS[group]).map(([key, label]): [string, FactInfo] => [key, { label, group }])),
);

// /sys/devices/system/cpu/vulnerabilities/* by their usual names.
const VULNERABILITIES: Record<string, string> = {
  gather_data_sampling: 'Gather data sampling (Downfall)',
  indirect_target_selection: 'Indirect target selection',
  itlb_multihit: 'iTLB multihit',
  l1tf: 'L1 terminal fault (L1TF)',
  mds: 'Microarchitectural data sampling (MDS)',
  meltdown: 'Meltdown',
  mmio_stale_data: 'MMIO stale data',
  old_microcode: 'Old microcode',
  reg_file_data_sampling: 'Register file data sampling',
  retbleed: 'Retbleed',
  spec_rstack_overflow: 'Speculative return stack overflow',
  spec_store_bypass: 'Speculative store bypass (Spectre v4)',
  spectre_v1: 'Spectre v1',
  spectre_v2: 'Spectre v2',
  srbds: 'SRBDS (special register buffer)',
  tsa: 'Transient scheduler attacks (TSA)',
  tsx_async_abort: 'TSX asynchronous abort',
  vmscape: 'VMScape',
};

// Facts outside the machine page's groups that the compare diff still lists.
const OTHER_LABELS: Record<string, string> = {
  preflight: 'Preflight warnings',
};

/** A snake_case key as words with a capital: "timer_slack_ns" → "Timer slack ns". */
export function sentence(words: string): string {
  const s = words.replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A fact's label in words: "smt_active" → "SMT (hyper-threading)", "caches.L1d" → "L1 data cache". */
export function factLabel(key: string): string {
  const known = FACTS[key] ?? FACTS[`extra.${key}`];
  if (known) return known.label;
  const other = OTHER_LABELS[key];
  if (other) return other;
  const [head, ...rest] = key.split('.');
  const sub = rest.join('.');
  if (head === 'vulnerabilities' && sub) return VULNERABILITIES[sub] ?? sentence(sub);
  if (head === 'caches' && sub) return `${sub} cache`;
  if (head === 'extra' && sub) return sentence(sub);
  return sentence(key);
}

/** The group a fact belongs in; facts nobody placed go under "Extra". */
export function factGroup(key: string): FactGroupTitle | 'Extra' {
  const known = FACTS[key];
  if (known) return known.group;
  if (key.startsWith('vulnerabilities.')) return 'Kernel & mitigations';
  if (key.startsWith('caches.')) return 'CPU';
  return 'Extra';
}

/** Where a fact sits among its group's (known facts in the table's order, the rest after, by key). */
export function factRank(key: string): number {
  const i = Object.keys(FACTS).indexOf(key);
  return i < 0 ? Number.MAX_SAFE_INTEGER : i;
}

/**
 * The cpufreq governor as both pages show it. The agent reports "" when the host exposes no cpufreq
 * (a VM or a fixed clock: there is no governor to set), which the list used to call "unknown" and the
 * machine page left out; undefined (an agent that did not say) stays "".
 */
export function governorText(governor: string | undefined | null): string {
  if (governor === undefined || governor === null) return '';
  return governor === '' ? 'none (no cpufreq)' : governor;
}

/** Turbo boost the same way: "" from the agent means the host exposes no boost switch. */
export function boostText(boost: string | undefined | null): string {
  if (boost === undefined || boost === null) return '';
  return boost === '' ? 'not exposed' : boost;
}

/**
 * Hints for facts the server's diff has none for (its hint comes first): every row of "What differs"
 * then says what the difference does.
 */
const HINTS: Record<string, string> = {
  'extra.cpu_quota':
    'A cgroup CPU quota throttles the kernels once they use their share of each period: the figures include that throttling, multi-thread ones most.',
  preflight:
    'What the agent found that makes the host noisy (governor, boost, SMT, irqbalance, steal, CPU quota): each warning makes figures vary more.',
};

/** A fact's hint: the server's when it gave one, else ours; null when neither knows. */
export function factHint(key: string, serverHint?: string | null): string | null {
  return serverHint || HINTS[key] || null;
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

/** A preflight check's name in words: "isolated_cpus" → "Isolated CPUs". */
export function preflightLabel(check: string): string {
  return PREFLIGHT_LABELS[check] ?? sentence(check);
}

export interface PreflightCheck {
  check?: string;
  status?: string;
  detail?: string;
  fix?: string;
}

/** The agent's preflight checks from a facts value (anything else gives none). */
export function preflightChecks(v: unknown): PreflightCheck[] {
  if (!Array.isArray(v)) return [];
  return (v as unknown[]).filter((c): c is PreflightCheck => c !== null && typeof c === 'object' && typeof (c as PreflightCheck).check === 'string');
}

/**
 * The preflight as one line: the checks that warn, by name ("2 warnings: SMT, Turbo boost"), or that
 * all passed. The details (one per check) are for a tooltip: preflightDetails.
 */
export function preflightSummary(v: unknown): string {
  const checks = preflightChecks(v);
  if (checks.length === 0) return '';
  const warn = checks.filter((c) => c.status === 'warn').map((c) => preflightLabel(c.check ?? ''));
  if (warn.length === 0) return `none (${checks.length} ${checks.length === 1 ? 'check' : 'checks'} ok)`;
  return `${warn.length} ${warn.length === 1 ? 'warning' : 'warnings'}: ${warn.join(', ')}`;
}

/** Each preflight check on its own line, warnings first: "SMT: warn, SMT on: …". */
export function preflightDetails(v: unknown): string {
  const rank = (c: PreflightCheck) => (c.status === 'warn' ? 0 : 1);
  return [...preflightChecks(v)]
    .sort((a, b) => rank(a) - rank(b))
    .map((c) => `${preflightLabel(c.check ?? '')}: ${c.status === 'warn' ? 'warn' : 'ok'}${c.detail ? `, ${c.detail}` : ''}`)
    .join('\n');
}

/**
 * A fact's value in words, the same on the machine page and in Compare's diff: sizes in binary units
 * (memory, caches), durations, yes/no, lists as comma lists, the preflight as its warnings; "" when
 * the value is missing (a page says "—" or leaves the fact out).
 */
export function factText(key: string, v: unknown): string {
  if (key === 'governor') return governorText(v as string | undefined);
  if (key === 'boost') return boostText(v as string | undefined);
  if (v === null || v === undefined || v === '') return '';
  if (key === 'memory_bytes') return formatBytes(v as number | string);
  if (key.startsWith('caches.') && (typeof v === 'string' || typeof v === 'number')) return formatCacheSize(v);
  if (key === 'extra.timer_slack_ns' && /^\d+$/.test(String(v))) return formatDuration(Number(v) / 1e9);
  if (key === 'load_average' && Array.isArray(v)) return v.map((x) => formatNumber(Number(x))).join(', ');
  if (key === 'preflight' && Array.isArray(v)) return preflightSummary(v);
  if (typeof v === 'boolean') return v ? 'yes' : 'no';
  if (Array.isArray(v)) return v.map((x) => (x !== null && typeof x === 'object' ? JSON.stringify(x) : String(x))).join(', ');
  if (typeof v === 'object') return JSON.stringify(v);
  return String(v);
}
