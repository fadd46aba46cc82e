import { useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiFetch, apiGet, apiPost } from '@/lib/api-client';
import type { Machine } from '@/lib/api-types';
import { pollUnlessPushed } from '@/lib/push';
import { refetchAfterWrite } from '@/lib/mutations';

export interface JoinToken {
  id: string;
  created_at: string;
  created_by: string;
  expires_at: string;
  uses_left: number;
  uses: number;
  revoked: boolean;
  expired: boolean;
}

/** The answer to creating a join token: the only time the secret is shown. */
export interface JoinTokenCreated {
  id: string;
  token: string;
  expires_at: string;
  uses_left: number;
  ca_fingerprint: string;
  install_command: string;
}

export function useJoinTokens() {
  return useQuery({
    queryKey: ['join-tokens'],
    queryFn: ({ signal }) => apiGet<JoinToken[]>('/join-tokens', signal),
    refetchInterval: pollUnlessPushed(5000),
  });
}

export function useCreateJoinToken() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (body: { uses: number; ttl_s: number }) => apiPost<JoinTokenCreated>('/join-tokens', body),
    onSuccess: () => void refetchAfterWrite(qc, ['join-tokens']),
  });
}

export function useDeleteJoinToken() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiFetch<void>(`/join-tokens/${encodeURIComponent(id)}`, { method: 'DELETE' }),
    onSuccess: () => void refetchAfterWrite(qc, ['join-tokens']),
  });
}

/** Revoke or approve a machine. */
export function useMachineAction() {
  const qc = useQueryClient();
  return useMutation({
    mutationFn: ({ id, action }: { id: string; action: 'revoke' | 'approve' }) =>
      apiPost<Machine>(`/machines/${encodeURIComponent(id)}/${action}`, {}),
    onSuccess: () => void refetchAfterWrite(qc, ['machines']),
  });
}
