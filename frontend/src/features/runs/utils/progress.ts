// What a run's progress bar and the runs list say. While a run goes on the bar counts launches (kernel
// processes, interleaved over the items) and says the items done beside them; once cancelled it says so,
// and counts from the items themselves, so its numbers match the results.
//
// Why the items: the server's `progress.done` counts every item that has a result, and the agent reports
// each item of a cancelled run with a "cancelled" result (a result id, no measurement). A cancelled run
// that measured nothing thus has done = total ("7 / 7"). The list's light runs (items=false) carry only
// those counts, so what a cancelled run measured is known once its items are read.
import { isLightRun, type Run, type RunItem } from '@/lib/api-types';

export interface ProgressView {
  done: number;
  total: number;
  failed: number;
  /** "cancelled": the bar is drawn grey, not green, and the label says the run was cancelled. */
  tone: 'ok' | 'cancelled';
  label: string;
}

type Counted = Pick<Run, 'status' | 'items' | 'progress'>;

/** "2 / 3": an item's launches done of planned; null for items from before launches were counted. */
export function launchesCell(item: Pick<RunItem, 'launches_done' | 'launches_planned'>): string | null {
  if (!item.launches_planned) return null;
  return `${item.launches_done ?? 0} / ${item.launches_planned}`;
}

/** A cancelled run's items: measured, failed, and the rest (cancelled before or while they ran). */
function cancelledCounts(run: Counted): { measured: number; failed: number; notRun: number; total: number } {
  const count = (state: string) => run.items.filter((i) => i.state === state).length;
  const measured = count('succeeded');
  const failed = count('failed');
  return { measured, failed, notRun: run.items.length - measured - failed, total: run.items.length };
}

/** Whether what a run measured is known only from its items, and this run came without them. */
export function needsItemsToCount(run: Counted): boolean {
  return run.status === 'cancelled' && isLightRun(run);
}

/**
 * Launches done of planned while a run is queued or running. Launches go round-robin over the items
 * (item 1, item 2, …, then item 1 again), so every item is running at once and none finishes before the
 * last round: counted in items, the bar would sit at 0 until it jumps to the end. Null when the server
 * counts no launches (runs stored before it did).
 */
export function launchCount(run: Counted): { done: number; planned: number } | null {
  const { launches_done: done, launches_planned: planned } = run.progress;
  if (run.status !== 'running' && run.status !== 'queued') return null;
  if (!planned || planned <= 0) return null;
  return { done: Math.min(done ?? 0, planned), planned };
}

export function progressView(run: Counted): ProgressView {
  const { total, done, failed } = run.progress;
  const launches = launchCount(run);
  if (launches) {
    const items = `${done} / ${total} items done${failed > 0 ? ` (${failed} failed)` : ''}`;
    return { done: launches.done, total: launches.planned, failed: 0, tone: 'ok', label: `${launches.done} / ${launches.planned} launches · ${items}` };
  }
  if (run.status !== 'cancelled') {
    return { done, total, failed, tone: 'ok', label: `${done} / ${total} items${failed > 0 ? ` (${failed} failed)` : ''}` };
  }
  // A run from the light list has no items to count, and its `done` counts cancelled items too: it
  // claims nothing measured until the run loads.
  if (isLightRun(run)) {
    return { done: 0, total, failed, tone: 'cancelled', label: `Cancelled: ${total} items, counting what was measured…` };
  }
  const c = cancelledCounts(run);
  const parts = [c.failed > 0 ? `${c.failed} failed` : '', c.notRun > 0 ? `${c.notRun} not run` : ''].filter(Boolean);
  return {
    done: c.measured,
    total: c.total,
    failed: c.failed,
    tone: 'cancelled',
    label: `Cancelled: ${c.measured} of ${c.total} items measured${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`,
  };
}

export interface ItemsCell {
  /** "3 / 7": items done (measured, for a cancelled run) of all; "… / 7" while that is being counted. */
  count: string;
  failed: number;
  /** A cancelled run's items never measured (cancelled before or while they ran). */
  notRun: number;
  /** For the cell's tooltip. */
  title: string;
}

/** The runs list's Items cell. `run` is the list's entry, or the run with its items once read. */
export function itemsCell(run: Counted): ItemsCell {
  const { total, done, failed } = run.progress;
  if (run.status !== 'cancelled') {
    return { count: `${done} / ${total}`, failed, notRun: 0, title: `${done} of ${total} items done${failed > 0 ? `, ${failed} failed` : ''}` };
  }
  if (isLightRun(run)) return { count: `… / ${total}`, failed: 0, notRun: 0, title: 'Cancelled: counting the items it measured' };
  const c = cancelledCounts(run);
  return { count: `${c.measured} / ${c.total}`, failed: c.failed, notRun: c.notRun, title: progressView(run).label };
}
