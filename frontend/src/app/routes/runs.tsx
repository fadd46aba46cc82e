import { useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { useMachines } from '@/features/machines/api/machines';
import { useRuns } from '@/features/runs/api/runs';
import { RunsTable } from '@/features/runs/components/RunsTable';
import { decodeRunsQuery, encodeRunsQuery, newRunPath } from '@/lib/query-state';
import { useDocumentTitle } from './title';

export function RunsPage() {
  useDocumentTitle('Runs');
  const [searchParams, setSearchParams] = useSearchParams();
  const query = decodeRunsQuery(searchParams);
  const runs = useRuns(query);
  const machines = useMachines();
  const byId = useMemo(() => new Map((machines.data ?? []).map((m) => [m.id, m])), [machines.data]);

  return (
    <>
      <h1>Runs</h1>
      <div className="toolbar">
        <label htmlFor="runs-machine">Machine</label>
        <select
          id="runs-machine"
          value={query.machine ?? ''}
          onChange={(e) => setSearchParams(encodeRunsQuery({ machine: e.target.value || null }))}
        >
          <option value="">All machines</option>
          {(machines.data ?? []).map((m) => (
            <option key={m.id} value={m.id}>
              {m.name}
            </option>
          ))}
        </select>
        <Link className="button" to={newRunPath({ machine: query.machine })}>
          New run
        </Link>
      </div>
      {runs.isPending && <Loading what="runs" />}
      {runs.isError && <ErrorMessage title="Could not load runs:" error={runs.error} />}
      {runs.data &&
        (runs.data.length === 0 ? (
          <EmptyState title="No runs yet">
            <p>
              Start one from <Link to={newRunPath({ machine: query.machine })}>New run</Link>, or with the API:{' '}
              <code>POST /api/v1/runs</code> (see the <a href="/docs">API docs</a>).
            </p>
          </EmptyState>
        ) : (
          <RunsTable runs={runs.data} machines={byId} />
        ))}
    </>
  );
}
