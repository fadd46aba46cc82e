import { formatDateTime, formatRelativeTime, parseTimestamp } from '@/lib/format';

/** A timestamp shown relative ("5 s ago") with the exact local time on hover. */
export function RelativeTime({ value, now }: { value: string | null | undefined; now?: Date }) {
  const d = parseTimestamp(value);
  if (!d) return <span className="muted">never</span>;
  return (
    <time dateTime={d.toISOString()} title={formatDateTime(value)}>
      {formatRelativeTime(value, now)}
    </time>
  );
}

/** A timestamp in local time. */
export function DateTime({ value }: { value: string | null | undefined }) {
  const d = parseTimestamp(value);
  if (!d) return <span className="muted">—</span>;
  return <time dateTime={d.toISOString()}>{formatDateTime(value)}</time>;
}
