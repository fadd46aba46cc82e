import { describe, expect, it } from 'vitest';
import type { Kernel } from '@/lib/api-types';
import { aKernel, aParam } from '@/lib/test-fixtures';
import { currentKernelIds, decodeKernelsQuery, encodeKernelsQuery, familyGroups, findKernel, firstSentence, paramRange, searchKernels, searchScore } from './catalog';

const k = (id: string, description = ''): Kernel =>
  aKernel(id, { description, params: [aParam({ name: 'threads', type: 'int', default: 1, min: 1, max: 64 })] });

describe('kernels page', () => {
  it('round-trips its URL', () => {
    expect(decodeKernelsQuery(encodeKernelsQuery({ q: 'pipe switch', family: 'ctxswitch' }))).toEqual({ q: 'pipe switch', family: 'ctxswitch' });
    expect(encodeKernelsQuery({ q: '', family: null })).toBe('');
  });
  it('searches every word in ids, descriptions and parameter names', () => {
    const all = [k('ctxswitch.pipe', 'two processes over a pipe'), k('sched.yield', 'sched_yield in a loop')];
    expect(searchKernels(all, { q: 'PIPE processes', family: null }).map((x) => x.id)).toEqual(['ctxswitch.pipe']);
    expect(searchKernels(all, { q: 'threads', family: 'sched' }).map((x) => x.id)).toEqual(['sched.yield']);
  });
  it('ranks id matches above description matches, whole words above substrings', () => {
    const fam = (id: string, description: string, family = id.split('.')[0]!): Kernel => ({ ...k(id, description), family });
    const all = [
      fam('channel.pingpong', 'Two goroutines pass a token; the receiver blocks until it arrives.'),
      fam('futex.wake', 'A waiter sleeps on a futex lock word until woken.'),
      fam('lock.pthread_mutex', 'Threads contend on one pthread mutex.'),
      fam('sched.yield', 'Threads yield; no locks are held.'),
      fam('go.mutex_lock', 'sync.Mutex under contention.', 'go'),
      fam('lock.spin', 'A spin lock.'),
      fam('syscall.clock_gettime', 'One op is one clock read.'),
    ];
    // Ids first; then descriptions with "lock" or "locks" (a plural); "clock_gettime" and "blocks" only
    // contain it: last.
    expect(searchKernels(all, { q: 'lock', family: null }).map((x) => x.id)).toEqual([
      'lock.pthread_mutex',
      'lock.spin',
      'go.mutex_lock',
      'futex.wake',
      'sched.yield',
      'syscall.clock_gettime',
      'channel.pingpong',
    ]);
    expect(searchScore(all[5]!, 'lock.spin')).toBeGreaterThan(searchScore(all[2]!, 'lock.spin'));
    expect(searchKernels(all, { q: 'mutex', family: null }).map((x) => x.id)).toEqual(['go.mutex_lock', 'lock.pthread_mutex']);
    expect(searchKernels(all, { q: 'nothing-here', family: null })).toEqual([]);
  });
  it('groups the found kernels by family, the best match first while searching', () => {
    const all = [k('channel.pingpong', 'the receiver blocks'), k('lock.spin'), k('lock.pthread_mutex')].map((x) => ({ ...x, family: x.id.split('.')[0]! }));
    const found = searchKernels(all, { q: 'lock', family: null });
    expect(familyGroups(found, true).map(([f, ks]) => [f, ks.map((x) => x.id)])).toEqual([
      ['lock', ['lock.pthread_mutex', 'lock.spin']],
      ['channel', ['channel.pingpong']],
    ]);
    expect(familyGroups(all, false).map(([f, ks]) => [f, ks.map((x) => x.id)])).toEqual([
      ['channel', ['channel.pingpong']],
      ['lock', ['lock.pthread_mutex', 'lock.spin']],
    ]);
  });
  it('describes ranges and choices', () => {
    expect(paramRange({ name: 'p', type: 'choice', choices: ['a', 'b'] })).toBe('a | b');
    expect(paramRange({ name: 'n', type: 'int', min: 1, max: 8 })).toBe('1…8');
    expect(paramRange({ name: 'n', type: 'int', min: 1 })).toBe('≥ 1');
    expect(paramRange({ name: 's', type: 'string' })).toBe('');
  });
});

describe('firstSentence', () => {
  it('cuts a description after its first sentence', () => {
    expect(firstSentence('One op is one raw syscall. 1 syscall and 0 context switches per op.')).toBe('One op is one raw syscall.');
    expect(firstSentence('Two tasks pass a token. One op is one switch.')).toBe('Two tasks pass a token.');
    expect(firstSentence('`threads` threads yield; one op is one yield. `sleep` differs.')).toBe('`threads` threads yield; one op is one yield.');
  });

  it('does not cut at decimals, ids, abbreviations or lower-case continuations', () => {
    expect(firstSentence('Runs for 0.5 s, e.g. Linux or BSD, like syscall.getppid. Then more.')).toBe('Runs for 0.5 s, e.g. Linux or BSD, like syscall.getppid.');
    expect(firstSentence('Go vs. Python. Second.')).toBe('Go vs. Python.');
    expect(firstSentence('Ends here. and goes on.')).toBe('Ends here. and goes on.');
  });

  it('keeps a one-sentence text whole', () => {
    expect(firstSentence('  Just one sentence without a stop  ')).toBe('Just one sentence without a stop');
    expect(firstSentence('')).toBe('');
  });
});

describe('renamed kernels', () => {
  const mutex = { ...k('lock.go_mutex'), aliases: ['go.mutex'] };
  const kernels = [k('syscall.getppid'), mutex];
  it('finds a kernel by its id or an old id', () => {
    expect(findKernel(kernels, 'lock.go_mutex')).toBe(mutex);
    expect(findKernel(kernels, 'go.mutex')).toBe(mutex);
    expect(findKernel(kernels, 'go.nope')).toBeUndefined();
  });
  it('names old ids by their new ones, once, and leaves the others', () => {
    expect(currentKernelIds(kernels, ['go.mutex', 'syscall.getppid', 'lock.go_mutex', 'sched.*'])).toEqual(['lock.go_mutex', 'syscall.getppid', 'sched.*']);
  });
});
