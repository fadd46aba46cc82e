import { describe, expect, it } from 'vitest';
import type { Run } from '@/lib/api-types';
import { compareWithView } from './compare-with';

const item = (kernel: string, state = 'succeeded') => ({ kernel, state }) as Run['items'][number];
const run = { id: 'r1', machine_id: 'a', items: [item('syscall.getppid'), item('lock.go_mutex'), item('lock.go_mutex')] };

describe('compareWithView', () => {
  it('adds the machine that most recently measured one of these kernels, this run as the baseline', () => {
    const recent = [
      { machine_id: 'a', status: 'succeeded', items: [item('syscall.getppid')] },
      { machine_id: 'b', status: 'failed', items: [item('lock.go_mutex', 'failed')] },
      { machine_id: 'c', status: 'succeeded', items: [item('call.function')] },
      { machine_id: 'd', status: 'succeeded', items: [item('lock.go_mutex')] },
      { machine_id: 'e', status: 'succeeded', items: [item('syscall.getppid')] },
    ] as Run[];
    expect(compareWithView(run, recent)).toEqual({ machines: ['a', 'd'], baseline: 'a', kernels: ['syscall.getppid', 'lock.go_mutex'], runs: ['r1'] });
  });

  it('reads runs of the light list by their kernels and counts', () => {
    const light = (machine_id: string, kernels: string[], done: number, failed: number) =>
      ({ machine_id, status: 'succeeded', items: [], kernels, progress: { total: 3, done, failed, running: 0 } }) as unknown as Run;
    expect(compareWithView(run, [light('b', ['lock.go_mutex'], 2, 2), light('c', ['call.function'], 3, 0), light('d', ['lock.go_mutex'], 3, 1)]).machines).toEqual(['a', 'd']);
  });

  it('opens on this machine alone when no other one has results for these kernels', () => {
    const recent = [{ machine_id: 'c', status: 'succeeded', items: [item('call.function')] }] as Run[];
    expect(compareWithView(run, recent)).toEqual({ machines: ['a'], baseline: 'a', kernels: ['syscall.getppid', 'lock.go_mutex'], runs: ['r1'] });
    expect(compareWithView(run, []).machines).toEqual(['a']);
  });
});
