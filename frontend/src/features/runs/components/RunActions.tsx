import { ErrorMessage } from '@/components/Feedback';
import { isTerminal, type Run } from '@/lib/api-types';
import { useCancelRun, useRetryRun } from '../api/runs';
import { retryableItems } from '../utils/run-events';

/**
 * Cancel while the run is queued or running; Retry once it has finished with items left undone. A 409
 * (the run finished meanwhile, or nothing is left to retry) shows the server's sentence.
 */
export function RunActions({ run, compact = false }: { run: Run; compact?: boolean }) {
  const cancel = useCancelRun(run.id);
  const retry = useRetryRun(run.id);
  const ended = isTerminal(run.status);
  const undone = ended ? retryableItems(run) : 0;
  return (
    <>
      {!ended && (
        <button
          type="button"
          className="button"
          disabled={cancel.isPending}
          onClick={() => {
            retry.reset();
            cancel.mutate();
          }}
        >
          {cancel.isPending ? 'Cancelling…' : compact ? 'Cancel' : 'Cancel run'}
        </button>
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
