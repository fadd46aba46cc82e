// Machine facts in words: a label for every key the agent reports (agent/internal/facts), the group it
// belongs to, and how its value reads. The raw key stays available (the pages put it in a tooltip).
// Keys are as the server's facts diff names them: top-level ("governor"), or one entry of a map
// ("caches.L1d", "vulnerabilities.spectre_v2", "extra.timer_slack_ns"). Tested in facts.test.ts.

export type FactGroupTitle = 'CPU' | 'Memory' | 'Kernel & mitigations' | 'Frequency & clocks' | 'Scheduler' | 'Virtualization & limits' | 'Load';

interface FactInfo {
  label: string;
  group: FactGroupTitle;
}

// In the order each group lists them.
const FACTS: Record<string, FactInfo> = {
  cpu_model: { label: 'CPU model', group: 'CPU' },
  'extra.cpu_vendor': { label: 'Vendor', group: 'CPU' },
  arch: { label: 'Architecture', group: 'CPU' },
  logical_cpus: { label: 'Logical CPUs', group: 'CPU' },
  physical_cores: { label: 'Physical cores', group: 'CPU' },
  smt_active: { label: 'SMT (hyper-threading)', group: 'CPU' },
  'caches.L1d': { label: 'L1 data cache', group: 'CPU' },
  'caches.L1i': { label: 'L1 instruction cache', group: 'CPU' },
  'caches.L2': { label: 'L2 cache', group: 'CPU' },
  'caches.L3': { label: 'L3 cache', group: 'CPU' },
  'extra.cpu_flags_count': { label: 'CPU feature flags', group: 'CPU' },
  'extra.microcode': { label: 'Microcode revision', group: 'CPU' },
  memory_bytes: { label: 'Memory', group: 'Memory' },
  'extra.numa_nodes': { label: 'NUMA nodes', group: 'Memory' },
  'extra.thp': { label: 'Transparent huge pages', group: 'Memory' },
  os_release: { label: 'Operating system', group: 'Kernel & mitigations' },
  kernel_release: { label: 'Kernel', group: 'Kernel & mitigations' },
  kernel_cmdline: { label: 'Kernel command line', group: 'Kernel & mitigations' },
  'extra.perf_event_paranoid': { label: 'perf event paranoia', group: 'Kernel & mitigations' },
  governor: { label: 'Governor', group: 'Frequency & clocks' },
  boost: { label: 'Turbo boost', group: 'Frequency & clocks' },
  'extra.cpu_mhz': { label: 'Clock now (MHz)', group: 'Frequency & clocks' },
  'extra.cpufreq_driver': { label: 'Frequency driver', group: 'Frequency & clocks' },
  'extra.energy_perf_pref': { label: 'Energy/performance preference', group: 'Frequency & clocks' },
  'extra.energy_perf_bias': { label: 'Energy/performance bias', group: 'Frequency & clocks' },
  'extra.cpuidle_driver': { label: 'Idle driver', group: 'Frequency & clocks' },
  clocksource: { label: 'Clock source', group: 'Frequency & clocks' },
  'extra.available_clocksource': { label: 'Available clock sources', group: 'Frequency & clocks' },
  'extra.timer_slack_ns': { label: 'Timer slack', group: 'Frequency & clocks' },
  'extra.isolated_cpus': { label: 'Isolated CPUs', group: 'Scheduler' },
  'extra.nohz_full': { label: 'Tickless CPUs (nohz)', group: 'Scheduler' },
  'extra.sched_autogroup': { label: 'Autogroup scheduling', group: 'Scheduler' },
  virtualization: { label: 'Virtualization', group: 'Virtualization & limits' },
  'extra.cgroup_cpu_max': { label: 'cgroup CPU limit (cpu.max)', group: 'Virtualization & limits' },
  'extra.cpu_quota': { label: 'CPU quota', group: 'Virtualization & limits' },
  'extra.cgroup_cpuset': { label: 'cgroup CPU set', group: 'Virtualization & limits' },
  load_average: { label: 'Load average (1, 5, 15 min)', group: 'Load' },
};

export const FACT_GROUP_ORDER: readonly FactGroupTitle[] = ['CPU', 'Memory', 'Kernel & mitigations', 'Frequency & clocks', 'Scheduler', 'Virtualization & limits', 'Load'];

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

function sentence(words: string): string {
  const s = words.replace(/_/g, ' ');
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/** A fact's label in words: "smt_active" → "SMT (hyper-threading)", "caches.L1d" → "L1 data cache". */
export function factLabel(key: string): string {
  const known = FACTS[key] ?? FACTS[`extra.${key}`];
  if (known) return known.label;
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
