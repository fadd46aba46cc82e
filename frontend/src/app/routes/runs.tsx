import { useMemo } from 'react';
import { Link, useSearchParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { Select } from '@/components/Form';
import { machineOptions } from '@/components/options';
import { useMachines } from '@/features/machines/api/machines';
import { useRuns } from '@/features/runs/api/runs';
import { RunsTable } from '@/features/runs/components/RunsTable';
import type { RunStatus } from '@/lib/api-types';
import { decodeRunsQuery, encodeRunsQuery, newRunPath, RUN_STATUS_FILTERS } from '@/lib/query-state';
import { useDocumentTitle } from './title';
import { paths } from '../paths';

export function RunsPage() {
  useDocumentTitle('Runs');
  const [searchParams, setSearchParams] = useSearchParams();
  const query = decodeRunsQuery(searchParams);
  const runs = useRuns(query);
  const machines = useMachines();
  const byId = useMemo(() => new Map((machines.data ?? []).map((m) => [m.id, m])), [machines.data]);
  const filtered = query.machine !== null || query.status !== null;
  const newRun = newRunPath({ machines: query.machine ? [query.machine] : [] });

  return (
    <>
      <h1>Runs</h1>
      <div className="toolbar">
        <label htmlFor="runs-machine">Machine</label>
        <Select
          id="runs-machine"
          value={query.machine ?? ''}
          onChange={(e) => setSearchParams(encodeRunsQuery({ ...query, machine: e.target.value || null }))}
          options={[{ value: '', label: 'All machines' }, ...machineOptions(machines.data ?? [])]}
        />
        <label htmlFor="runs-status">Status</label>
        <Select
          id="runs-status"
          value={query.status ?? ''}
          onChange={(e) => setSearchParams(encodeRunsQuery({ ...query, status: (e.target.value || null) as RunStatus | null }))}
          options={[{ value: '', label: 'Any status' }, ...RUN_STATUS_FILTERS]}
        />
        <Link className="button" to={newRun}>
          New run
        </Link>
      </div>
      {runs.isPending && <Loading what="runs" />}
      {runs.isError && <ErrorMessage title="Could not load runs:" error={runs.error} />}
      {runs.data &&
        (runs.data.length === 0 ? (
          filtered ? (
            <EmptyState title="No runs match">
              <p>
                No run matches these filters. <Link to={paths.runs}>Show all runs</Link>.
              </p>
            </EmptyState>
          ) : (
            <EmptyState title="No runs yet">
              <p>
                Start one from <Link to={newRun}>New run</Link>, or with the API: <code>POST /api/v1/runs</code> (see the{' '}
                <a href="/docs">API docs</a>).
              </p>
            </EmptyState>
          )
        ) : (
          <RunsTable runs={runs.data} machines={byId} />
        ))}
    </>
  );
}

export default RunsPage;
