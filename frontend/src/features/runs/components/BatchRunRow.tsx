import { Link } from 'react-router';
import { ProgressBar } from '@/components/ProgressBar';
import { StatusBadge } from '@/components/StatusBadge';
import { RelativeTime } from '@/components/Time';
import { isLightRun, type Machine, type Run } from '@/lib/api-types';
import { runPath } from '@/lib/query-state';
import { useRunEvents } from '../api/run-events';
import { useRun } from '../api/runs';
import { RunActions } from './RunActions';
import { LiveIndicator } from './RunSummary';
import { progressView } from '../utils/progress';
import { formatEta, launchEta } from '../utils/timing';

/** One machine's run of a batch, followed live over its own event stream; `now`: the page's clock. */
export function BatchRunRow({ initial, machine, now }: { initial: Run; machine: Machine | undefined; now: Date }) {
  const live = useRunEvents(initial.id);
  // A light list entry (no items) must not stand in the run's cache for its page: it loads the run.
  const initialData = isLightRun(initial) ? undefined : initial;
  const run = useRun(initial.id, { poll: live === 'polling', initialData }).data ?? initial;
  const eta = run.status === 'running' ? launchEta(run.progress, now) : null;
  return (
    <tr data-testid="batch-run">
      <td>
        <span className="strong" data-testid="batch-run-machine">
          {machine?.name ?? run.machine_id}
        </span>
        {machine && !machine.online && <span className="muted small"> (offline)</span>}
      </td>
      <td>
        <StatusBadge status={run.status} testId="run-status" /> <LiveIndicator mode={live} />
      </td>
      <td className="batch-progress">
        <ProgressBar {...progressView(run)} />
        {run.status === 'running' && (
          <div className="muted small" data-testid="batch-run-eta">
            {eta ? formatEta(eta.eta, eta.overdue) : 'ETA after its first launch'}
          </div>
        )}
      </td>
      <td>
        <Link to={runPath(run.id)}>
          <code>{run.id.slice(0, 8)}</code>
        </Link>
        <div className="muted small">
          {run.started_at ? (
            <>
              started <RelativeTime value={run.started_at} />
            </>
          ) : (
            'not started'
          )}
        </div>
      </td>
      <td>
        <div className="batch-actions">
          <RunActions run={run} compact />
        </div>
      </td>
    </tr>
  );
}
