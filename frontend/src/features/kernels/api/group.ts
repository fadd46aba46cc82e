import type { Kernel } from '@/lib/api-types';

/** Kernels grouped by family (families and kernels in id order). */
function byFamily(kernels: Kernel[]): [string, Kernel[]][] {
  const groups = new Map<string, Kernel[]>();
  for (const k of [...kernels].sort((a, b) => a.id.localeCompare(b.id))) {
    const list = groups.get(k.family) ?? [];
    list.push(k);
    groups.set(k.family, list);
  }
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** The kernels a machine has, grouped by family (families and kernels in id order). */
export function kernelsByFamily(kernels: Kernel[], machineId: string | null): [string, Kernel[]][] {
  return kernelsOnAll(kernels, machineId === null ? [] : [machineId]).groups;
}

export interface KernelsOnMachines {
  /** Kernels every chosen machine has, grouped by family. */
  groups: [string, Kernel[]][];
  /** Kernels some chosen machine lacks, with the machines that lack it (id order). */
  missing: { kernel: Kernel; missingOn: string[] }[];
}

/**
 * The kernels a run on all of `machineIds` can use (the intersection of their catalogs), and for every
 * other kernel that at least one of them has, the machines it is missing on.
 */
export function kernelsOnAll(kernels: Kernel[], machineIds: string[]): KernelsOnMachines {
  if (machineIds.length === 0) return { groups: [], missing: [] };
  const everywhere: Kernel[] = [];
  const missing: { kernel: Kernel; missingOn: string[] }[] = [];
  for (const k of kernels) {
    const missingOn = machineIds.filter((m) => !k.machines.includes(m));
    if (missingOn.length === 0) everywhere.push(k);
    else if (missingOn.length < machineIds.length) missing.push({ kernel: k, missingOn });
  }
  missing.sort((a, b) => a.kernel.id.localeCompare(b.kernel.id));
  return { groups: byFamily(everywhere), missing };
}
