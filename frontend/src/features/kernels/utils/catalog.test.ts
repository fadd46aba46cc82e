import { describe, expect, it } from 'vitest';
import type { Kernel } from '@/lib/api-types';
import { decodeKernelsQuery, encodeKernelsQuery, paramRange, searchKernels } from './catalog';

const k = (id: string, description = ''): Kernel => ({
  id,
  title: id,
  family: id.split('.')[0]!,
  unit: 'ns/op',
  description,
  params: [{ name: 'threads', type: 'int', default: 1, min: 1, max: 64 }],
  seed_reference: null,
  machines: [],
});

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
  it('describes ranges and choices', () => {
    expect(paramRange({ name: 'p', type: 'choice', choices: ['a', 'b'] })).toBe('a | b');
    expect(paramRange({ name: 'n', type: 'int', min: 1, max: 8 })).toBe('1…8');
    expect(paramRange({ name: 'n', type: 'int', min: 1 })).toBe('≥ 1');
    expect(paramRange({ name: 's', type: 'string' })).toBe('');
  });
});
