// Where "Compare with…" on a run page goes: compare with this run pinned on its machine (the baseline)
// and, beside it, the machine that most recently measured any of the same kernels, so the page opens
// on a comparison rather than on one machine. With no such machine it opens on this one and the
// compare page asks for another. Tested in compare-with.test.ts.
import { runKernels, type Run } from '@/lib/api-types';
import type { CompareView } from '@/lib/compare-query';

/**
 * The compare view for `run`; `recent` is the newest runs first (as GET /runs lists them). Only a
 * succeeded item of another machine's run counts as "has results for these kernels".
 */
export function compareWithView(
  run: Pick<Run, 'id' | 'machine_id' | 'items'>,
  recent: readonly (Pick<Run, 'machine_id' | 'status' | 'items'> & Partial<Pick<Run, 'kernels' | 'progress'>>)[],
): Partial<CompareView> {
  const kernels = [...new Set(run.items.map((i) => i.kernel))];
  const wanted = new Set(kernels);
  // A run of the light list (items=false) has its kernels and counts but no items: it counts when one of
  // its kernels is wanted and some item finished without failing.
  const measured = (r: (typeof recent)[number]) =>
    r.items.length > 0
      ? r.items.some((i) => i.state === 'succeeded' && wanted.has(i.kernel))
      : !!r.progress && r.progress.done > r.progress.failed && runKernels({ items: r.items, kernels: r.kernels }).some((k) => wanted.has(k));
  const other = recent.find((r) => r.machine_id !== run.machine_id && r.status !== 'queued' && measured(r))?.machine_id;
  return {
    machines: other ? [run.machine_id, other] : [run.machine_id],
    baseline: run.machine_id,
    kernels,
    runs: [run.id],
  };
}
