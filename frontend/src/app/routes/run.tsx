import { Link, useParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading, QueryFallback } from '@/components/Feedback';
import { useCanWrite } from '@/features/auth/api/session';
import { useNow } from '@/components/use-now';
import { useMachines } from '@/features/machines/api/machines';
import { useRunEvents } from '@/features/runs/api/run-events';
import { useDeleteRun, useLaunchOverheads, usePatchRun, useRun, useRunResults } from '@/features/runs/api/runs';
import { ResultsTable } from '@/features/runs/components/ResultsTable';
import { RunItemsTable } from '@/features/runs/components/RunItemsTable';
import { RunSummary } from '@/features/runs/components/RunSummary';
import { runTitle } from '@/features/runs/utils/run-title';
import { runTiming } from '@/features/runs/utils/timing';
import { isTerminal, type Result, type Run } from '@/lib/api-types';
import { downloadBlob, exportName, runToCsv, runToJson } from '@/lib/export';
import { useLimits } from '@/lib/limits';
import { Housekeeping } from './housekeeping';
import { NamedTitle } from './named-title';
import { useDocumentTitle } from './title';
import { paths } from '../paths';

const NO_RESULTS: Result[] = [];

/** The run's results as files, as Compare exports a comparison. */
function RunExports({ run, results, durations }: { run: Run; results: Result[]; durations: ReadonlyMap<string, number> }) {
  const what = `run-${run.id.slice(0, 8)}`;
  return (
    <span className="exports">
      <button
        type="button"
        className="button button-small"
        data-testid="run-export-csv"
        onClick={() => downloadBlob(exportName('csv', new Date(), what), runToCsv(run, results, durations), 'text/csv')}
      >
        CSV
      </button>
      <button
        type="button"
        className="button button-small"
        data-testid="run-export-json"
        onClick={() => downloadBlob(exportName('json', new Date(), what), runToJson(run, results), 'application/json')}
      >
        JSON
      </button>
    </span>
  );
}

export function RunPage() {
  const { id = '' } = useParams();
  // The event stream keeps the run and its results current; polling only when it cannot be had.
  const live = useRunEvents(id);
  const run = useRun(id, { poll: live === 'polling' });
  const results = useRunResults(id, { enabled: run.isSuccess, poll: live === 'polling' && !isTerminal(run.data?.status) });
  const machines = useMachines();
  const machine = machines.data?.find((m) => m.id === run.data?.machine_id);
  // The ETA uses launch costs learnt from this machine's earlier runs, as the New run estimate does.
  const overheads = useLaunchOverheads(run.data && !isTerminal(run.data.status) ? run.data.machine_id : null);
  const now = useNow(1000);
  const limits = useLimits();
  const patch = usePatchRun(id);
  const remove = useDeleteRun(id);
  const canWrite = useCanWrite();
  const made = run.data ? runTitle(run.data, machine?.name) : `Run ${id.slice(0, 8)}`;
  const title = run.data?.name || made;
  useDocumentTitle(title);

  if (!run.isSuccess) {
    const notFound = (
      <EmptyState title="Run not found">
        <p>
          There is no run <code>{id}</code> on this server (it may have been deleted). See the <Link to={paths.runs}>recent runs</Link>.
        </p>
      </EmptyState>
    );
    return <QueryFallback query={run} what="the run" notFound={notFound} />;
  }

  const r = run.data;
  const ended = isTerminal(r.status);
  const measured = results.data ?? NO_RESULTS;
  // The estimates need the server's profiles (GET /limits, read once): until they come, no timing.
  const timing = limits.data ? runTiming(r, measured, overheads.data ?? new Map(), now, limits.data) : undefined;
  const durations = timing?.durations ?? new Map<string, number>();
  return (
    <>
      <NamedTitle what="run" id={r.id} record={r} made={made} patch={patch} editable={canWrite} />
      <RunSummary run={r} machine={machine} live={live} timing={timing} />

      <div className="page-head">
        <h2>Results</h2>
        {measured.length > 0 && <RunExports run={r} results={measured} durations={durations} />}
      </div>
      {results.isError && <ErrorMessage title="Could not load results:" error={results.error} />}
      {measured.length > 0 && <ResultsTable results={measured} items={r.items} />}
      {results.data && results.data.length === 0 && (
        <p className="muted">{ended ? 'No item of this run measured anything.' : 'No results yet: they appear as items finish.'}</p>
      )}
      {results.isPending && <Loading what="results" />}

      <h2>Items</h2>
      <RunItemsTable items={r.items} durations={durations} />

      {canWrite && (
        <Housekeeping
          remove={remove}
          then={paths.runs}
          label="Delete run"
          consequence={`Delete this run and its ${measured.length} ${measured.length === 1 ? 'result' : 'results'}? Compare falls back to earlier results; this cannot be undone.`}
          disabledReason={ended ? null : 'Cancel the run first: only a finished run can be deleted.'}
          testId="delete-run"
        />
      )}
    </>
  );
}

export default RunPage;
