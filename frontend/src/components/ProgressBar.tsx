/**
 * done of total as a bar with its label; `failed` of the done part is shown in red. A cancelled run's
 * bar is grey (tone "cancelled") so it does not read as a success.
 */
export function ProgressBar({
  done,
  total,
  failed = 0,
  label,
  tone = 'ok',
  testId = 'run-progress',
}: {
  done: number;
  total: number;
  failed?: number;
  label?: string;
  tone?: 'ok' | 'cancelled';
  testId?: string;
}) {
  const pct = total > 0 ? Math.min(100, (done / total) * 100) : 0;
  const failedShare = total > 0 ? (failed / total) * 100 : 0;
  // Running: failed items are counted within done. Cancelled: done counts measured items only, so the
  // failed ones sit beside them.
  const shownFailedPct = tone === 'cancelled' ? Math.min(100 - pct, failedShare) : Math.min(pct, failedShare);
  const donePct = tone === 'cancelled' ? pct : pct - shownFailedPct;
  return (
    <div className={`progress progress-${tone}`} data-testid={testId} data-tone={tone}>
      <div
        className="progress-track"
        role="progressbar"
        aria-label="Run progress"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done}
        aria-valuetext={label}
      >
        <div className="progress-done" style={{ width: `${donePct}%` }} />
        <div className="progress-failed" style={{ width: `${shownFailedPct}%` }} />
      </div>
      <span className="progress-label" data-testid="progress-label">
        {label ?? `${done} / ${total} items${failed > 0 ? ` (${failed} failed)` : ''}`}
      </span>
    </div>
  );
}
