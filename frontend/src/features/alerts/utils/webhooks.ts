// What a webhook may receive (server webhooks/schemas.py EVENTS; "ping" is only sent by Send a test),
// in words, and the choice of them as the list PATCH /webhooks/{id} and POST /webhooks take. Pure.

export const WEBHOOK_EVENTS = [
  { event: 'alert.opened', label: 'Alerts opened', hint: 'a significant step in one series' },
  { event: 'fleet_change.opened', label: 'Fleet changes opened', hint: 'steps on several machines in the same window' },
] as const;

export type WebhookEvent = (typeof WEBHOOK_EVENTS)[number]['event'];

/** What the server subscribes a webhook to when the form leaves `events` out. */
export const DEFAULT_WEBHOOK_EVENTS: WebhookEvent[] = ['alert.opened'];

/** The events with one switched on or off, in the server's order, each once. */
export function toggleEvent(events: readonly string[], event: WebhookEvent, on: boolean): WebhookEvent[] {
  const chosen = new Set(events.filter((e) => e !== event));
  if (on) chosen.add(event);
  return WEBHOOK_EVENTS.map((e) => e.event).filter((e) => chosen.has(e));
}

/** The events in words: "Alerts opened, Fleet changes opened"; an event this explorer does not know
 * (a newer server) by its name. */
export function describeEvents(events: readonly string[]): string {
  if (events.length === 0) return 'nothing';
  return events.map((e) => WEBHOOK_EVENTS.find((w) => w.event === e)?.label ?? e).join(', ');
}
