import { describe, expect, it } from 'vitest';
import type { Run, RunItem } from '@/lib/api-types';
import { aRunItem, progress } from '@/lib/test-fixtures';
import { itemsCell, launchCount, launchesCell, needsItemsToCount, progressView } from './progress';

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

  it('claims nothing measured for a cancelled run from the light list (no items sent) until it loads', () => {
    // The light list's `done` counts the items the agent reported cancelled (each gets a result id), so
    // it cannot say what was measured: 4 done here may be 4 cancelled items.
    const v = progressView({ status: 'cancelled', items: [], progress: progress(8, 4, 1) });
    expect(v).toEqual({ done: 0, total: 8, failed: 1, tone: 'cancelled', label: 'Cancelled: 8 items, counting what was measured…' });
    expect(needsItemsToCount({ status: 'cancelled', items: [], progress: progress(8, 4, 1) })).toBe(true);
    expect(needsItemsToCount({ status: 'succeeded', items: [], progress: progress(8, 8) })).toBe(false);
  });

  it('names failed items of a cancelled run apart from those never run', () => {
    const v = progressView({ status: 'cancelled', items: [item(0, 'succeeded'), item(1, 'failed'), item(2, 'queued')], progress: progress(3, 1, 1) });
    expect(v.label).toBe('Cancelled: 1 of 3 items measured (1 failed, 1 not run)');
  });
});

describe('itemsCell (the runs list)', () => {
  it('shows a cancelled run that measured nothing as 0 of its items, not "7 / 7"', () => {
    // The case: every item of the cancelled run came back "cancelled" with a result id, so the
    // list's progress says 7 done.
    const light: Pick<Run, 'status' | 'items' | 'progress'> = { status: 'cancelled', items: [], progress: progress(7, 7) };
    expect(itemsCell(light)).toMatchObject({ count: '… / 7', failed: 0, notRun: 0 });
    const items = [0, 1, 2, 3, 4, 5, 6].map((i) => item(i, 'cancelled', true));
    expect(itemsCell({ ...light, items })).toEqual({ count: '0 / 7', failed: 0, notRun: 7, title: 'Cancelled: 0 of 7 items measured (7 not run)' });
  });

  it('counts measured, failed and not run items of a cancelled run apart', () => {
    const items = [item(0, 'succeeded'), item(1, 'succeeded'), item(2, 'failed', true), item(3, 'cancelled', true)];
    expect(itemsCell({ status: 'cancelled', items, progress: progress(4, 4, 1) })).toMatchObject({ count: '2 / 4', failed: 1, notRun: 1 });
  });

  it("keeps the server's counts for runs that were not cancelled", () => {
    expect(itemsCell({ status: 'failed', items: [], progress: progress(5, 5, 2) })).toEqual({ count: '5 / 5', failed: 2, notRun: 0, title: '5 of 5 items done, 2 failed' });
    expect(itemsCell({ status: 'running', items: [], progress: progress(5, 1) })).toMatchObject({ count: '1 / 5', failed: 0 });
  });
});

describe('progress in launches (issue 27)', () => {
  // A 7-item run, 3 launches each, round-robin: every item is running and none has finished.
  const running = [0, 1, 2, 3, 4, 5, 6].map((i) => item(i, 'running'));

  it('moves with each launch while no item has finished', () => {
    const at = (launches: number) => progressView({ status: 'running', items: running, progress: progress(7, 0, 0, 7, { launches_done: launches, launches_planned: 21 }) });
    expect(at(0)).toMatchObject({ done: 0, total: 21, label: '0 / 21 launches · 0 / 7 items done' });
    expect(at(1).done).toBe(1);
    expect(at(8)).toMatchObject({ done: 8, total: 21, tone: 'ok', label: '8 / 21 launches · 0 / 7 items done' });
  });

  it('says failed items beside the launches, and falls back to items where launches are not counted', () => {
    const v = progressView({ status: 'running', items: running, progress: progress(7, 2, 1, 5, { launches_done: 15, launches_planned: 20 }) });
    expect(v.label).toBe('15 / 20 launches · 2 / 7 items done (1 failed)');
    // a run stored before launches were counted, and a finished run, count items
    expect(progressView({ status: 'running', items: running, progress: progress(7, 3) }).label).toBe('3 / 7 items');
    expect(progressView({ status: 'succeeded', items: [], progress: progress(7, 7, 0, 0, { launches_done: 21, launches_planned: 21 }) }).label).toBe('7 / 7 items');
    expect(launchCount({ status: 'queued', items: [], progress: progress(7, 0, 0, 0, { launches_planned: 21 }) })).toEqual({ done: 0, planned: 21 });
  });
});

describe('launchesCell (the items table)', () => {
  it("shows an item's launches done of planned, and nothing for items from before they were counted", () => {
    expect(launchesCell({ launches_done: 2, launches_planned: 3 })).toBe('2 / 3');
    expect(launchesCell({ launches_done: 0, launches_planned: 0 })).toBeNull();
  });
});
