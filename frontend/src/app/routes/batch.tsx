import { useMemo } from 'react';
import { Link, useParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { useCanWrite } from '@/features/auth/api/session';
import { useMachines } from '@/features/machines/api/machines';
import { useBatch, useBatchRuns, useDeleteBatch, usePatchBatch } from '@/features/runs/api/runs';
import { BatchRunRow } from '@/features/runs/components/BatchRunRow';
import { batchEta, formatEta } from '@/features/runs/utils/timing';
import { useNow } from '@/components/use-now';
import { batchTitle } from '@/features/runs/utils/run-title';
import { isTerminal, runKernels, type Run } from '@/lib/api-types';
import { comparePath } from '@/lib/compare-query';
import { newRunPath } from '@/lib/query-state';
import { Housekeeping } from './housekeeping';
import { NamedTitle } from './named-title';
import { useDocumentTitle } from './title';
import { paths } from '../paths';
import { DataTable } from '@/components/TableHead';

/** Delete the batch with its runs, once none of them is unfinished (for those who may write). */
function BatchHousekeeping({ batchId, runs }: { batchId: string; runs: Run[] }) {
  const remove = useDeleteBatch(batchId);
  const unfinished = runs.filter((r) => !isTerminal(r.status)).length;
  return (
    <Housekeeping
      remove={remove}
      then={paths.runs}
      label="Delete batch"
      consequence={`Delete the ${runs.length} ${runs.length === 1 ? 'run' : 'runs'} of this batch with their results? This cannot be undone.`}
      disabledReason={unfinished > 0 ? `Cancel or wait for the ${unfinished} unfinished ${unfinished === 1 ? 'run' : 'runs'} first.` : null}
      testId="delete-batch"
    />
  );
}

/** Every run of a batch (one per machine), each with its own live progress, cancel and retry. */
export function BatchPage() {
  const { batchId = '' } = useParams();
  const runs = useBatchRuns(batchId);
  const info = useBatch(batchId);
  const patch = usePatchBatch(batchId);
  const canWrite = useCanWrite();
  useDocumentTitle(info.data?.name || (runs.data && runs.data.length > 0 ? batchTitle(runs.data) : `Batch ${batchId.slice(0, 8)}`));
  const machines = useMachines({ poll: true });
  const byId = useMemo(() => new Map((machines.data ?? []).map((m) => [m.id, m])), [machines.data]);
  const now = useNow(1000);

  if (runs.isPending) return <Loading what="the batch" />;
  if (runs.isError) return <ErrorMessage title="Could not load the batch:" error={runs.error} />;
  const first = runs.data[0];
  if (first === undefined) {
    return (
      <EmptyState title="Batch not found">
        <p>
          No run on this server belongs to batch <code>{batchId}</code>. See the <Link to={paths.runs}>recent runs</Link>.
        </p>
      </EmptyState>
    );
  }
  // Machine name order, so rows do not move as runs change state.
  const sorted = [...runs.data].sort((a, b) =>
    (byId.get(a.machine_id)?.name ?? a.machine_id).localeCompare(byId.get(b.machine_id)?.name ?? b.machine_id),
  );
  const kernels = runKernels(first);
  const made = batchTitle(sorted);
  const eta = batchEta(sorted, now);
  return (
    <>
      <NamedTitle what="batch" id={batchId} record={info.data} made={made} patch={patch} editable={canWrite} />
      <p className="lead">
        The same run on {sorted.length} {sorted.length === 1 ? 'machine' : 'machines'}
        {first.profile ? `, profile ${first.profile}` : ''}: {first.progress.total} {first.progress.total === 1 ? 'item' : 'items'} each from {kernels.length}{' '}
        {kernels.length === 1 ? 'kernel' : 'kernels'} ({kernels.join(', ')}).
        {eta && (
          <>
            {' '}
            <span data-testid="batch-eta">ETA: {eta.running > 0 ? formatEta(eta.eta, eta.overdue) : 'after the first launches'}</span>
            {eta.waiting > 0 && <span className="muted"> ({eta.waiting} not started yet)</span>}
          </>
        )}
      </p>
      <DataTable columns={['Machine', 'Status', 'Progress', 'Run', 'Actions']}>
        {sorted.map((run) => (
          <BatchRunRow key={run.id} initial={run} machine={byId.get(run.machine_id)} now={now} />
        ))}
      </DataTable>
      <p className="actions">
        {sorted.length >= 2 && (
          <Link className="button button-primary" to={comparePath({ batch: batchId, machines: sorted.map((r) => r.machine_id), kernels })} data-testid="compare-batch">
            Compare these machines
          </Link>
        )}
        <Link className="button" to={newRunPath({ machines: sorted.map((r) => r.machine_id), kernels, from: sorted[0]?.id })}>
          Run again on these machines…
        </Link>
      </p>
      {canWrite && <BatchHousekeeping batchId={batchId} runs={sorted} />}
    </>
  );
}

export default BatchPage;
