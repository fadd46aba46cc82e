// What a run's progress bar says. While a run goes on it counts the items done; once cancelled it says
// so, and counts from the items themselves, so its numbers match the results shown below it.
import type { Run } from '@/lib/api-types';

export interface ProgressView {
  done: number;
  total: number;
  failed: number;
  /** "cancelled": the bar is drawn grey, not green, and the label says the run was cancelled. */
  tone: 'ok' | 'cancelled';
  label: string;
}

export function progressView(run: Pick<Run, 'status' | 'items' | 'progress'>): ProgressView {
  const { total, done, failed } = run.progress;
  if (run.status !== 'cancelled') {
    return { done, total, failed, tone: 'ok', label: `${done} / ${total} items${failed > 0 ? ` (${failed} failed)` : ''}` };
  }
  const count = (state: string) => run.items.filter((i) => i.state === state).length;
  const measured = count('succeeded');
  const failedItems = count('failed');
  const notRun = run.items.length - measured - failedItems;
  const parts = [failedItems > 0 ? `${failedItems} failed` : '', notRun > 0 ? `${notRun} not run` : ''].filter(Boolean);
  return {
    done: measured,
    total: run.items.length,
    failed: failedItems,
    tone: 'cancelled',
    label: `Cancelled: ${measured} of ${run.items.length} items measured${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`,
  };
}
