import { QueryClient } from '@tanstack/react-query';
import { ApiError } from '@/lib/api-client';

export function makeQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        // A 4xx will not change by asking again; a network blip or 5xx may.
        retry: (failures, error) => !(error instanceof ApiError && error.status >= 400 && error.status < 500) && failures < 2,
        refetchOnWindowFocus: true,
      },
    },
  });
}

/** The app's one client: the provider hands it to React, route loaders prefetch into it. */
export const queryClient = makeQueryClient();
