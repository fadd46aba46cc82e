import { queryOptions, useMutation, useQuery, useQueryClient, type QueryClient } from '@tanstack/react-query';
import { ApiError, apiGet, apiPatch, apiPost } from '@/lib/api-client';
import { isTerminal, type BatchCreated, type BatchInfo, type Result, type Run, type RunRequest, type TitleNotePatch } from '@/lib/api-types';
import { learnLaunchOverheads, type PastResult } from '@/features/runs/utils/estimate';
import { useDeleteMutation } from '@/lib/mutations';
import { pollUnlessPushed } from '@/lib/push';
import { runsApiQuery, type RunsQuery } from '@/lib/query-state';

/** Polling, when the live stream cannot be had: a run and its results every 2 s until it ends. */
export const RUN_POLL_MS = 2000;
export const RUNS_POLL_MS = 3000;

export const runQuery = (id: string) =>
  queryOptions({
    queryKey: ['runs', id],
    queryFn: ({ signal }) => apiGet<Run>(`/runs/${encodeURIComponent(id)}`, signal),
  });

export const runResultsQuery = (id: string) =>
  queryOptions({
    queryKey: ['runs', id, 'results'],
    queryFn: ({ signal }) => apiGet<Result[]>(`/runs/${encodeURIComponent(id)}/results`, signal),
  });

export const runsQuery = (query: RunsQuery) =>
  queryOptions({
    queryKey: ['runs', 'list', query],
    // Lists show summaries: the light form (no items) keeps a 5 s poll cheap with 1000-item runs.
    queryFn: ({ signal }) => apiGet<Run[]>(`/runs?${runsApiQuery(query)}&items=false`, signal),
  });

export const batchRunsQuery = (batchId: string) =>
  queryOptions({
    queryKey: ['runs', 'batch', batchId],
    queryFn: async ({ signal }) => {
      const runs = await apiGet<Run[]>(`/runs?${runsApiQuery({ batch: batchId }, 500)}&items=false`, signal);
      // A server that does not know the filter answers with every run: keep this batch's only.
      return runs.filter((r) => r.batch_id === batchId);
    },
  });

function stopOn4xx(error: unknown): boolean {
  return error instanceof ApiError && error.status >= 400 && error.status < 500;
}

/**
 * One run. Live updates come from `useRunEvents`, which writes into this query's cache; with `poll`
 * (the stream cannot be had) it refetches every RUN_POLL_MS until the run ends or a 4xx says it never will.
 */
export function useRun(id: string, options: { poll?: boolean; initialData?: Run; enabled?: boolean } = {}) {
  const { poll = false, initialData, enabled = true } = options;
  return useQuery({
    ...runQuery(id),
    initialData,
    enabled,
    refetchInterval: (q) => {
      if (!poll || stopOn4xx(q.state.error)) return false;
      return isTerminal(q.state.data?.status) ? false : RUN_POLL_MS;
    },
  });
}

/** A run's measured results; `useRunEvents` adds each as it lands, polling refetches them. */
export function useRunResults(id: string, options: { enabled?: boolean; poll?: boolean } = {}) {
  const { enabled = true, poll = false } = options;
  return useQuery({
    ...runResultsQuery(id),
    enabled,
    refetchInterval: (q) => (poll && !stopOn4xx(q.state.error) ? RUN_POLL_MS : false),
  });
}

export function useRuns(query: RunsQuery) {
  return useQuery({ ...runsQuery(query), refetchInterval: pollUnlessPushed(RUNS_POLL_MS) });
}

/** The runs of a batch; each run's own progress comes live, so the list itself refreshes slowly. */
export function useBatchRuns(batchId: string) {
  return useQuery({ ...batchRunsQuery(batchId), refetchInterval: pollUnlessPushed(10_000) });
}

/** Puts a run the server just sent into the cache, and marks lists as out of date. */
function storeRun(client: QueryClient, run: Run) {
  client.setQueryData(runQuery(run.id).queryKey, run);
  invalidateRunLists(client);
}

function invalidateRunLists(client: QueryClient) {
  void client.invalidateQueries({ queryKey: ['runs', 'list'] });
  void client.invalidateQueries({ queryKey: ['runs', 'batch'] });
}

export type CreatedRuns = { kind: 'run'; run: Run } | { kind: 'batch'; batch: BatchCreated };

/** Where the New run form posts: a batch (`machine_ids`) asks for its runs without their items, the
 * shape its page lists them in (`?items=false`: 100 machines × 50 items answer in a third of the time
 * and bytes); one run keeps its items, which its page shows at once. */
export function createRunPath(request: RunRequest): string {
  return 'machine_ids' in request && request.machine_ids ? '/runs?items=false' : '/runs';
}

export function useCreateRun() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: async (request: RunRequest): Promise<CreatedRuns> => {
      const body = await apiPost<Run | BatchCreated>(createRunPath(request), request);
      return 'batch_id' in body && 'runs' in body && Array.isArray(body.runs)
        ? { kind: 'batch', batch: body }
        : { kind: 'run', run: body as Run };
    },
    onSuccess: (created) => {
      if (created.kind === 'run') storeRun(client, created.run);
      else invalidateRunLists(client); // its runs came without items: not a run page's data
    },
  });
}

export function useCancelRun(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => apiPost<Run>(`/runs/${encodeURIComponent(id)}/cancel`, {}),
    onSuccess: (run) => storeRun(client, run),
  });
}

/** Queues a finished run's failed, cancelled and never-run items again; the run page follows it live. */
export function useRetryRun(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => apiPost<Run>(`/runs/${encodeURIComponent(id)}/retry`, {}),
    onSuccess: (run) => storeRun(client, run),
  });
}

/** How many of a machine's latest succeeded runs the New run page reads to learn launch costs. */
export const ESTIMATE_HISTORY_RUNS = 5;

/**
 * Each kernel's cost of a launch beyond its repetitions on one machine, learnt from the launches of its
 * latest succeeded runs (a handful of requests, once a minute at most); empty when it has none.
 */
export function useLaunchOverheads(machineId: string | null) {
  return useQuery({
    queryKey: ['runs', 'launch-overheads', machineId],
    enabled: machineId !== null,
    staleTime: 60_000,
    queryFn: async ({ signal }) => {
      const runs = await apiGet<Run[]>(
        `/runs?${runsApiQuery({ machine: machineId, status: 'succeeded' }, ESTIMATE_HISTORY_RUNS)}`,
        signal,
      );
      const results = await Promise.all(
        runs.map(async (run) =>
          (await apiGet<Result[]>(`/runs/${encodeURIComponent(run.id)}/results`, signal)).map(
            (r): PastResult => ({ kernel: r.kernel, minTimeS: run.min_time_s, launches: r.launches }),
          ),
        ),
      );
      return learnLaunchOverheads(results.flat());
    },
  });
}

/** Gives a run a title and note; the answer is the run, stored as the run page's data. */
export function usePatchRun(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (patch: TitleNotePatch) => apiPatch<Run>(`/runs/${encodeURIComponent(id)}`, patch),
    onSuccess: (run) => storeRun(client, run),
  });
}

/** Deletes a finished run with its results (the server refuses an unfinished one with 409). */
export function useDeleteRun(id: string) {
  return useDeleteMutation(`/runs/${encodeURIComponent(id)}`, ['runs', id], [['runs', 'list'], ['runs', 'batch'], ['batches']]);
}

export const batchQuery = (id: string) =>
  queryOptions({
    queryKey: ['batches', id],
    queryFn: ({ signal }) => apiGet<BatchInfo>(`/batches/${encodeURIComponent(id)}`, signal),
  });

/** A batch's title and note (and its runs' ids); a 404 when no run has this batch id. */
export function useBatch(id: string) {
  return useQuery({ ...batchQuery(id), retry: (n, e) => !stopOn4xx(e) && n < 2 });
}

export function usePatchBatch(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (patch: TitleNotePatch) => apiPatch<BatchInfo>(`/batches/${encodeURIComponent(id)}`, patch),
    onSuccess: (info) => client.setQueryData(batchQuery(id).queryKey, info),
  });
}

/** Deletes every run of a batch, or none (409) while one is unfinished. */
export function useDeleteBatch(id: string) {
  return useDeleteMutation(`/batches/${encodeURIComponent(id)}`, ['batches', id], [['runs']]);
}
