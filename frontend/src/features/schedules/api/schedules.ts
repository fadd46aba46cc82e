import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPost } from '@/lib/api-client';
import type { RunSettings } from '@/lib/api-types';

// The shapes of /api/v1/schedules (server: schedules/schemas.py; docs/architecture.md "REST shapes").

/** A machine a firing left out, and why: "busy" (a run of this schedule still queued or running), or
 * the machine is not active, unknown, or its catalog refuses the spec. */
export interface Skipped {
  machine_id: string;
  reason: string;
}

/** One slot fired: the runs it made and the machines it skipped; `error` when it made none at all. */
export interface Firing {
  id: string;
  due_at: string;
  fired_at: string;
  run_ids: string[];
  skipped: Skipped[];
  error: string | null;
}

/** How often a schedule fires: exactly one of interval_s and cron (5 fields, UTC), and its jitter. */
export interface Timing {
  interval_s: number | null;
  cron: string | null;
  jitter_s: number;
}

export interface Schedule extends Timing {
  id: string;
  name: string;
  run: RunSettings;
  machine_ids: string[] | null;
  selector: string | null;
  paused: boolean;
  /** Null while paused. */
  next_fire_at: string | null;
  next_due_at: string | null;
  created_by: string | null;
  created_at: string;
  updated_at: string;
  last_firing: Firing | null;
}

export interface ScheduleDetail extends Schedule {
  firings: Firing[];
}

/** POST /schedules: one of machine_ids and selector, one of interval_s and cron. */
export interface ScheduleCreate {
  name: string;
  run: RunSettings;
  machine_ids?: string[];
  selector?: string;
  interval_s?: number;
  cron?: string;
  jitter_s?: number;
  paused?: boolean;
}

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
    onSuccess: () => client.invalidateQueries({ queryKey: LIST }),
  });
}

/** Pause or resume (POST /schedules/{id}/pause | resume). */
export function useSetPaused() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, paused }: { id: string; paused: boolean }) =>
      apiPost<ScheduleDetail>(`/schedules/${encodeURIComponent(id)}/${paused ? 'pause' : 'resume'}`, {}),
    onSuccess: () => client.invalidateQueries({ queryKey: LIST }),
  });
}

export function useDeleteSchedule() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiDelete<void>(`/schedules/${encodeURIComponent(id)}`),
    onSuccess: () => client.invalidateQueries({ queryKey: LIST }),
  });
}
