import { formatDateTime, formatRelativeTime, parseTimestamp } from '@/lib/format';
import { useClockFor } from './use-now';

/**
 * A timestamp shown relative ("5 s ago") with the exact local time on hover. It moves on its own (a
 * shared clock: each second while under a minute old); `now`, when given, is the caller's clock instead.
 */
export function RelativeTime({ value, now }: { value: string | null | undefined; now?: Date }) {
  const d = parseTimestamp(value);
  const tick = useClockFor(d ? d.getTime() : null);
  if (!d) return <span className="muted">never</span>;
  return (
    <time dateTime={d.toISOString()} title={formatDateTime(value)}>
      {formatRelativeTime(value, now ?? new Date(tick))}
    </time>
  );
}

/** A timestamp in local time. */
export function DateTime({ value }: { value: string | null | undefined }) {
  const d = parseTimestamp(value);
  if (!d) return <span className="muted">—</span>;
  return <time dateTime={d.toISOString()}>{formatDateTime(value)}</time>;
}
