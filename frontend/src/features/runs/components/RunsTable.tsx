import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { StatusBadge } from '@/components/StatusBadge';
import { DateTime, RelativeTime } from '@/components/Time';
import { runKernels, type Machine, type Run } from '@/lib/api-types';
import { batchPath, runPath } from '@/lib/query-state';
import { runTitle } from '../utils/run-title';
import { runQuery } from '../api/runs';
import { itemsCell, needsItemsToCount } from '../utils/progress';
import { DataTable } from '@/components/TableHead';
import { num } from '@/components/table-columns';

/**
 * A run's items done of all. A cancelled run counts what it measured, which only its items say (the
 * list's counts take its cancelled items for done: "7 / 7" for a run that measured nothing), so its
 * row reads the run once; push events refresh it like the run's own page.
 */
function ItemsCount({ run }: { run: Run }) {
  const needed = needsItemsToCount(run);
  const full = useQuery({ ...runQuery(run.id), enabled: needed, staleTime: 60_000 });
  const cell = itemsCell(needed && full.data ? full.data : run);
  return (
    <td className="num" title={cell.title} data-testid="run-items">
      {cell.count}
      {cell.failed > 0 && <span className="error-text"> ({cell.failed} failed)</span>}
      {cell.notRun > 0 && <span className="muted small"> ({cell.notRun} not run)</span>}
    </td>
  );
}

export function RunsTable({ runs, machines }: { runs: Run[]; machines: Map<string, Machine> }) {
  // Runs per batch among those listed: a batch of several machines says so.
  const batchSize = new Map<string, number>();
  for (const r of runs) if (r.batch_id) batchSize.set(r.batch_id, (batchSize.get(r.batch_id) ?? 0) + 1);
  return (
    <DataTable columns={['Run', 'Status', 'Machine', 'Batch', 'Profile', 'Kernels', num('Items'), 'Created']}>
      {runs.map((run) => {
        const kernels = runKernels(run);
        return (
          <tr key={run.id} data-testid="run-row">
            <td>
              <Link to={runPath(run.id)} data-testid="run-link">
                {run.name || runTitle(run, machines.get(run.machine_id)?.name)}
              </Link>
              <div className="muted small">
                <code>{run.id.slice(0, 8)}</code>
              </div>
              {run.note && (
                <div className="muted small runs-note" data-testid="run-row-note" title={run.note}>
                  {run.note}
                </div>
              )}
            </td>
            <td>
              <StatusBadge status={run.status} />
            </td>
            <td>{machines.get(run.machine_id)?.name ?? <code>{run.machine_id}</code>}</td>
            <td>
              {run.batch_id ? (
                <>
                  <Link to={batchPath(run.batch_id)} data-testid="run-batch" title={run.batch_id}>
                    {run.batch_name ? run.batch_name : <code>{run.batch_id.slice(0, 8)}</code>}
                  </Link>
                  {(batchSize.get(run.batch_id) ?? 0) > 1 && (
                    <span className="muted small"> ×{batchSize.get(run.batch_id)}</span>
                  )}
                </>
              ) : (
                <span className="muted">—</span>
              )}
            </td>
            <td>{run.profile ?? <span className="muted">default</span>}</td>
            <td className="small" title={kernels.join(', ')}>
              {kernels.length} {kernels.length === 1 ? 'kernel' : 'kernels'}
              {kernels.length > 0 && <span className="muted">: {kernels.slice(0, 3).join(', ')}</span>}
              {kernels.length > 3 && <span className="muted">, …</span>}
            </td>
            <ItemsCount run={run} />
            <td>
              <RelativeTime value={run.created_at} /> <span className="muted small"><DateTime value={run.created_at} /></span>
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
