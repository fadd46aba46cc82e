import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPost } from '@/lib/api-client';
import { refetchAfterWrite } from '@/lib/mutations';
import type { Scope } from './session';

/** An API token as GET /api/v1/tokens lists it (admin only); its secret is never listed. */
export interface ApiToken {
  id: string;
  name: string;
  scope: Scope;
  created_at: string;
  last_used_at: string | null;
  expires_at: string | null;
  revoked_at: string | null;
}

/** POST /api/v1/tokens's answer: the only time the secret is shown. */
export interface ApiTokenCreated extends ApiToken {
  token: string;
}

export interface TokenCreate {
  name: string;
  scope: Scope;
  /** Seconds until it stops working (60 s … 10 years); left out, it lasts until revoked. */
  ttl_s?: number;
}

export const tokensQuery = () =>
  queryOptions({
    queryKey: ['tokens'],
    queryFn: ({ signal }) => apiGet<ApiToken[]>('/tokens', signal),
  });

export function useTokens() {
  return useQuery(tokensQuery());
}

export function useCreateToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: TokenCreate) => apiPost<ApiTokenCreated>('/tokens', body),
    onSuccess: () => refetchAfterWrite(client, ['tokens']),
  });
}

export function useRevokeToken() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiDelete<ApiToken>(`/tokens/${encodeURIComponent(id)}`),
    onSuccess: () => refetchAfterWrite(client, ['tokens']),
  });
}
