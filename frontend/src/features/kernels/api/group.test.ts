import { describe, expect, it } from 'vitest';
import type { Kernel } from '@/lib/api-types';
import { aKernel } from '@/lib/test-fixtures';
import { kernelsByFamily, kernelsOnAll } from './group';

const k = (id: string, machines: string[]): Kernel => aKernel(id, { machines });

describe('kernelsByFamily', () => {
  const all = [k('syscall.getppid', ['m1']), k('call.function', ['m1', 'm2']), k('syscall.raw', ['m1']), k('ctxswitch.pipe', ['m2'])];

  it('keeps only the machine’s kernels, grouped and sorted', () => {
    expect(kernelsByFamily(all, 'm1').map(([f, ks]) => [f, ks.map((x) => x.id)])).toEqual([
      ['call', ['call.function']],
      ['syscall', ['syscall.getppid', 'syscall.raw']],
    ]);
  });

  it('has nothing without a machine', () => {
    expect(kernelsByFamily(all, null)).toEqual([]);
    expect(kernelsByFamily(all, 'm9')).toEqual([]);
  });
});

describe('kernelsOnAll', () => {
  const all = [k('syscall.getppid', ['m1']), k('call.function', ['m1', 'm2']), k('ctxswitch.pipe', ['m2']), k('lock.go_mutex', ['m3'])];

  it('offers the kernels every chosen machine has and says where the others are missing', () => {
    const { groups, missing } = kernelsOnAll(all, ['m1', 'm2']);
    expect(groups.map(([f, ks]) => [f, ks.map((x) => x.id)])).toEqual([['call', ['call.function']]]);
    expect(missing.map((m) => [m.kernel.id, m.missingOn])).toEqual([
      ['ctxswitch.pipe', ['m1']],
      ['syscall.getppid', ['m2']],
    ]);
  });

  it('is the machine’s own catalog for one machine, and empty for none', () => {
    expect(kernelsOnAll(all, ['m1']).groups.flatMap(([, ks]) => ks.map((x) => x.id))).toEqual(['call.function', 'syscall.getppid']);
    expect(kernelsOnAll(all, ['m1']).missing).toEqual([]);
    expect(kernelsOnAll(all, [])).toEqual({ groups: [], missing: [] });
  });
});
