// A run or batch named by what it measured, where and when ("4 kernels on alpha · 2026-11-23 10:36"),
// rather than by its UUID, which the pages keep small beside the title. Tested in run-title.test.ts.
import { runKernels, type Run } from '@/lib/api-types';
import { formatDateTime } from '@/lib/format';

/** "syscall.getppid", "syscall.getppid, lock.go_mutex", "4 kernels". */
export function kernelsPhrase(kernels: readonly string[]): string {
  const unique = [...new Set(kernels)];
  if (unique.length === 0) return 'no kernels';
  if (unique.length <= 2) return unique.join(', ');
  return `${unique.length} kernels`;
}

/** When a run started, to the minute in the reader's time; its creation while it waits. */
function when(run: Pick<Run, 'started_at' | 'created_at'>): string {
  return formatDateTime(run.started_at ?? run.created_at).slice(0, 16);
}

export function runTitle(run: Pick<Run, 'items' | 'kernels' | 'started_at' | 'created_at' | 'machine_id'>, machineName?: string | null): string {
  const on = machineName || run.machine_id.slice(0, 8);
  // A run from the light list carries no items, only `kernels`.
  return `${kernelsPhrase(runKernels(run))} on ${on} · ${when(run)}`;
}

/** A batch: the same run on several machines. */
export function batchTitle(runs: readonly Pick<Run, 'items' | 'kernels' | 'started_at' | 'created_at' | 'machine_id'>[]): string {
  const first = runs[0];
  if (!first) return 'Batch';
  const machines = new Set(runs.map((r) => r.machine_id)).size;
  const earliest = [...runs].sort((a, b) => (a.started_at ?? a.created_at).localeCompare(b.started_at ?? b.created_at))[0]!;
  return `${kernelsPhrase(runKernels(first))} on ${machines} ${machines === 1 ? 'machine' : 'machines'} · ${when(earliest)}`;
}
