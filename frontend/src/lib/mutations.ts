// The delete hooks' one shape (a machine, a run, a batch): DELETE the record, forget its cached query,
// refetch the lists it was in. Tested in mutations.test.ts.
import { useMutation, useQueryClient, type QueryClient, type QueryKey } from '@tanstack/react-query';
import { apiDelete } from './api-client';

/**
 * After a write: the list refetches with the write in it. A list's first fetch that is still in flight
 * (no data yet) is joined, not restarted, by invalidateQueries, and would show the list from before the
 * write; it is cancelled first, so the refetch starts after the write.
 */
export async function refetchAfterWrite(client: QueryClient, queryKey: QueryKey): Promise<void> {
  await client.cancelQueries({ queryKey });
  await client.invalidateQueries({ queryKey });
}

/** After a delete: the record's own query goes (nothing refetches a 404), the lists that held it refetch. */
export function forgetDeleted(client: QueryClient, record: QueryKey, lists: readonly QueryKey[]): void {
  client.removeQueries({ queryKey: record });
  for (const queryKey of lists) void client.invalidateQueries({ queryKey });
}

/** DELETE `path`; on success, forgetDeleted(record, lists). */
export function useDeleteMutation(path: string, record: QueryKey, lists: readonly QueryKey[]) {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => apiDelete<void>(path),
    onSuccess: () => forgetDeleted(client, record, lists),
  });
}
