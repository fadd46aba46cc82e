import { describe, expect, it } from 'vitest';
import {
  decodeNewRunQuery,
  decodeRunsQuery,
  encodeNewRunQuery,
  encodeRunsQuery,
  newRunPath,
  runsApiQuery,
} from './query-state';

describe('new-run query state', () => {
  it('decodes the machine and the kernels', () => {
    expect(decodeNewRunQuery('?machine=m1&kernel=syscall.getppid&kernel=call.function')).toEqual({
      machine: 'm1',
      kernels: ['syscall.getppid', 'call.function'],
    });
  });

  it('is forgiving: missing, blank, comma lists and repeats', () => {
    expect(decodeNewRunQuery('')).toEqual({ machine: null, kernels: [] });
    expect(decodeNewRunQuery('machine=%20&kernel=')).toEqual({ machine: null, kernels: [] });
    expect(decodeNewRunQuery('kernel=a,b&kernel=a')).toEqual({ machine: null, kernels: ['a', 'b'] });
  });

  it('round-trips, escaping what needs it', () => {
    const state = { machine: 'a b/c&d', kernels: ['x.y', 'z'] };
    const qs = encodeNewRunQuery(state);
    expect(qs).toBe('machine=a+b%2Fc%26d&kernel=x.y&kernel=z');
    expect(decodeNewRunQuery(qs)).toEqual(state);
    expect(decodeNewRunQuery(new URLSearchParams(qs))).toEqual(state);
  });

  it('builds paths', () => {
    expect(newRunPath()).toBe('/runs/new');
    expect(newRunPath({ machine: 'm1' })).toBe('/runs/new?machine=m1');
    expect(encodeNewRunQuery({ machine: null, kernels: [] })).toBe('');
  });
});

describe('runs query state', () => {
  it('round-trips the machine filter', () => {
    expect(decodeRunsQuery('?machine=m1')).toEqual({ machine: 'm1' });
    expect(decodeRunsQuery('')).toEqual({ machine: null });
    expect(encodeRunsQuery({ machine: 'm1' })).toBe('machine=m1');
    expect(encodeRunsQuery({ machine: null })).toBe('');
  });

  it('maps onto the REST query', () => {
    expect(runsApiQuery({ machine: 'm1' }, 50)).toBe('machine_id=m1&limit=50');
    expect(runsApiQuery({ machine: null })).toBe('limit=100');
  });
});
