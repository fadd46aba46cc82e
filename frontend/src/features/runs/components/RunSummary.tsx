import { useQuery } from '@tanstack/react-query';
import { Link } from 'react-router';
import { ProgressBar } from '@/components/ProgressBar';
import { StatusBadge } from '@/components/StatusBadge';
import { Meta } from '@/components/Meta';
import { DateTime } from '@/components/Time';
import type { Machine, Run } from '@/lib/api-types';
import { formatDuration, secondsBetween } from '@/lib/format';
import { comparePath } from '@/lib/compare-query';
import { batchPath, newRunPath } from '@/lib/query-state';
import type { LiveMode } from '../api/run-events';
import { runsQuery } from '../api/runs';
import { compareWithView } from '../utils/compare-with';
import { formatEta, type RunTiming } from '../utils/timing';
import { formatEstimate } from '@/features/runs/utils/estimate';
import { RunActions } from './RunActions';
import { progressView } from '../utils/progress';

const LIVE_TEXT: Record<LiveMode, string> = {
  connecting: 'connecting…',
  live: 'live',
  polling: 'updating every 2 s',
  idle: '',
};

/** How the page is following the run: live over the event stream, or polling when it cannot. */
export function LiveIndicator({ mode }: { mode: LiveMode }) {
  if (mode === 'idle') return null;
  return (
    <span className={`live live-${mode}`} data-testid="live-mode" title={mode === 'polling' ? 'The live stream is not available: polling instead.' : undefined}>
      {LIVE_TEXT[mode]}
    </span>
  );
}

/**
 * How long: the estimate while queued; elapsed and the ETA while running; what it took once finished.
 */
function Timing({ run, timing }: { run: Run; timing: RunTiming }) {
  if (run.status === 'queued') {
    return (
      <Meta term="Estimate" testId="run-estimate">{formatEstimate(timing.estimate)}</Meta>
    );
  }
  if (run.status === 'running') {
    return (
      <>
        <Meta term="Elapsed" testId="run-elapsed">{formatDuration(timing.elapsed)}</Meta>
        <Meta
          term="ETA"
          testId="run-eta"
          title="From the launches still to run and the measured wall time of those done, counting down from the last one; before a launch has ended, from the estimates of the items (launch costs learnt from this machine's earlier runs, else guessed)"
        >
          {timing.eta !== null ? formatEta(timing.eta, timing.overdue) : '—'}
        </Meta>
      </>
    );
  }
  return (
    <Meta term="Took" testId="run-took">{formatDuration(timing.elapsed)}</Meta>
  );
}

/** Status, machine, live mode and the run's actions: cancel or retry, run again, compare. */
function RunHead({ run, machine, live }: { run: Run; machine: Machine | undefined; live: LiveMode }) {
  const kernels = [...new Set(run.items.map((i) => i.kernel))];
  // Recent results elsewhere: "Compare with…" opens beside the machine that last measured these kernels.
  const recent = useQuery(runsQuery({ machine: null, status: 'succeeded' }));
  return (
    <div className="run-head">
      <StatusBadge status={run.status} testId="run-status" />
      <span>
        on <strong>{machine?.name ?? run.machine_id}</strong>
        {machine && !machine.online && run.status === 'queued' && <span className="muted"> (offline: the run waits until its agent connects)</span>}
      </span>
      <LiveIndicator mode={live} />
      <span className="run-actions">
        <RunActions run={run} />
        <Link className="button" to={newRunPath({ machines: [run.machine_id], kernels, from: run.id })} data-testid="run-again">
          Run again…
        </Link>
        <Link className="button" to={comparePath(compareWithView(run, recent.data ?? []))} data-testid="compare-run">
          Compare with…
        </Link>
      </span>
    </div>
  );
}

export function RunSummary({ run, machine, live, timing }: { run: Run; machine: Machine | undefined; live: LiveMode; timing?: RunTiming }) {
  const took = secondsBetween(run.started_at, run.finished_at);
  const failed = run.items.filter((i) => i.state === 'failed').length;
  const cancelled = run.items.filter((i) => i.state === 'cancelled').length;
  return (
    <section className="card">
      <RunHead run={run} machine={machine} live={live} />
      <ProgressBar {...progressView(run)} />
      <dl className="meta">
        {run.batch_id && (
          <Meta term="Batch">
            <Link to={batchPath(run.batch_id)} data-testid="batch-link" title={run.batch_id}>
              {run.batch_name ? run.batch_name : <code>{run.batch_id.slice(0, 8)}</code>}
            </Link>
          </Meta>
        )}
        {timing && <Timing run={run} timing={timing} />}
        <Meta term="Profile" testId="run-profile">{run.profile ?? 'default'}</Meta>
        <Meta term="Created">
          <DateTime value={run.created_at} />
        </Meta>
        <Meta term="Started">
          <DateTime value={run.started_at} />
        </Meta>
        <Meta term="Finished">
          <DateTime value={run.finished_at} />
          {took !== null && <span className="muted"> ({formatDuration(took)})</span>}
        </Meta>
        <Meta term="Repetitions">{run.repetitions ?? 'profile default'}</Meta>
        <Meta term="Min time">{run.min_time_s !== null && run.min_time_s !== undefined ? formatDuration(run.min_time_s) : 'kernel default'}</Meta>
        <Meta term="Failed items" testId="failed-count" className={failed > 0 ? 'error-text' : undefined}>
          {failed}
          {cancelled > 0 && <span className="muted"> ({cancelled} cancelled)</span>}
        </Meta>
      </dl>
      {run.error && (
        <div className="message message-error" role="alert">
          {run.error}
        </div>
      )}
    </section>
  );
}
