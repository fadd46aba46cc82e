import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiGet, apiPost } from '@/lib/api-client';
import { pollUnlessPushed } from '@/lib/push';
// The shapes of /api/v1/alerts, from the server's OpenAPI document (`make gen`: lib/api/schema.d.ts).
import type { components } from '@/lib/api/schema';
import { refetchAfterWrite } from '@/lib/mutations';

type Schemas = components['schemas'];

/** A significant step in one series (History's rule), with the host's fact changes around it. */
export type Alert = Schemas['AlertOut'];
export type AlertState = Schemas['AlertState'];
export type AlertCounts = Schemas['AlertCounts'];

const ALL = ['alerts'] as const;
/** Alerts open after runs finish (the server checks their series a moment later) and reach the header
 * through the push channel; while it is down the header looks again every minute. */
export const ALERTS_POLL_MS = 60_000;

export const alertCountsQuery = () =>
  queryOptions({
    queryKey: [...ALL, 'counts'] as const,
    queryFn: ({ signal }) => apiGet<AlertCounts>('/alerts/counts', signal),
  });

export const alertsQuery = (state: AlertState | null) =>
  queryOptions({
    queryKey: [...ALL, 'list', state ?? 'all'] as const,
    queryFn: ({ signal }) => apiGet<Alert[]>(state ? `/alerts?state=${state}` : '/alerts', signal),
  });

export function useAlertCounts(enabled: boolean) {
  return useQuery({ ...alertCountsQuery(), enabled, refetchInterval: pollUnlessPushed(ALERTS_POLL_MS) });
}

export function useAlerts(state: AlertState | null) {
  return useQuery({ ...alertsQuery(state), refetchInterval: pollUnlessPushed(ALERTS_POLL_MS) });
}

/** Acknowledge or resolve (POST /alerts/{id}/ack | resolve). */
export function useMoveAlert() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, to }: { id: string; to: 'ack' | 'resolve' }) => apiPost<Alert>(`/alerts/${encodeURIComponent(id)}/${to}`, {}),
    onSuccess: () => refetchAfterWrite(client, ALL),
  });
}
