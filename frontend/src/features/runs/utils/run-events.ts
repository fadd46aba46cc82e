// The run's Server-Sent Events (GET /runs/{id}/events) as changes to what the page shows: pure, so
// the hook that listens stays thin and the merging is tested without a browser.
import type { Result, Run } from '@/lib/api-types';

/** The event names the stream uses; `progress` is what servers before the orchestration contract sent. */
export const RUN_EVENT_NAMES = ['run', 'progress', 'result', 'end'] as const;

export type RunEvent = { type: 'run' | 'end'; run: Run } | { type: 'result'; result: Result };

export interface RunLiveState {
  run: Run | undefined;
  results: Result[] | undefined;
  /** The stream said `end`: nothing more will come. */
  ended: boolean;
}

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** One SSE message as a RunEvent, or null when it is not one (unknown name, bad JSON, wrong shape). */
export function parseRunEvent(name: string, data: string): RunEvent | null {
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch {
    return null;
  }
  if (!isObject(body) || typeof body.id !== 'string') return null;
  switch (name) {
    case 'run':
    case 'progress':
      return typeof body.status === 'string' && Array.isArray(body.items) ? { type: 'run', run: body as unknown as Run } : null;
    case 'end':
      return typeof body.status === 'string' && Array.isArray(body.items) ? { type: 'end', run: body as unknown as Run } : null;
    case 'result':
      return typeof body.item_id === 'string' ? { type: 'result', result: body as unknown as Result } : null;
    default:
      return null;
  }
}

/** Results with `result` in place of the one with its id (or of an earlier result for its item), else added. */
export function upsertResult(results: readonly Result[] | undefined, result: Result): Result[] {
  const list = results ?? [];
  const at = list.findIndex((r) => r.id === result.id || r.item_id === result.item_id);
  if (at < 0) return [...list, result];
  const next = [...list];
  next[at] = result;
  return next;
}

/** The run with the result's item pointing at it (the item's state comes with the next `run` event). */
function linkResult(run: Run | undefined, result: Result): Run | undefined {
  if (!run) return run;
  const item = run.items.find((i) => i.id === result.item_id);
  if (!item || item.result_id === result.id) return run;
  return { ...run, items: run.items.map((i) => (i.id === result.item_id ? { ...i, result_id: result.id } : i)) };
}

/** What the page shows after one event. */
export function reduceRunEvent(state: RunLiveState, event: RunEvent): RunLiveState {
  switch (event.type) {
    case 'run':
      return { ...state, run: event.run };
    case 'end':
      return { ...state, run: event.run, ended: true };
    case 'result':
      return { ...state, results: upsertResult(state.results, event.result), run: linkResult(state.run, event.result) };
  }
}

/** Items a retry would queue again: failed, cancelled, or never run. */
export function retryableItems(run: Run): number {
  return run.items.filter((i) => i.state === 'failed' || i.state === 'cancelled' || i.state === 'queued').length;
}

/** Errors in a row, without a message in between, before the page gives up on the stream and polls. */
export const MAX_STREAM_ERRORS = 3;

/**
 * After an EventSource error: keep waiting for the browser's own reconnect, or give up and poll.
 * CLOSED means the browser will not try again (the server answered 404, 5xx or not an event stream).
 */
export function streamGivesUp(readyState: number, errorsInARow: number, closed = 2): boolean {
  return readyState === closed || errorsInARow >= MAX_STREAM_ERRORS;
}
