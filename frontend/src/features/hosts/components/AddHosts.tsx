import { useState } from 'react';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { JOIN_TOKEN, type Machine } from '@/lib/api-types';
import { DataTable } from '@/components/TableHead';
import {
  type JoinTokenCreated,
  useCreateJoinToken,
  useDeleteJoinToken,
  useJoinTokens,
  useMachineAction,
} from '../api/hosts';

function InstallCommand({ created }: { created: JoinTokenCreated }) {
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    await navigator.clipboard.writeText(created.install_command);
    setCopied(true);
  };
  return (
    <section className="card" data-testid="install-command">
      <p>
        Run this on each new host (the token is shown only now; it allows {created.uses_left}{' '}
        {created.uses_left === 1 ? 'host' : 'hosts'} until {new Date(created.expires_at).toLocaleString()}):
      </p>
      <pre className="code-block">
        <code>{created.install_command}</code>
      </pre>
      <button type="button" className="button" onClick={() => void copy()}>
        {copied ? 'Copied' : 'Copy'}
      </button>{' '}
      <span className="muted small">
        server CA <code>{created.ca_fingerprint || 'not pinned'}</code>
      </span>
    </section>
  );
}

function CreateJoinToken() {
  const [uses, setUses] = useState(1);
  const [hours, setHours] = useState(1);
  const create = useCreateJoinToken();
  return (
    <section>
      <h2>New join token</h2>
      <form
        className="form-row"
        onSubmit={(e) => {
          e.preventDefault();
          create.mutate({ uses, ttl_s: Math.round(hours * 3600) });
        }}
      >
        <label>
          hosts{' '}
          <input type="number" min={JOIN_TOKEN.uses.minimum} max={JOIN_TOKEN.uses.maximum} value={uses} onChange={(e) => setUses(Number(e.target.value))} />
        </label>{' '}
        <label>
          valid for (hours){' '}
          <input
            type="number"
            min={0.1}
            max={JOIN_TOKEN.ttl_s.maximum / 3600}
            step={0.1}
            value={hours}
            onChange={(e) => setHours(Number(e.target.value))}
          />
        </label>{' '}
        <button type="submit" className="button button-primary" disabled={create.isPending}>
          Create join token
        </button>
      </form>
      {create.error && <ErrorMessage error={create.error} />}
      {create.data && <InstallCommand created={create.data} />}
    </section>
  );
}

function JoinTokens() {
  const tokens = useJoinTokens();
  const del = useDeleteJoinToken();
  if (tokens.isPending) return <Loading what="join tokens" />;
  if (tokens.error) return <ErrorMessage error={tokens.error} />;
  if (tokens.data.length === 0) return <EmptyState title="No join tokens yet" />;
  return (
    <DataTable columns={['created', 'by', 'expires', 'used', 'left', 'state', '']} testId="join-tokens">
      {tokens.data.map((t) => (
        <tr key={t.id}>
          <td>{new Date(t.created_at).toLocaleString()}</td>
          <td>{t.created_by || '—'}</td>
          <td>{new Date(t.expires_at).toLocaleString()}</td>
          <td>{t.uses}</td>
          <td>{t.uses_left}</td>
          <td>{t.revoked ? 'withdrawn' : t.expired ? 'expired' : t.uses_left === 0 ? 'used' : 'usable'}</td>
          <td>
            {!t.revoked && !t.expired && t.uses_left > 0 && (
              <button type="button" className="button" onClick={() => del.mutate(t.id)}>
                Withdraw
              </button>
            )}
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

/** The machines with their enrollment status (the list comes from the page: features do not import each other). */
export function HostsTable({ machines }: { machines: Machine[] }) {
  const act = useMachineAction();
  if (machines.length === 0) return <EmptyState title="No hosts have enrolled yet" />;
  return (
    <>
      {act.error && <ErrorMessage error={act.error} />}
      <DataTable columns={['host', 'connection', 'status', 'agent', '']} testId="hosts">
        {machines.map((m) => {
          const status = m.status ?? 'active';
          return (
            <tr key={m.id} data-testid="host-row">
              <td>
                {m.name} <span className="muted small">{m.hostname !== m.name ? m.hostname : ''}</span>
              </td>
              <td>
                <span className={m.online ? 'badge badge-online' : 'badge badge-offline'}>
                  {m.online ? 'online' : 'offline'}
                </span>
              </td>
              <td>
                <span className={status === 'revoked' ? 'badge badge-failed' : 'badge'}>{status}</span>
              </td>
              <td>{m.agent_version || '—'}</td>
              <td>
                {status === 'pending' && (
                  <button type="button" className="button" onClick={() => act.mutate({ id: m.id, action: 'approve' })}>
                    Approve
                  </button>
                )}{' '}
                {status !== 'revoked' && (
                  <button
                    type="button"
                    className="button"
                    onClick={() => {
                      if (window.confirm(`Revoke ${m.name}? Its agent is disconnected and cannot come back.`)) {
                        act.mutate({ id: m.id, action: 'revoke' });
                      }
                    }}
                  >
                    Revoke
                  </button>
                )}
              </td>
            </tr>
          );
        })}
      </DataTable>
    </>
  );
}

export function AddHosts() {
  return (
    <>
      <CreateJoinToken />
      <h2>Join tokens</h2>
      <JoinTokens />
    </>
  );
}
