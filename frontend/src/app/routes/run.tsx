import { Link, useParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { useMachines } from '@/features/machines/api/machines';
import { useRunEvents } from '@/features/runs/api/run-events';
import { useRun, useRunResults } from '@/features/runs/api/runs';
import { ResultsTable } from '@/features/runs/components/ResultsTable';
import { RunItemsTable } from '@/features/runs/components/RunItemsTable';
import { RunSummary } from '@/features/runs/components/RunSummary';
import { runTitle } from '@/features/runs/utils/run-title';
import { ApiError } from '@/lib/api-client';
import { isTerminal } from '@/lib/api-types';
import { useDocumentTitle } from './title';

export function RunPage() {
  const { id = '' } = useParams();
  // The event stream keeps the run and its results current; polling only when it cannot be had.
  const live = useRunEvents(id);
  const run = useRun(id, { poll: live === 'polling' });
  const results = useRunResults(id, { enabled: run.isSuccess, poll: live === 'polling' && !isTerminal(run.data?.status) });
  const machines = useMachines();
  const machine = machines.data?.find((m) => m.id === run.data?.machine_id);
  const title = run.data ? runTitle(run.data, machine?.name) : `Run ${id.slice(0, 8)}`;
  useDocumentTitle(title);

  if (run.isPending) return <Loading what="the run" />;
  if (run.isError) {
    if (run.error instanceof ApiError && run.error.isNotFound) {
      return (
        <EmptyState title="Run not found">
          <p>
            There is no run <code>{id}</code> on this server. See the <Link to="/runs">recent runs</Link>.
          </p>
        </EmptyState>
      );
    }
    return <ErrorMessage title="Could not load the run:" error={run.error} />;
  }

  const r = run.data;
  const ended = isTerminal(r.status);
  return (
    <>
      <h1 className="run-title">
        {title}
        <span className="run-id-line">
          run <code className="run-id" data-testid="run-id">{r.id}</code>
        </span>
      </h1>
      <RunSummary run={r} machine={machine} live={live} />

      <h2>Results</h2>
      {results.isError && <ErrorMessage title="Could not load results:" error={results.error} />}
      {results.data && results.data.length > 0 && <ResultsTable results={results.data} items={r.items} />}
      {results.data && results.data.length === 0 && (
        <p className="muted">{ended ? 'No item of this run measured anything.' : 'No results yet: they appear as items finish.'}</p>
      )}
      {results.isPending && <Loading what="results" />}

      <h2>Items</h2>
      <RunItemsTable items={r.items} />
    </>
  );
}

export default RunPage;
