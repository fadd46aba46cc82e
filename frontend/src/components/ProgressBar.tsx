/** done of total as a bar with its numbers; `failed` of the done part is shown in red. */
export function ProgressBar({
  done,
  total,
  failed = 0,
  testId = 'run-progress',
}: {
  done: number;
  total: number;
  failed?: number;
  testId?: string;
}) {
  const pct = total > 0 ? Math.min(100, (done / total) * 100) : 0;
  const failedPct = total > 0 ? Math.min(pct, (failed / total) * 100) : 0;
  return (
    <div className="progress" data-testid={testId}>
      <div
        className="progress-track"
        role="progressbar"
        aria-label="Run progress"
        aria-valuemin={0}
        aria-valuemax={total}
        aria-valuenow={done}
      >
        <div className="progress-done" style={{ width: `${pct - failedPct}%` }} />
        <div className="progress-failed" style={{ width: `${failedPct}%` }} />
      </div>
      <span className="progress-label">
        {done} / {total} items{failed > 0 ? ` (${failed} failed)` : ''}
      </span>
    </div>
  );
}
