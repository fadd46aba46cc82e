import { useState, type FormEvent } from 'react';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { DataTable } from '@/components/TableHead';
import { unseen } from '@/components/table-columns';
import { DateTime } from '@/components/Time';
import { useCreateWebhook, useDeleteWebhook, useDeliveries, useTestWebhook, useUpdateWebhook, useWebhooks, type Webhook } from '../api/webhooks';
import { DEFAULT_WEBHOOK_EVENTS, WEBHOOK_EVENTS, toggleEvent, type WebhookEvent } from '../utils/webhooks';

/** A checkbox per event the webhook may receive; the last one chosen cannot be unchecked (a webhook
 * receives at least one). */
function EventChecks(props: { idPrefix: string; events: readonly string[]; disabled?: boolean; onChange: (events: WebhookEvent[]) => void }) {
  const { idPrefix, events, disabled = false, onChange } = props;
  return (
    <span className="event-checks" role="group" aria-label="Events">
      {WEBHOOK_EVENTS.map(({ event, label, hint }) => {
        const on = events.includes(event);
        return (
          <label key={event} className="checkbox" title={`${event}: ${hint}`}>
            <input
              type="checkbox"
              id={`${idPrefix}-${event}`}
              checked={on}
              disabled={disabled || (on && events.length === 1)}
              onChange={(e) => onChange(toggleEvent(events, event, e.target.checked))}
            />{' '}
            {label}
          </label>
        );
      })}
    </span>
  );
}

/** The events a stored webhook receives, changed in place (PATCH /webhooks/{id}): the boxes show the
 * choice at once, and the stored list once the webhooks are read again (or again the old one on an error). */
function RowEvents({ hook }: { hook: Webhook }) {
  const update = useUpdateWebhook();
  const [sending, setSending] = useState<WebhookEvent[] | null>(null);
  const onChange = (events: WebhookEvent[]) => {
    setSending(events);
    update.mutate({ id: hook.id, body: { events } }, { onSettled: () => setSending(null) });
  };
  return (
    <>
      <EventChecks idPrefix={`hook-${hook.id}`} events={sending ?? hook.events} disabled={update.isPending} onChange={onChange} />
      {update.isError && <ErrorMessage title="Could not change the events:" error={update.error} />}
    </>
  );
}

function Deliveries({ id }: { id: string }) {
  const got = useDeliveries(id);
  if (got.isPending) return <Loading what="the deliveries" />;
  if (got.isError) return <ErrorMessage title="Could not load the deliveries:" error={got.error} />;
  if (got.data.length === 0) return <p className="muted">Nothing sent yet.</p>;
  return (
    <DataTable columns={['Event', 'Status', 'Attempts', 'Last answer', 'Queued']} testId="deliveries-table">
      {got.data.map((d) => (
        <tr key={d.id} data-testid="delivery-row">
          <td title={d.summary}>{d.event}</td>
          <td>{d.status}</td>
          <td>{d.attempts}</td>
          <td>{d.last_status_code ?? d.last_error ?? '—'}</td>
          <td>
            <DateTime value={d.created_at} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

function Row({ hook }: { hook: Webhook }) {
  const [open, setOpen] = useState(false);
  const test = useTestWebhook();
  const remove = useDeleteWebhook();
  return (
    <>
      <tr data-testid="webhook-row">
        <td className="strong">{hook.name}</td>
        <td>{hook.url}</td>
        <td>{hook.format}</td>
        <td data-testid="webhook-events">
          <RowEvents hook={hook} />
        </td>
        <td>{hook.enabled ? `${hook.pending} pending` : 'disabled'}</td>
        <td>{hook.last_delivery ? `${hook.last_delivery.status} (${hook.last_delivery.event})` : '—'}</td>
        <td>
          <button type="button" className="button button-small" onClick={() => setOpen(!open)}>
            {open ? 'Hide log' : 'Delivery log'}
          </button>{' '}
          <button type="button" className="button button-small" disabled={test.isPending} onClick={() => test.mutate(hook.id)}>
            Send a test
          </button>{' '}
          <button type="button" className="button button-small" disabled={remove.isPending} onClick={() => remove.mutate(hook.id)}>
            Delete
          </button>
          {(test.isError || remove.isError) && <ErrorMessage error={test.error ?? remove.error} />}
        </td>
      </tr>
      {open && (
        <tr>
          <td colSpan={7}>
            <Deliveries id={hook.id} />
          </td>
        </tr>
      )}
    </>
  );
}

function CreateForm() {
  const create = useCreateWebhook();
  const [name, setName] = useState('');
  const [url, setUrl] = useState('');
  const [slack, setSlack] = useState(false);
  const [events, setEvents] = useState<WebhookEvent[]>(DEFAULT_WEBHOOK_EVENTS);
  const submit = (e: FormEvent) => {
    e.preventDefault();
    create.mutate({ name, url, format: slack ? 'slack' : 'json', events, enabled: true });
  };
  return (
    <form onSubmit={submit} className="inline-form" aria-label="New webhook">
      <input aria-label="Webhook name" placeholder="name" value={name} onChange={(e) => setName(e.target.value)} required maxLength={200} />
      <input aria-label="Webhook URL" placeholder="https://…" type="url" value={url} onChange={(e) => setUrl(e.target.value)} required maxLength={2048} />
      <label>
        <input type="checkbox" checked={slack} onChange={(e) => setSlack(e.target.checked)} /> Slack format
      </label>
      <EventChecks idPrefix="new-webhook" events={events} onChange={setEvents} />
      <button type="submit" className="button" disabled={create.isPending}>
        Add webhook
      </button>
      {create.isError && <ErrorMessage title="Could not add the webhook:" error={create.error} />}
      {create.data && (
        <p data-testid="webhook-secret">
          Signing secret of {create.data.name} (shown once, keep it now): <code>{create.data.secret}</code>
        </p>
      )}
    </form>
  );
}

/** Admins only: where alerts are POSTed, and what happened to each delivery. */
export function WebhooksSection() {
  const hooks = useWebhooks(true);
  return (
    <section>
      <h2>Webhooks</h2>
      <p className="muted">
        Each opened alert (or fleet change, for a webhook that chose them) is POSTed as JSON, signed with HMAC-SHA256 of the timestamp and body (<code>X-Ctxbench-Signature</code>), retried with
        backoff; the Slack format sends <code>{'{"text": …}'}</code>.
      </p>
      {hooks.isPending && <Loading what="the webhooks" />}
      {hooks.isError && <ErrorMessage title="Could not load the webhooks:" error={hooks.error} />}
      {hooks.data && hooks.data.length > 0 && (
        <DataTable columns={['Name', 'URL', 'Format', 'Events', 'Queue', 'Last delivery', unseen('Actions')]} testId="webhooks-table">
          {hooks.data.map((h) => (
            <Row key={h.id} hook={h} />
          ))}
        </DataTable>
      )}
      <CreateForm />
    </section>
  );
}
