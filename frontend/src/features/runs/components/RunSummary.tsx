import { Link } from 'react-router';
import { ErrorMessage } from '@/components/Feedback';
import { ProgressBar } from '@/components/ProgressBar';
import { StatusBadge } from '@/components/StatusBadge';
import { DateTime } from '@/components/Time';
import { isTerminal, type Machine, type Run } from '@/lib/api-types';
import { formatDuration, secondsBetween } from '@/lib/format';
import { newRunPath } from '@/lib/query-state';
import { useCancelRun } from '../api/runs';

export function RunSummary({ run, machine }: { run: Run; machine: Machine | undefined }) {
  const took = secondsBetween(run.started_at, run.finished_at);
  const kernels = [...new Set(run.items.map((i) => i.kernel))];
  const cancel = useCancelRun(run.id);
  return (
    <section className="card">
      <div className="run-head">
        <StatusBadge status={run.status} testId="run-status" />
        <span>
          on <strong>{machine?.name ?? run.machine_id}</strong>
          {machine && !machine.online && run.status === 'queued' && (
            <span className="muted"> (offline: the run waits until its agent connects)</span>
          )}
        </span>
        <span className="run-actions">
          {!isTerminal(run.status) && (
            <button type="button" className="button" disabled={cancel.isPending} onClick={() => cancel.mutate()}>
              {cancel.isPending ? 'Cancelling…' : 'Cancel run'}
            </button>
          )}
          <Link className="button" to={newRunPath({ machine: run.machine_id, kernels })}>
            Run again…
          </Link>
        </span>
      </div>
      {cancel.isError && <ErrorMessage title="Could not cancel:" error={cancel.error} />}
      <ProgressBar done={run.progress.done} total={run.progress.total} failed={run.progress.failed} />
      <dl className="meta">
        <div>
          <dt>Created</dt>
          <dd>
            <DateTime value={run.created_at} />
          </dd>
        </div>
        <div>
          <dt>Started</dt>
          <dd>
            <DateTime value={run.started_at} />
          </dd>
        </div>
        <div>
          <dt>Finished</dt>
          <dd>
            <DateTime value={run.finished_at} />
            {took !== null && <span className="muted"> ({formatDuration(took)})</span>}
          </dd>
        </div>
        <div>
          <dt>Repetitions</dt>
          <dd>{run.repetitions ?? 'kernel default'}</dd>
        </div>
        <div>
          <dt>Min time</dt>
          <dd>{run.min_time_s !== null && run.min_time_s !== undefined ? formatDuration(run.min_time_s) : 'kernel default'}</dd>
        </div>
      </dl>
      {run.error && (
        <div className="message message-error" role="alert">
          {run.error}
        </div>
      )}
    </section>
  );
}
