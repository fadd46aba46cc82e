import { infiniteQueryOptions, queryOptions, useInfiniteQuery, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';
// The shapes of /api/v1/fleet-changes and /api/v1/peers, from the server's OpenAPI document (`make gen`).
import type { components } from '@/lib/api/schema';
import { fleetChangesPath, peersPath, type FleetView } from '../utils/fleet';

type Schemas = components['schemas'];

/** Steps of one kernel point on several hosts in one window, with what those hosts' facts share. */
export type FleetChange = Schemas['FleetChange'];
export type FleetChangesPage = Schemas['FleetChangesOut'];
/** A machine far from its hardware class's figure, with the facts where it differs. */
export type PeerOutlier = Schemas['PeerOutlier'];
export type PeersPage = Schemas['PeersOut'];

const ALL = ['fleet'] as const;

export const fleetChangesQuery = (view: FleetView, now: Date) =>
  infiniteQueryOptions({
    queryKey: [...ALL, 'changes', view.days, view.kernel] as const,
    initialPageParam: null as string | null,
    queryFn: ({ pageParam, signal }) => apiGet<FleetChangesPage>(fleetChangesPath(view, now, pageParam), signal),
    getNextPageParam: (last) => last.next_cursor ?? null,
  });

export const peersQuery = (view: FleetView) =>
  queryOptions({
    queryKey: [...ALL, 'peers', view.kernel] as const,
    queryFn: ({ signal }) => apiGet<PeersPage>(peersPath(view), signal),
  });

export function useFleetChanges(view: FleetView, now: Date) {
  return useInfiniteQuery(fleetChangesQuery(view, now));
}

export function usePeers(view: FleetView) {
  return useQuery(peersQuery(view));
}
