import { queryOptions, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { apiDelete, apiGet, apiPatch, apiPost } from '@/lib/api-client';
import type { components } from '@/lib/api/schema';
import { refetchAfterWrite } from '@/lib/mutations';

type Schemas = components['schemas'];

export type Webhook = Schemas['WebhookOut'];
/** The answer to a create or a rotation: the only time the secret is shown. */
export type WebhookCreated = Schemas['WebhookCreated'];
export type WebhookCreate = Schemas['WebhookCreate'];
export type WebhookPatch = Schemas['WebhookPatch'];
export type Delivery = Schemas['DeliveryOut'];

const ALL = ['webhooks'] as const;

export const webhooksQuery = () =>
  queryOptions({ queryKey: ALL, queryFn: ({ signal }) => apiGet<Webhook[]>('/webhooks', signal) });

export const deliveriesQuery = (id: string) =>
  queryOptions({
    queryKey: [...ALL, id, 'deliveries'] as const,
    queryFn: ({ signal }) => apiGet<Delivery[]>(`/webhooks/${encodeURIComponent(id)}/deliveries`, signal),
  });

/** Admins only (the server answers 403 to others): the caller says whether to ask. */
export function useWebhooks(enabled: boolean) {
  return useQuery({ ...webhooksQuery(), enabled, refetchInterval: 10_000 });
}

export function useDeliveries(id: string) {
  return useQuery({ ...deliveriesQuery(id), refetchInterval: 5_000 });
}

export function useCreateWebhook() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (body: WebhookCreate) => apiPost<WebhookCreated>('/webhooks', body),
    onSuccess: () => refetchAfterWrite(client, ALL),
  });
}

/** PATCH /webhooks/{id}: the fields given change (the event choice, here). */
export function useUpdateWebhook() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: ({ id, body }: { id: string; body: WebhookPatch }) => apiPatch<Webhook>(`/webhooks/${encodeURIComponent(id)}`, body),
    onSuccess: () => refetchAfterWrite(client, ALL),
  });
}

export function useTestWebhook() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiPost<Delivery>(`/webhooks/${encodeURIComponent(id)}/test`, {}),
    onSuccess: () => refetchAfterWrite(client, ALL),
  });
}

export function useDeleteWebhook() {
  const client = useQueryClient();
  return useMutation({
    mutationFn: (id: string) => apiDelete<void>(`/webhooks/${encodeURIComponent(id)}`),
    onSuccess: () => refetchAfterWrite(client, ALL),
  });
}
