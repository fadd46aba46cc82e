import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiGet, apiPatch } from '@/lib/api-client';
import type { Machine, Run } from '@/lib/api-types';
import { useDeleteMutation } from '@/lib/mutations';
import { pollUnlessPushed } from '@/lib/push';
import { MACHINES_POLL_MS } from './machines';

export function useMachine(id: string) {
  return useQuery({
    queryKey: ['machines', id],
    queryFn: ({ signal }) => apiGet<Machine>(`/machines/${encodeURIComponent(id)}`, signal),
    refetchInterval: pollUnlessPushed(MACHINES_POLL_MS),
  });
}

/** Recent runs of every machine (one request), for the machines page's "last run" column. */
export function useRecentRuns() {
  return useQuery({
    queryKey: ['runs', 'list', 'recent'],
    queryFn: ({ signal }) => apiGet<Run[]>('/runs?limit=200&items=false', signal),
    refetchInterval: pollUnlessPushed(5000),
  });
}

/** Gives a machine a display name (null: the agent's own name again); its id stays. */
export function useRenameMachine(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (name: string | null) => apiPatch<Machine>(`/machines/${encodeURIComponent(id)}`, { name }),
    onSuccess: (m) => {
      client.setQueryData(['machines', id], m);
      void client.invalidateQueries({ queryKey: ['machines'] });
    },
  });
}

/** Changes the admin's labels of a machine with a JSON merge patch (a string sets a key, null removes it;
 * admins only). */
export function useSetLabels(id: string) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (labels: Record<string, string | null>) => apiPatch<Machine>(`/machines/${encodeURIComponent(id)}`, { labels }),
    onSuccess: (m) => {
      client.setQueryData(['machines', id], m);
      void client.invalidateQueries({ queryKey: ['machines'] });
    },
  });
}

/** Deletes a machine with all its runs and results (admin; 409 while it is online or busy). */
export function useDeleteMachine(id: string) {
  return useDeleteMutation(`/machines/${encodeURIComponent(id)}`, ['machines', id], [['machines'], ['runs']]);
}
