import { describe, expect, it } from 'vitest';
import {
  batchPath,
  decodeNewRunQuery,
  decodeRunsQuery,
  encodeNewRunQuery,
  encodeRunsQuery,
  newRunPath,
  runPath,
  runsApiQuery,
} from './query-state';

describe('new-run query state', () => {
  it('decodes the machines list and the kernels', () => {
    expect(decodeNewRunQuery('?machines=m1,m2&kernel=syscall.getppid&kernel=call.function')).toEqual({
      machines: ['m1', 'm2'],
      kernels: ['syscall.getppid', 'call.function'],
    });
  });

  it('keeps the older ?machine= links working, merged with machines', () => {
    expect(decodeNewRunQuery('?machine=m1')).toEqual({ machines: ['m1'], kernels: [] });
    expect(decodeNewRunQuery('?machines=m2&machine=m1&machine=m2')).toEqual({ machines: ['m2', 'm1'], kernels: [] });
  });

  it('is forgiving: missing, blank, comma lists and repeats', () => {
    expect(decodeNewRunQuery('')).toEqual({ machines: [], kernels: [] });
    expect(decodeNewRunQuery('machine=%20&machines=,,&kernel=')).toEqual({ machines: [], kernels: [] });
    expect(decodeNewRunQuery('machines=a,,b,a&machines=c')).toEqual({ machines: ['a', 'b', 'c'], kernels: [] });
    expect(decodeNewRunQuery('kernel=a,b&kernel=a')).toEqual({ machines: [], kernels: ['a', 'b'] });
  });

  it('writes machines as one readable comma list and round-trips, escaping what needs it', () => {
    expect(encodeNewRunQuery({ machines: ['m1', 'm2'] })).toBe('machines=m1,m2');
    const state = { machines: ['a b/c&d', 'e'], kernels: ['x.y', 'z'] };
    const qs = encodeNewRunQuery(state);
    expect(qs).toBe('machines=a%20b%2Fc%26d,e&kernel=x.y&kernel=z');
    expect(decodeNewRunQuery(qs)).toEqual(state);
    expect(decodeNewRunQuery(new URLSearchParams(qs))).toEqual(state);
  });

  it('carries the run to repeat', () => {
    const state = { machines: ['m1'], kernels: ['k'], from: 'run-1' };
    expect(newRunPath(state)).toBe('/runs/new?machines=m1&kernel=k&from=run-1');
    expect(decodeNewRunQuery(encodeNewRunQuery(state))).toEqual(state);
    expect(decodeNewRunQuery('from=%20')).toEqual({ machines: [], kernels: [] });
  });

  it('drops repeats and empties when encoding', () => {
    expect(encodeNewRunQuery({ machines: ['m1', '', 'm1'] })).toBe('machines=m1');
  });

  it('builds paths', () => {
    expect(newRunPath()).toBe('/runs/new');
    expect(newRunPath({ machines: ['m1'] })).toBe('/runs/new?machines=m1');
    expect(newRunPath({ kernels: ['k'] })).toBe('/runs/new?kernel=k');
    expect(encodeNewRunQuery({ machines: [], kernels: [] })).toBe('');
    expect(runPath('r 1')).toBe('/runs/r%201');
    expect(batchPath('b1')).toBe('/batches/b1');
  });
});

describe('runs query state', () => {
  it('round-trips the machine and status filters', () => {
    expect(decodeRunsQuery('?machine=m1&status=running')).toEqual({ machine: 'm1', status: 'running' });
    expect(decodeRunsQuery('')).toEqual({ machine: null, status: null });
    expect(encodeRunsQuery({ machine: 'm1', status: 'failed' })).toBe('machine=m1&status=failed');
    expect(encodeRunsQuery({ machine: null, status: null })).toBe('');
  });

  it('ignores a status it does not know', () => {
    expect(decodeRunsQuery('?status=exploded')).toEqual({ machine: null, status: null });
  });

  it('maps onto the REST query', () => {
    expect(runsApiQuery({ machine: 'm1', status: null }, 50)).toBe('machine_id=m1&limit=50');
    expect(runsApiQuery({ machine: null, status: 'queued' })).toBe('status=queued&limit=100');
    expect(runsApiQuery({ batch: 'b1' })).toBe('batch_id=b1&limit=100');
  });
});
