import { describe, expect, it } from 'vitest';
import type { Run, RunItem } from '@/lib/api-types';
import { aRunItem, progress } from '@/lib/test-fixtures';
import { progressView } from './progress';

const item = (i: number, state: RunItem['state'], result = state === 'succeeded'): RunItem =>
  aRunItem({ id: `i${i}`, index: i, state, result_id: result ? `res${i}` : null });

describe('progressView', () => {
  it('counts done items while a run goes on', () => {
    const items = [item(0, 'succeeded'), item(1, 'failed'), item(2, 'running')];
    const v = progressView({ status: 'running', items, progress: progress(3, 1, 1) });
    expect(v).toEqual({ done: 1, total: 3, failed: 1, tone: 'ok', label: '1 / 3 items (1 failed)' });
  });

  it('says a run was cancelled and counts the items measured, not the server total of done', () => {
    // The case: the server said 5 done (one cancelled item kept a result id) but 4 were measured.
    const items = [0, 1, 2, 3].map((i) => item(i, 'succeeded')).concat([item(4, 'cancelled', true)], [5, 6, 7].map((i) => item(i, 'cancelled')));
    const run: Pick<Run, 'status' | 'items' | 'progress'> = { status: 'cancelled', items, progress: progress(8, 5, 0) };
    expect(progressView(run)).toEqual({ done: 4, total: 8, failed: 0, tone: 'cancelled', label: 'Cancelled: 4 of 8 items measured (4 not run)' });
  });

  it('counts a cancelled run from the light list (no items sent) by its progress', () => {
    const v = progressView({ status: 'cancelled', items: [], progress: progress(8, 4, 1) });
    expect(v).toEqual({ done: 4, total: 8, failed: 1, tone: 'cancelled', label: 'Cancelled: 4 of 8 items measured (1 failed, 3 not run)' });
  });

  it('names failed items of a cancelled run apart from those never run', () => {
    const v = progressView({ status: 'cancelled', items: [item(0, 'succeeded'), item(1, 'failed'), item(2, 'queued')], progress: progress(3, 1, 1) });
    expect(v.label).toBe('Cancelled: 1 of 3 items measured (1 failed, 1 not run)');
  });
});
