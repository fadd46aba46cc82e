import type { RunStatus } from '@/lib/api-types';

/** A run's or an item's state as a coloured badge; the text is the state itself. */
export function StatusBadge({ status, testId }: { status: RunStatus | string; testId?: string }) {
  return (
    <span className={`badge badge-${status}`} data-testid={testId}>
      {status}
    </span>
  );
}

/** A machine's connection state. */
export function OnlineBadge({ online }: { online: boolean }) {
  return (
    <span className={`badge ${online ? 'badge-online' : 'badge-offline'}`} data-testid="machine-online">
      {online ? 'online' : 'offline'}
    </span>
  );
}
