import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPatch, apiPost } from '@/lib/api-client';
import type { RunSettings } from '@/lib/api-types';

// The shapes of /api/v1/schedules, from the server's OpenAPI document (`make gen`: lib/api/schema.d.ts),
// with the run spec narrowed to the explorer's RunSettings as lib/api-types.ts narrows a run's request.
import type { components } from '@/lib/api/schema';
import { refetchAfterWrite } from '@/lib/mutations';

type Schemas = components['schemas'];

/** A machine a firing left out, and why: "busy" (a run of this schedule still queued or running), or
 * the machine is not active, unknown, or its catalog refuses the spec. */
export type Skipped = Schemas['SkippedOut'];
/** One slot fired: the runs it made and the machines it skipped; `error` when it made none at all. */
export type Firing = Schemas['FiringOut'];
/** How often a schedule fires: exactly one of interval_s and cron (5 fields, UTC), and its jitter. */
export type Timing = Pick<Schemas['ScheduleOut'], 'interval_s' | 'cron' | 'jitter_s'>;
/** `next_fire_at` is null while paused. */
export type Schedule = Omit<Schemas['ScheduleOut'], 'run'> & { run: RunSettings };
export type ScheduleDetail = Omit<Schemas['ScheduleDetail'], 'run'> & { run: RunSettings };
/** POST /schedules: one of machine_ids and selector, one of interval_s and cron. */
export type ScheduleCreate = Omit<Schemas['ScheduleCreate'], 'run' | 'paused'> & { run: RunSettings; paused?: boolean };

const LIST = ['schedules'] as const;

export const schedulesQuery = () =>
  queryOptions({
    queryKey: LIST,
    queryFn: ({ signal }) => apiGet<Schedule[]>('/schedules', signal),
  });

/** The schedules, refreshed every 10 s: firings happen on the server while the page is open. */
export function useSchedules() {
  return useQuery({ ...schedulesQuery(), refetchInterval: 10_000 });
}

export function useCreateSchedule() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: ScheduleCreate) => apiPost<ScheduleDetail>('/schedules', body),
    onSuccess: () => refetchAfterWrite(client, LIST),
  });
}

/** PATCH /schedules/{id}: the fields given change (the form sends them all); a new timing counts its
 * next slot from now. */
export function useUpdateSchedule() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: string; body: ScheduleCreate }) => apiPatch<ScheduleDetail>(`/schedules/${encodeURIComponent(id)}`, body),
    onSuccess: () => refetchAfterWrite(client, LIST),
  });
}

/** Pause or resume (POST /schedules/{id}/pause | resume). */
export function useSetPaused() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, paused }: { id: string; paused: boolean }) =>
      apiPost<ScheduleDetail>(`/schedules/${encodeURIComponent(id)}/${paused ? 'pause' : 'resume'}`, {}),
    onSuccess: () => refetchAfterWrite(client, LIST),
  });
}

export function useDeleteSchedule() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiDelete<void>(`/schedules/${encodeURIComponent(id)}`),
    onSuccess: () => refetchAfterWrite(client, LIST),
  });
}
