import type { MachineFacts } from '@/lib/api-types';
import { governorText } from '@/lib/facts';
import { formatBytes } from '@/lib/format';

/** The facts that move OS-primitive costs the most, as "label value" pairs ("" when unknown). */
export function keyFacts(f: MachineFacts): { label: string; value: string }[] {
  const cores =
    f.logical_cpus !== undefined || f.physical_cores !== undefined
      ? `${f.logical_cpus ?? '?'} logical / ${f.physical_cores ?? '?'} physical`
      : '';
  return [
    { label: 'CPU', value: f.cpu_model ?? '' },
    { label: 'Cores', value: cores },
    { label: 'SMT', value: f.smt_active === undefined ? '' : f.smt_active ? 'on' : 'off' },
    { label: 'Memory', value: f.memory_bytes !== undefined ? formatBytes(f.memory_bytes) : '' },
    { label: 'Kernel', value: f.kernel_release ?? '' },
    { label: 'Virtualization', value: f.virtualization ?? '' },
    { label: 'Clock', value: f.clocksource ?? '' },
    { label: 'Governor', value: governorText(f.governor) },
  ];
}

/** The machine in one line for a narrow screen: CPU, logical CPUs and memory, whichever are known. */
export function factsLine(f: MachineFacts): string {
  return [f.cpu_model ?? '', f.logical_cpus !== undefined ? `${f.logical_cpus} CPUs` : '', f.memory_bytes !== undefined ? formatBytes(f.memory_bytes) : '']
    .filter(Boolean)
    .join(' · ');
}
