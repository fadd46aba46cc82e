import type { ReactNode } from 'react';
import { ApiError, errorMessage } from '@/lib/api-client';

/** An error as a readable message (never a blank page). */
export function ErrorMessage({ error, title }: { error: unknown; title?: string }) {
  return (
    <div className="message message-error" role="alert">
      {title && <strong>{title} </strong>}
      {errorMessage(error)}
    </div>
  );
}

export function Loading({ what }: { what: string }) {
  return (
    <p className="muted" role="status" aria-live="polite">
      Loading {what}…
    </p>
  );
}

/**
 * A record's page until its record is there (render it while the query has not succeeded): the loading
 * line, the page's own `notFound` on a 404, or the error.
 */
export function QueryFallback({ query, what, notFound }: { query: { isError: boolean; error: unknown }; what: string; notFound: ReactNode }) {
  if (!query.isError) return <Loading what={what} />;
  if (query.error instanceof ApiError && query.error.isNotFound) return notFound;
  return <ErrorMessage title={`Could not load ${what}:`} error={query.error} />;
}

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <h2>{title}</h2>
      {children}
    </div>
  );
}
