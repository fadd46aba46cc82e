import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { ApiError, apiGet, apiPost } from '@/lib/api-client';
import { isTerminal, type Result, type Run, type RunRequest } from '@/lib/api-types';
import { runsApiQuery, type RunsQuery } from '@/lib/query-state';

/** A run page polls its run this often until the run ends (server-sent events come later). */
export const RUN_POLL_MS = 1000;
export const RUNS_POLL_MS = 3000;

export const runQuery = (id: string) =>
  queryOptions({
    queryKey: ['runs', id],
    queryFn: ({ signal }) => apiGet<Run>(`/runs/${encodeURIComponent(id)}`, signal),
  });

export const runsQuery = (query: RunsQuery) =>
  queryOptions({
    queryKey: ['runs', 'list', query],
    queryFn: ({ signal }) => apiGet<Run[]>(`/runs?${runsApiQuery(query)}`, signal),
  });

export function useRun(id: string) {
  return useQuery({
    ...runQuery(id),
    // Poll while the run can still change; stop once it has ended or the server says it cannot be had
    // (404 and other 4xx). A network blip or 5xx keeps polling, so the page recovers by itself.
    refetchInterval: (q) => {
      const e = q.state.error;
      if (e instanceof ApiError && e.status >= 400 && e.status < 500) return false;
      return isTerminal(q.state.data?.status) ? false : RUN_POLL_MS;
    },
  });
}

/** Results of a run: refetched with each progress step while it runs, once more when it ends. */
export function useRunResults(id: string, run: Run | undefined) {
  const done = run?.progress.done ?? 0;
  const status = run?.status ?? 'unknown';
  return useQuery({
    queryKey: ['runs', id, 'results', { done, status }],
    queryFn: ({ signal }) => apiGet<Result[]>(`/runs/${encodeURIComponent(id)}/results`, signal),
    enabled: run !== undefined,
    placeholderData: (previous) => previous,
  });
}

export function useRuns(query: RunsQuery) {
  return useQuery({ ...runsQuery(query), refetchInterval: RUNS_POLL_MS });
}

export function useCreateRun() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (request: RunRequest) => apiPost<Run>('/runs', request),
    onSuccess: (run) => {
      client.setQueryData(runQuery(run.id).queryKey, run);
      void client.invalidateQueries({ queryKey: ['runs', 'list'] });
    },
  });
}

export function useCancelRun(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => apiPost<Run>(`/runs/${encodeURIComponent(id)}/cancel`, {}),
    onSuccess: (run) => {
      client.setQueryData(runQuery(run.id).queryKey, run);
      void client.invalidateQueries({ queryKey: ['runs'] });
    },
  });
}
