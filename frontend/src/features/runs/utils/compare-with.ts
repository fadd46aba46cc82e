// Where "Compare with…" on a run page goes: compare with this run pinned on its machine (the baseline)
// and, beside it, the machine that most recently measured any of the same kernels, so the page opens
// on a comparison rather than on one machine. With no such machine it opens on this one and the
// compare page asks for another. Tested in compare-with.test.ts.
import type { Run } from '@/lib/api-types';
import type { CompareView } from '@/lib/compare-query';

/**
 * The compare view for `run`; `recent` is the newest runs first (as GET /runs lists them). Only a
 * succeeded item of another machine's run counts as "has results for these kernels".
 */
export function compareWithView(run: Pick<Run, 'id' | 'machine_id' | 'items'>, recent: readonly Pick<Run, 'machine_id' | 'status' | 'items'>[]): Partial<CompareView> {
  const kernels = [...new Set(run.items.map((i) => i.kernel))];
  const wanted = new Set(kernels);
  const other = recent.find(
    (r) => r.machine_id !== run.machine_id && r.status !== 'queued' && r.items.some((i) => i.state === 'succeeded' && wanted.has(i.kernel)),
  )?.machine_id;
  return {
    machines: other ? [run.machine_id, other] : [run.machine_id],
    baseline: run.machine_id,
    kernels,
    runs: [run.id],
  };
}
