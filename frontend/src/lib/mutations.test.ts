import { QueryClient, QueryObserver, type QueryFunctionContext } from '@tanstack/react-query';
import { describe, expect, it, vi } from 'vitest';
import { forgetDeleted, refetchAfterWrite } from './mutations';

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

describe('refetchAfterWrite', () => {
  it('restarts a list\'s first fetch still in flight, so the list shows the write', async () => {
    const client = new QueryClient();
    let stored = ['a'];
    const answers: Array<() => void> = [];
    // A GET reads the rows as they are when it starts and answers when let go (or is aborted).
    const queryFn = vi.fn(({ signal }: QueryFunctionContext) => {
      const rows = [...stored];
      return new Promise<string[]>((resolve, reject) => {
        answers.push(() => resolve(rows));
        signal.addEventListener('abort', () => reject(signal.reason));
      });
    });
    const observer = new QueryObserver(client, { queryKey: ['tokens'], queryFn });
    const stop = observer.subscribe(() => {});
    await vi.waitFor(() => expect(queryFn).toHaveBeenCalledTimes(1)); // the page's first GET, in flight
    stored = ['a', 'b']; // the POST lands meanwhile
    const refreshed = refetchAfterWrite(client, ['tokens']);
    await vi.waitFor(() => expect(queryFn).toHaveBeenCalledTimes(2));
    for (const answer of answers) answer();
    await refreshed;
    expect(client.getQueryData(['tokens'])).toEqual(['a', 'b']);
    stop();
  });
});
