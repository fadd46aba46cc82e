import { keepPreviousData, queryOptions, useMutation, useQuery } from '@tanstack/react-query';
import { apiGet, apiPost } from '@/lib/api-client';
import type { CompareResponse, Share, ShareCreated, ShareFact } from '@/lib/api-types';
import { compareApiQuery, type CompareView } from '@/lib/compare-query';
import { pollUnlessPushed } from '@/lib/push';

export const compareQuery = (view: CompareView) => {
  const qs = compareApiQuery(view);
  return queryOptions({
    queryKey: ['compare', qs],
    queryFn: ({ signal }) => apiGet<CompareResponse>(`/compare?${qs}`, signal),
  });
};

/** Enough to ask: two machines (the server's minimum), a batch that names them, or two sides of runs. */
export function canCompare(view: CompareView): boolean {
  if (view.sides.length > 0) return view.sides.length >= 2;
  return view.machines.length >= 2 || (view.batch !== null && view.machines.length !== 1);
}

/** The live comparison; it refreshes while the page is open, so new results show up. */
export function useCompare(view: CompareView) {
  return useQuery({
    ...compareQuery(view),
    enabled: canCompare(view),
    placeholderData: keepPreviousData,
    refetchInterval: pollUnlessPushed(10_000),
  });
}

/** Freezes the comparison on the server with the machine facts it shows: POST /shares {view, facts} →
 * {slug, url}. */
export function useCreateShare() {
  return useMutation({
    mutationFn: ({ view, facts }: { view: Record<string, unknown>; facts: ShareFact[] }) => apiPost<ShareCreated>('/shares', { view, facts }),
  });
}

/** A frozen comparison: identical forever, so it is never refetched. */
export const shareQuery = (slug: string) =>
  queryOptions({
    queryKey: ['shares', slug],
    queryFn: ({ signal }) => apiGet<Share>(`/shares/${encodeURIComponent(slug)}`, signal),
    staleTime: Infinity,
  });

export function useShare(slug: string, enabled: boolean) {
  return useQuery({ ...shareQuery(slug), enabled, refetchOnWindowFocus: false });
}
