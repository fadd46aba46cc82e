import { QueryClient } from '@tanstack/react-query';
import { describe, expect, it } from 'vitest';
import { forgetDeleted } from './mutations';

describe('forgetDeleted', () => {
  it('drops the deleted record (and its sub-queries), marks the lists stale, leaves the rest', () => {
    const client = new QueryClient();
    for (const key of [['runs', 'r1'], ['runs', 'r1', 'results'], ['runs', 'r2'], ['runs', 'list', {}], ['batches'], ['machines']]) client.setQueryData(key, {});
    forgetDeleted(client, ['runs', 'r1'], [['runs', 'list'], ['batches']]);
    const cache = client.getQueryCache();
    expect(cache.find({ queryKey: ['runs', 'r1'] })).toBeUndefined();
    expect(cache.find({ queryKey: ['runs', 'r1', 'results'], exact: true })).toBeUndefined();
    expect(cache.find({ queryKey: ['runs', 'list', {}] })?.state.isInvalidated).toBe(true);
    expect(cache.find({ queryKey: ['batches'] })?.state.isInvalidated).toBe(true);
    expect(cache.find({ queryKey: ['runs', 'r2'], exact: true })?.state.isInvalidated).toBe(false);
    expect(cache.find({ queryKey: ['machines'] })?.state.isInvalidated).toBe(false);
  });
});
