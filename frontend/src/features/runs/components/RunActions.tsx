import { useState } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import { isTerminal, type Run } from '@/lib/api-types';
import { useCancelRun, useRetryRun } from '../api/runs';
import { retryableItems } from '../utils/run-events';

/**
 * Cancel while the run is queued or running (asked once more in place: the items not yet measured are
 * dropped); Retry once it has finished with items left undone. A 409 (the run finished meanwhile, or
 * nothing is left to retry) shows the server's sentence.
 */
export function RunActions({ run, compact = false }: { run: Run; compact?: boolean }) {
  const cancel = useCancelRun(run.id);
  const retry = useRetryRun(run.id);
  const [asking, setAsking] = useState(false);
  const ended = isTerminal(run.status);
  const undone = ended ? retryableItems(run) : 0;
  const left = run.progress.total - run.progress.done - run.progress.failed;
  return (
    <>
      {!ended && !asking && (
        <button type="button" className="button" disabled={cancel.isPending} onClick={() => setAsking(true)}>
          {cancel.isPending ? 'Cancelling…' : compact ? 'Cancel' : 'Cancel run'}
        </button>
      )}
      {!ended && asking && (
        <span className="confirm" role="group" aria-label="Cancel this run?" data-testid="cancel-confirm">
          <span>
            Cancel this run? {left > 0 ? `${left} ${left === 1 ? 'item is' : 'items are'} not measured yet.` : ''}
          </span>{' '}
          <button
            type="button"
            className="button button-small button-danger"
            onClick={() => {
              setAsking(false);
              retry.reset();
              cancel.mutate();
            }}
          >
            Yes, cancel
          </button>{' '}
          <button type="button" className="button button-small" onClick={() => setAsking(false)}>
            Keep running
          </button>
        </span>
      )}
      {ended && undone > 0 && (
        <button
          type="button"
          className="button"
          disabled={retry.isPending}
          title={`Queue the ${undone} failed, cancelled or unrun ${undone === 1 ? 'item' : 'items'} again`}
          onClick={() => {
            cancel.reset();
            retry.mutate();
          }}
        >
          {retry.isPending ? 'Retrying…' : compact ? 'Retry' : `Retry ${undone} ${undone === 1 ? 'item' : 'items'}`}
        </button>
      )}
      {cancel.isError && <ErrorMessage title="Could not cancel:" error={cancel.error} />}
      {retry.isError && <ErrorMessage title="Could not retry:" error={retry.error} />}
    </>
  );
}
