import { describe, expect, it } from 'vitest';
import { ApiError, errorFromNetwork } from '@/lib/api-client';
import { submitError } from './submit-error';

describe('submitError', () => {
  it('a 4xx is the server refusing the run, with its reason', () => {
    expect(submitError(new ApiError('the queue is full', 409))).toEqual({ title: 'The server refused the run:', message: 'the queue is full' });
  });
  it('no answer is not a refusal: it says the server could not be reached', () => {
    const e = submitError(errorFromNetwork(new TypeError('Failed to fetch'), '/api/v1/runs'));
    expect(e.title).toBe('The server could not be reached, so the run may not have started:');
    expect(e.title).not.toMatch(/refused/);
    expect(e.message).toMatch(/Cannot reach the ctxbench server .*Is it running\?/);
  });
  it('a 5xx is a failure in the server, not a refusal', () => {
    expect(submitError(new ApiError('Server error (HTTP 500)', 500)).title).toBe('The server failed to start the run:');
  });
});
