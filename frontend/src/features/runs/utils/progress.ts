// What a run's progress bar says. While a run goes on it counts the items done; once cancelled it says
// so, and counts from the items themselves, so its numbers match the results shown below it.
import { isLightRun, type Run } from '@/lib/api-types';

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
  // A run from the light list has no items to count: the server's counts stand in until the run loads.
  const light = isLightRun(run);
  const count = (state: string) => run.items.filter((i) => i.state === state).length;
  const measured = light ? done : count('succeeded');
  const failedItems = light ? failed : count('failed');
  const itemCount = light ? total : run.items.length;
  const notRun = itemCount - measured - failedItems;
  const parts = [failedItems > 0 ? `${failedItems} failed` : '', notRun > 0 ? `${notRun} not run` : ''].filter(Boolean);
  return {
    done: measured,
    total: itemCount,
    failed: failedItems,
    tone: 'cancelled',
    label: `Cancelled: ${measured} of ${itemCount} items measured${parts.length > 0 ? ` (${parts.join(', ')})` : ''}`,
  };
}
