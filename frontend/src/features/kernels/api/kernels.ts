import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from '@/lib/api-client';
import type { Kernel } from '@/lib/api-types';

export const kernelsQuery = () =>
  queryOptions({
    queryKey: ['kernels'],
    queryFn: ({ signal }) => apiGet<Kernel[]>('/kernels', signal),
    staleTime: 30_000,
  });

export function useKernels() {
  return useQuery(kernelsQuery());
}
