import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';
import type { Machine } from '@/lib/api-types';
import { pollUnlessPushed } from '@/lib/push';

/** How often machine lists refresh: online state and last-seen move while the page is open. */
export const MACHINES_POLL_MS = 3000;

export const machinesQuery = () =>
  queryOptions({
    queryKey: ['machines'],
    queryFn: ({ signal }) => apiGet<Machine[]>('/machines', signal),
  });

export function useMachines(options: { poll?: boolean } = {}) {
  return useQuery({ ...machinesQuery(), refetchInterval: options.poll ? pollUnlessPushed(MACHINES_POLL_MS) : false });
}
