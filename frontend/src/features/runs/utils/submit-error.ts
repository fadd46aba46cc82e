import { ApiError, errorMessage } from '@/lib/api-client';

/** Why a run was not started, as the form says it: a title that tells who said no, and the message. */
export interface SubmitError {
  title: string;
  message: string;
}

/** A POST /runs that failed: refused by the server (4xx), failed in it (5xx), or never answered. */
export function submitError(err: unknown): SubmitError {
  const message = errorMessage(err);
  if (err instanceof ApiError && err.status >= 400 && err.status < 500) return { title: 'The server refused the run:', message };
  if (err instanceof ApiError && err.status >= 500) return { title: 'The server failed to start the run:', message };
  // No answer: the request may not have reached it (or its answer was lost), so nothing is claimed.
  return { title: 'The server could not be reached, so the run may not have started:', message };
}
