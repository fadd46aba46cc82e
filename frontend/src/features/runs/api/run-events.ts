import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { API_BASE } from '@/lib/api-client';
import { isTerminal, type Result, type Run } from '@/lib/api-types';
import { parseRunEvent, reduceRunEvent, RUN_EVENT_NAMES, streamGivesUp, type RunEvent } from '../utils/run-events';
import { runQuery, runResultsQuery } from './runs';

/** How the page follows a run: the live stream, polling (no stream to be had), or not at all (ended). */
export type LiveMode = 'connecting' | 'live' | 'polling' | 'idle';

export function runEventsUrl(runId: string): string {
  return `${API_BASE}/runs/${encodeURIComponent(runId)}/events`;
}

/**
 * Follows a run live over GET /runs/{id}/events and merges every event into the TanStack Query cache
 * of the run (`runQuery`) and its results (`runResultsQuery`), so the components that read those
 * queries update without polling. Stops on `end`; opens again when the run is queued again (retry).
 * Falls back to polling (the returned mode says so) when EventSource is missing or keeps failing.
 */
export function useRunEvents(runId: string): LiveMode {
  const client = useQueryClient();
  // Only reads the run the page already asked for: this observer never fetches.
  const status = useQuery({ ...runQuery(runId), enabled: false, select: (r) => r.status }).data;
  const active = !isTerminal(status);
  const [fallback, setFallback] = useState<string | null>(null);
  const [connected, setConnected] = useState<string | null>(null);
  const unsupported = typeof EventSource === 'undefined';

  useEffect(() => {
    if (!active || unsupported || fallback === runId || !runId) return;
    const source = new EventSource(runEventsUrl(runId));
    let errors = 0;

    const apply = (event: RunEvent) => {
      const runKey = runQuery(runId).queryKey;
      const resultsKey = runResultsQuery(runId).queryKey;
      const next = reduceRunEvent(
        { run: client.getQueryData<Run>(runKey), results: client.getQueryData<Result[]>(resultsKey), ended: false },
        event,
      );
      if (next.run) client.setQueryData(runKey, next.run);
      if (next.results) client.setQueryData(resultsKey, next.results);
      if (next.ended) {
        source.close();
        // One last read of the stored run and results: the final word even if the stream's last
        // snapshot raced a write (seen once after a retry: `end` with an item still queued).
        void client.invalidateQueries({ queryKey: runKey, exact: true });
        void client.invalidateQueries({ queryKey: resultsKey });
        void client.invalidateQueries({ queryKey: ['runs', 'list'] });
        void client.invalidateQueries({ queryKey: ['runs', 'batch'] });
      }
    };

    const onMessage = (e: MessageEvent<string>) => {
      errors = 0;
      setConnected(runId);
      const event = parseRunEvent(e.type, e.data);
      if (event) apply(event);
    };
    for (const name of RUN_EVENT_NAMES) source.addEventListener(name, onMessage);
    source.onopen = () => setConnected(runId);
    source.onerror = () => {
      errors += 1;
      if (streamGivesUp(source.readyState, errors, EventSource.CLOSED)) {
        source.close();
        setFallback(runId);
      }
    };
    return () => {
      source.close();
      setConnected(null);
    };
  }, [runId, active, unsupported, fallback, client]);

  // Polling sees the run end a moment before the last results: fetch them once more then.
  const polling = unsupported || fallback === runId;
  useEffect(() => {
    if (polling && !active) void client.invalidateQueries({ queryKey: runResultsQuery(runId).queryKey });
  }, [polling, active, runId, client]);

  if (!active) return 'idle';
  if (polling) return 'polling';
  return connected === runId ? 'live' : 'connecting';
}
