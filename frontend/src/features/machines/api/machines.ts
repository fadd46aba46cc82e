import { keepPreviousData, queryOptions, useQuery } from '@tanstack/react-query';
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

/** The machines, polled when `poll`; with a selector, those whose labels match it (the server filters:
 * GET /machines?selector=), under a key below ['machines'] so that whatever refreshes the machines
 * refreshes it too, the previous list shown while a new selector loads. */
export function useMachines(options: { poll?: boolean; selector?: string } = {}) {
  const selector = options.selector ?? '';
  const all = machinesQuery();
  return useQuery({
    queryKey: selector ? ['machines', { selector }] : all.queryKey,
    queryFn: ({ signal }) => apiGet<Machine[]>(selector ? `/machines?selector=${encodeURIComponent(selector)}` : '/machines', signal),
    placeholderData: selector ? keepPreviousData : undefined,
    refetchInterval: options.poll ? pollUnlessPushed(MACHINES_POLL_MS) : false,
  });
}
