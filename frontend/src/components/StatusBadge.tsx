import type { RunStatus } from '@/lib/api-types';

/** A run's or an item's state as a coloured badge; the text is the state itself. */
export function StatusBadge({ status, testId }: { status: RunStatus | string; testId?: string }) {
  return (
    <span className={`badge badge-${status}`} data-testid={testId}>
      {status}
    </span>
  );
}

/** A machine's connection state; `stale`: the server cannot be asked, so it is not known (the last
 * known state in the tooltip). */
export function OnlineBadge({ online, stale = false }: { online: boolean; stale?: boolean }) {
  if (stale) {
    return (
      <span className="badge badge-unknown" data-testid="machine-online" title={`Last known: ${online ? 'online' : 'offline'}. The server cannot be reached to ask again.`}>
        unknown
      </span>
    );
  }
  return (
    <span className={`badge ${online ? 'badge-online' : 'badge-offline'}`} data-testid="machine-online">
      {online ? 'online' : 'offline'}
    </span>
  );
}
