// The delete hooks' one shape (a machine, a run, a batch): DELETE the record, forget its cached query,
// refetch the lists it was in. Tested in mutations.test.ts.
import { useMutation, useQueryClient, type QueryClient, type QueryKey } from '@tanstack/react-query';
import { apiDelete } from './api-client';

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
