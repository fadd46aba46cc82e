import type { Kernel } from '@/lib/api-types';

/** The kernels a machine has, grouped by family (families and kernels in id order). */
export function kernelsByFamily(kernels: Kernel[], machineId: string | null): [string, Kernel[]][] {
  const groups = new Map<string, Kernel[]>();
  const mine = kernels
    .filter((k) => machineId !== null && k.machines.includes(machineId))
    .sort((a, b) => a.id.localeCompare(b.id));
  for (const k of mine) {
    const list = groups.get(k.family) ?? [];
    list.push(k);
    groups.set(k.family, list);
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
}
