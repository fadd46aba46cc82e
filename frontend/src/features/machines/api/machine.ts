import { useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';
import type { Machine, Run } from '@/lib/api-types';
import { MACHINES_POLL_MS } from './machines';

export function useMachine(id: string) {
  return useQuery({
    queryKey: ['machines', id],
    queryFn: ({ signal }) => apiGet<Machine>(`/machines/${encodeURIComponent(id)}`, signal),
    refetchInterval: MACHINES_POLL_MS,
  });
}

/** Recent runs of every machine (one request), for the machines page's "last run" column. */
export function useRecentRuns() {
  return useQuery({
    queryKey: ['runs', 'list', 'recent'],
    queryFn: ({ signal }) => apiGet<Run[]>('/runs?limit=200&items=false', signal),
    refetchInterval: 5000,
  });
}
