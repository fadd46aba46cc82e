import { describe, expect, it } from 'vitest';
import type { Result, Run } from '@/lib/api-types';
import { aResult, aRun, aRunItem, progress } from '@/lib/test-fixtures';
import { parseRunEvent, reduceRunEvent, retryableItems, streamGivesUp, upsertResult, type RunLiveState } from './run-events';

const run = (over: Partial<Run> = {}): Run =>
  aRun({
    repetitions: 5,
    items: [aRunItem({ id: 'i1', index: 0, state: 'running' }), aRunItem({ id: 'i2', index: 1, state: 'queued' })],
    progress: progress(2, 0),
    ...over,
  });

const result = (id: string, itemId: string, median = 1): Result => aResult({ id, item_id: itemId, median, samples: [1] });

const empty: RunLiveState = { run: undefined, results: undefined, ended: false };

describe('parseRunEvent', () => {
  it('reads run, progress (older servers), end and result events', () => {
    const r = run();
    expect(parseRunEvent('run', JSON.stringify(r))).toEqual({ type: 'run', run: r });
    expect(parseRunEvent('progress', JSON.stringify(r))).toEqual({ type: 'run', run: r });
    expect(parseRunEvent('end', JSON.stringify(r))).toEqual({ type: 'end', run: r });
    const res = result('x', 'i1');
    expect(parseRunEvent('result', JSON.stringify(res))).toEqual({ type: 'result', result: res });
  });

  it('ignores what it cannot use', () => {
    expect(parseRunEvent('run', 'not json')).toBeNull();
    expect(parseRunEvent('run', '[]')).toBeNull();
    expect(parseRunEvent('run', '{"id":"r1"}')).toBeNull();
    expect(parseRunEvent('result', '{"id":"x"}')).toBeNull();
    expect(parseRunEvent('weather', JSON.stringify(run()))).toBeNull();
  });
});

describe('reduceRunEvent', () => {
  it('replaces the run on each run event and marks the end', () => {
    const s1 = reduceRunEvent(empty, { type: 'run', run: run() });
    expect(s1.run?.status).toBe('running');
    expect(s1.ended).toBe(false);
    const done = run({ status: 'succeeded', progress: progress(2, 2, 0) });
    const s2 = reduceRunEvent(s1, { type: 'end', run: done });
    expect(s2).toEqual({ run: done, results: undefined, ended: true });
  });

  it('adds results as they land and links them to their items', () => {
    const s1 = reduceRunEvent({ ...empty, run: run() }, { type: 'result', result: result('a', 'i1') });
    expect(s1.results?.map((r) => r.id)).toEqual(['a']);
    expect(s1.run?.items.map((i) => i.result_id)).toEqual(['a', null]);
    const s2 = reduceRunEvent(s1, { type: 'result', result: result('b', 'i2') });
    expect(s2.results?.map((r) => r.id)).toEqual(['a', 'b']);
  });

  it('does not duplicate a result sent twice, and a retried item replaces its earlier result', () => {
    const s1 = reduceRunEvent(empty, { type: 'result', result: result('a', 'i1', 1) });
    const s2 = reduceRunEvent(s1, { type: 'result', result: result('a', 'i1', 2) });
    expect(s2.results).toEqual([result('a', 'i1', 2)]);
    const s3 = reduceRunEvent(s2, { type: 'result', result: result('a2', 'i1', 3) });
    expect(s3.results).toEqual([result('a2', 'i1', 3)]);
    expect(s3.run).toBeUndefined();
  });

  it('leaves the previous state untouched', () => {
    const before: RunLiveState = { run: run(), results: [result('a', 'i1')], ended: false };
    const copy = structuredClone(before);
    reduceRunEvent(before, { type: 'result', result: result('b', 'i2') });
    reduceRunEvent(before, { type: 'end', run: run({ status: 'cancelled' }) });
    expect(before).toEqual(copy);
  });
});

describe('upsertResult', () => {
  it('starts a list when there was none', () => {
    expect(upsertResult(undefined, result('a', 'i1'))).toEqual([result('a', 'i1')]);
  });
});

describe('retryableItems', () => {
  it('counts failed, cancelled and never-run items', () => {
    const r = run({ status: 'cancelled' });
    r.items = [
      { ...r.items[0]!, state: 'succeeded' },
      { ...r.items[1]!, state: 'cancelled' },
      { ...r.items[1]!, id: 'i3', state: 'failed' },
      { ...r.items[1]!, id: 'i4', state: 'queued' },
    ];
    expect(retryableItems(r)).toBe(3);
    expect(retryableItems(run({ items: [] }))).toBe(0);
  });
});

describe('streamGivesUp', () => {
  const CONNECTING = 0;
  const CLOSED = 2;
  it('waits for the browser to reconnect a couple of times, then polls', () => {
    expect(streamGivesUp(CONNECTING, 1)).toBe(false);
    expect(streamGivesUp(CONNECTING, 2)).toBe(false);
    expect(streamGivesUp(CONNECTING, 3)).toBe(true);
  });

  it('polls at once when the browser has closed the stream for good', () => {
    expect(streamGivesUp(CLOSED, 1)).toBe(true);
  });
});
