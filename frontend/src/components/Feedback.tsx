import type { ReactNode } from 'react';
import { errorMessage } from '@/lib/api-client';

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

export function EmptyState({ title, children }: { title: string; children?: ReactNode }) {
  return (
    <div className="empty">
      <h2>{title}</h2>
      {children}
    </div>
  );
}
