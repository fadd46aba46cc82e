import { describe, expect, it } from 'vitest';
import { ApiError } from './api-client';
import { freshness } from './freshness';

const ok = { isError: false, error: null, failureCount: 0, failureReason: null };
const down = new ApiError('Cannot reach the ctxbench server for /api/v1/machines (Failed to fetch). Is it running?', 0);

describe('freshness', () => {
  it('is fresh while the newest attempt succeeded', () => {
    expect(freshness(ok)).toEqual({ problem: null, stale: false });
  });
  it('is stale from the first failed attempt, before the retries give up', () => {
    expect(freshness({ ...ok, failureCount: 1, failureReason: down })).toEqual({ problem: down, stale: true });
  });
  it('is stale once the query errs (server down, or a 5xx)', () => {
    expect(freshness({ ...ok, isError: true, error: down, failureCount: 3, failureReason: down }).stale).toBe(true);
    expect(freshness({ ...ok, isError: true, error: new ApiError('Server error (HTTP 503)', 503) }).stale).toBe(true);
    expect(freshness({ ...ok, isError: true, error: new TypeError('Failed to fetch') }).stale).toBe(true);
  });
  it('a 4xx is the server answering: a problem, not stale data', () => {
    const bad = new ApiError('selector: bad', 422);
    expect(freshness({ ...ok, isError: true, error: bad })).toEqual({ problem: bad, stale: false });
  });
});
