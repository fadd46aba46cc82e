import { QueryClient, QueryObserver } from '@tanstack/react-query';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { connectPush, invalidationsFor, isPushLive, parsePushEvent, pollUnlessPushed, type PushEvent } from './push';

const run = (over: Partial<Extract<PushEvent, { kind: 'run' }>> = {}): PushEvent => ({
  kind: 'run',
  id: 'r1',
  what: 'changed',
  status: 'running',
  machine_id: 'm1',
  batch_id: 'b1',
  ...over,
});

const keys = (event: PushEvent, cached?: string) => invalidationsFor(event, cached)?.map((i) => JSON.stringify(i.queryKey));

describe('parsePushEvent', () => {
  it('reads the server events and refuses what it does not know', () => {
    expect(parsePushEvent('machine', '{"id":"m1","what":"offline"}')).toEqual({ kind: 'machine', id: 'm1', what: 'offline' });
    expect(parsePushEvent('run', '{"id":"r1","what":"deleted","status":null,"machine_id":null,"batch_id":null}')).toEqual(
      run({ what: 'deleted', status: null, machine_id: null, batch_id: null }),
    );
    expect(parsePushEvent('resync', '{}')).toEqual({ kind: 'resync' });
    expect(parsePushEvent('alert', '{"id":"a1","what":"opened"}')).toEqual({ kind: 'alert', id: 'a1', what: 'opened' });
    expect(parsePushEvent('run', 'not json')).toBeNull();
    expect(parsePushEvent('run', '{"what":"changed"}')).toBeNull();
    expect(parsePushEvent('other', '{"id":"x","what":"y"}')).toBeNull();
  });
});

describe('invalidationsFor', () => {
  it('machines: lists and pages, join tokens and the kernel list when one connects, compare unless it only went offline', () => {
    expect(keys({ kind: 'machine', id: 'm1', what: 'offline' })).toEqual(['["machines"]']);
    expect(keys({ kind: 'machine', id: 'm1', what: 'online' })).toEqual(['["machines"]', '["join-tokens"]', '["kernels"]', '["compare"]']);
    expect(keys({ kind: 'machine', id: 'm1', what: 'deleted' })).toContain('["runs"]');
  });

  it('a running run refreshes lists and its batch, compare only throttled, never the run page it streams', () => {
    const got = invalidationsFor(run(), 'running');
    expect(got).toEqual([
      { queryKey: ['runs', 'list'] },
      { queryKey: ['runs', 'batch', 'b1'] },
      { queryKey: ['compare'], throttleMs: 10_000 },
    ]);
  });

  it('a finished run: its page when it shows another status, results, compare and history at once', () => {
    const got = keys(run({ status: 'succeeded' }), 'running');
    expect(got).toEqual(
      expect.arrayContaining(['["runs","r1"]', '["runs","r1","results"]', '["compare"]', '["history"]']),
    );
    expect(invalidationsFor(run({ status: 'succeeded' }), 'running')).toContainEqual({ queryKey: ['runs', 'r1'], exact: true });
    expect(keys(run({ status: 'succeeded' }), 'succeeded')).not.toContain('["runs","r1"]'); // already seen
    expect(keys(run({ status: 'queued' }), 'failed')).toContain('["runs","r1"]'); // retried elsewhere
  });

  it('created and deleted runs touch their batch; batches and resync', () => {
    expect(keys(run({ what: 'created', status: 'queued' }))).toContain('["batches","b1"]');
    expect(keys(run({ what: 'deleted', status: null, batch_id: null }))).toEqual(
      expect.arrayContaining(['["runs","list"]', '["runs","batch"]', '["batches"]', '["runs","r1"]', '["compare"]']),
    );
    expect(keys({ kind: 'batch', id: 'b1', what: 'changed' })).toEqual(['["batches","b1"]', '["runs","batch","b1"]']);
    expect(invalidationsFor({ kind: 'resync' })).toBeNull();
  });

  it('an alert opened or moved refreshes the header count and the alerts page', () => {
    expect(keys({ kind: 'alert', id: 'a1', what: 'opened' })).toEqual(['["alerts"]']);
  });
});

class FakeSource {
  static all: FakeSource[] = [];
  readyState = 0;
  onopen: (() => unknown) | null = null;
  onerror: (() => unknown) | null = null;
  listeners = new Map<string, (e: Event) => void>();
  constructor(readonly url: string) {
    FakeSource.all.push(this);
  }
  addEventListener(name: string, fn: (e: Event) => void) {
    this.listeners.set(name, fn);
  }
  close() {
    this.readyState = 2;
  }
  emit(type: string, data: unknown) {
    this.listeners.get(type)?.({ type, data: JSON.stringify(data) } as unknown as Event);
  }
}

describe('connectPush', () => {
  afterEach(() => {
    FakeSource.all = [];
    vi.useRealTimers();
  });

  function setup() {
    const client = new QueryClient();
    const spy = vi.spyOn(client, 'invalidateQueries').mockResolvedValue(undefined);
    let t = 0;
    const stop = connectPush(client, {
      open: (url) => new FakeSource(url) as unknown as EventSource,
      now: () => t,
      retryMs: 1000,
    });
    const tick = (ms: number) => (t += ms);
    return { client, spy, stop, tick, source: () => FakeSource.all[FakeSource.all.length - 1]! };
  }

  it('turns the fallback timers off while live and invalidates what events name', () => {
    const { spy, stop, tick, source } = setup();
    const poll = pollUnlessPushed(3000);
    expect(source().url).toBe('/api/v1/events');
    expect(poll()).toBe(3000);
    source().onopen?.();
    expect(isPushLive()).toBe(true);
    expect(poll()).toBe(false);
    expect(spy).toHaveBeenCalledWith(undefined, { cancelRefetch: false }); // what changed before it opened
    spy.mockClear();
    source().emit('machine', { id: 'm1', what: 'offline' });
    expect(spy).toHaveBeenLastCalledWith({ queryKey: ['machines'], exact: undefined }, { cancelRefetch: false });
    spy.mockClear();
    source().emit('run', { id: 'r1', what: 'changed', status: 'running', machine_id: 'm1', batch_id: 'b1' });
    source().emit('run', { id: 'r1', what: 'changed', status: 'running', machine_id: 'm1', batch_id: 'b1' });
    const compare = spy.mock.calls.filter(([f]) => JSON.stringify(f?.queryKey) === '["compare"]');
    expect(compare).toHaveLength(1); // throttled
    tick(10_000);
    source().emit('run', { id: 'r1', what: 'changed', status: 'running', machine_id: 'm1', batch_id: 'b1' });
    expect(spy.mock.calls.filter(([f]) => JSON.stringify(f?.queryKey) === '["compare"]')).toHaveLength(2);
    spy.mockClear();
    source().emit('resync', {});
    expect(spy).toHaveBeenCalledWith(undefined, { cancelRefetch: false });
    stop();
    expect(isPushLive()).toBe(false);
  });

  it('a change told while a read is in flight is read again, not lost under the older answer', async () => {
    const { client, spy, stop, source } = setup();
    spy.mockRestore(); // the real invalidation, on a real query with an observer (a page showing it)
    source().onopen?.();
    const answers = ['none', 'offline', 'online'];
    const gate: Array<() => void> = [];
    let reads = 0;
    const observer = new QueryObserver(client, {
      queryKey: ['machines'],
      queryFn: async ({ signal }) => {
        const answer = answers[Math.min(reads++, 2)]!;
        if (answer === 'offline') await new Promise<void>((done) => gate.push(done)); // read before the change
        signal.throwIfAborted();
        return answer;
      },
    });
    const unsubscribe = observer.subscribe(() => undefined);
    await vi.waitFor(() => expect(client.getQueryData(['machines'])).toBe('none')); // the page's first read
    void observer.refetch(); // a timer's or an earlier event's read, in flight
    await vi.waitFor(() => expect(gate).toHaveLength(1));
    source().emit('machine', { id: 'm1', what: 'online' }); // the agent connects meanwhile
    gate.forEach((done) => done());
    await vi.waitFor(() => expect(client.getQueryData(['machines'])).toBe('online'));
    expect(reads).toBe(3);
    unsubscribe();
    stop();
  });

  it('events faster than a read never cancel it: the page is read again after it, not starved', async () => {
    const { client, spy, stop, source } = setup();
    spy.mockRestore();
    source().onopen?.();
    const gate: Array<() => void> = [];
    let reads = 0;
    let aborted = 0;
    const observer = new QueryObserver(client, {
      queryKey: ['runs', 'batch', 'b1'],
      queryFn: async ({ signal }) => {
        const n = ++reads;
        await new Promise<void>((done) => gate.push(done)); // a slow read: the server under load
        if (signal.aborted) aborted++;
        return `read ${n}`;
      },
    });
    const unsubscribe = observer.subscribe(() => undefined);
    await vi.waitFor(() => expect(gate).toHaveLength(1));
    for (let i = 0; i < 5; i++) source().emit('run', { id: 'r1', what: 'changed', status: 'running', machine_id: 'm1', batch_id: 'b1' });
    gate.shift()!(); // the first read ends: one more follows for the changes told meanwhile
    await vi.waitFor(() => expect(gate).toHaveLength(1));
    gate.shift()!();
    await vi.waitFor(() => expect(client.getQueryData(['runs', 'batch', 'b1'])).toBe('read 2'));
    expect(aborted).toBe(0);
    expect(reads).toBe(2);
    unsubscribe();
    stop();
  });

  it('falls back to timers when the stream drops, and opens a new one after a refusal', () => {
    vi.useFakeTimers();
    const { spy, stop, source } = setup();
    const first = source();
    first.onopen?.();
    first.readyState = 0; // reconnecting by itself
    first.onerror?.();
    expect(isPushLive()).toBe(false);
    expect(pollUnlessPushed(3000)()).toBe(3000);
    expect(spy).toHaveBeenCalledWith(undefined, { cancelRefetch: false }); // timers start again
    first.readyState = 2; // refused (401, 429, 503): the browser gives up
    first.onerror?.();
    expect(FakeSource.all).toHaveLength(1);
    vi.advanceTimersByTime(1000);
    expect(FakeSource.all).toHaveLength(2);
    spy.mockClear();
    source().onopen?.();
    expect(isPushLive()).toBe(true);
    expect(spy).toHaveBeenCalledWith(undefined, { cancelRefetch: false }); // catches up with what it missed
    stop();
  });
});
