// Whether what a polled query shows is still known to be true. TanStack Query keeps the last data when a
// refresh fails, and says so only after its retries (seconds later): a page that shows states (a
// machine "online") reads this instead, from the first failed attempt.
import { ApiError } from './api-client';

export interface QueryAttempts {
  isError: boolean;
  error: unknown;
  failureCount: number;
  failureReason: unknown;
}

export interface Freshness {
  /** The failure of the newest attempt (retries may still be under way), or null. */
  problem: unknown;
  /** The data on screen could not be refreshed because the server did not answer (or failed): it is
   * the last known state, no longer a live one. A 4xx is an answer, not staleness. */
  stale: boolean;
}

export function freshness(q: QueryAttempts): Freshness {
  const problem = q.isError ? q.error : q.failureCount > 0 ? q.failureReason : null;
  if (problem === null || problem === undefined) return { problem: null, stale: false };
  const answered = problem instanceof ApiError && problem.status >= 400 && problem.status < 500;
  return { problem, stale: !answered };
}
