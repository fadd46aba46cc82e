import { describe, expect, it } from 'vitest';
import type { Run } from '@/lib/api-types';
import { formatDateTime } from '@/lib/format';
import { batchTitle, kernelsPhrase, runTitle } from './run-title';

const item = (kernel: string) => ({ kernel }) as Run['items'][number];
const run = (kernels: string[], extra: Partial<Run> = {}) =>
  ({ machine_id: '0123456789abcdef', items: kernels.map(item), created_at: '2026-11-23T10:00:00', started_at: '2026-11-23T10:36:30', ...extra }) as Run;

describe('kernelsPhrase', () => {
  it('names one or two kernels and counts more', () => {
    expect(kernelsPhrase(['a.x'])).toBe('a.x');
    expect(kernelsPhrase(['a.x', 'b.y', 'a.x'])).toBe('a.x, b.y');
    expect(kernelsPhrase(['a', 'b', 'c'])).toBe('3 kernels');
    expect(kernelsPhrase([])).toBe('no kernels');
  });
});

describe('runTitle', () => {
  it('says what, where and when (to the minute, local time)', () => {
    const at = formatDateTime('2026-11-23T10:36:30').slice(0, 16);
    expect(runTitle(run(['syscall.getppid', 'lock.go_mutex', 'lock.go_mutex', 'sched.yield']), 'alpha')).toBe(`3 kernels on alpha · ${at}`);
    expect(at).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
  });
  it('uses the creation time before the start, and the machine id when its name is unknown', () => {
    expect(runTitle(run(['call.function'], { started_at: null }))).toBe(`call.function on 01234567 · ${formatDateTime('2026-11-23T10:00:00').slice(0, 16)}`);
  });
});

describe('titles of light runs', () => {
  it('name the kernels from `kernels` when the list sent no items', () => {
    const light = run([], { kernels: ['syscall.getppid', 'lock.go_mutex'] });
    expect(runTitle(light, 'alpha')).toMatch(/^syscall\.getppid, lock\.go_mutex on alpha · /);
    expect(batchTitle([light])).toMatch(/^syscall\.getppid, lock\.go_mutex on 1 machine · /);
  });
});

describe('batchTitle', () => {
  it('counts machines and takes the earliest start', () => {
    const a = run(['x.y'], { machine_id: 'a', started_at: '2026-11-23T11:00:00' });
    const b = run(['x.y'], { machine_id: 'b', started_at: '2026-11-23T10:05:00' });
    expect(batchTitle([a, b])).toBe(`x.y on 2 machines · ${formatDateTime('2026-11-23T10:05:00').slice(0, 16)}`);
    expect(batchTitle([])).toBe('Batch');
  });
});
