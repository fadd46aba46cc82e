import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPost } from '@/lib/api-client';

export type Scope = 'admin' | 'write' | 'read';

/** GET /api/v1/session: always answers (never 401); a stale cookie reads as not authenticated. */
export interface SessionInfo {
  authenticated: boolean;
  scope: Scope | null;
  public_read: boolean;
  expires_at: string | null;
}

export interface SessionCreated {
  scope: Scope;
  expires_at: string;
}

/** Whether this browser may change things (scope write or admin): edit and delete controls show then. */
export function useCanWrite(): boolean {
  const scope = useSession().data?.scope;
  return scope === 'write' || scope === 'admin';
}

export const sessionQuery = () =>
  queryOptions({
    queryKey: ['session'],
    queryFn: ({ signal }) => apiGet<SessionInfo>('/session', signal),
    staleTime: 60_000,
  });

export function useSession() {
  return useQuery(sessionQuery());
}

/**
 * POST /api/v1/session {token}: the server sets the HttpOnly cookie. A wrong token's 401 is the form's
 * to show, not a reason to redirect. Everything cached belongs to the previous visitor: dropped.
 */
export function useSignIn() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (token: string) => apiPost<SessionCreated>('/session', { token }, { authRedirect: false }),
    onSuccess: () => client.clear(),
  });
}

/** DELETE /api/v1/session ends the session on the server too; the cache goes with it. */
export function useSignOut() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: () => apiDelete<void>('/session', { authRedirect: false }),
    onSuccess: () => client.clear(),
  });
}
