import { useState, type FormEvent } from 'react';
import { CopyField } from '@/components/CopyField';
import { ErrorMessage } from '@/components/Feedback';
import { Field, Select, SubmitActions } from '@/components/Form';
import { MAX_TOKEN_NAME } from '@/lib/api-types';
import type { Scope } from '../api/session';
import { useCreateToken, type ApiTokenCreated } from '../api/tokens';

const SCOPES: { value: Scope; label: string }[] = [
  { value: 'read', label: 'read: look only' },
  { value: 'write', label: 'write: also start, cancel and share runs' },
  { value: 'admin', label: 'admin: also manage tokens' },
];

const DAY = 86_400;
/** How long a new token lasts; "never" sends no ttl_s (valid until revoked). */
const LIFETIMES: { value: string; label: string; ttl?: number }[] = [
  { value: 'never', label: 'until revoked' },
  { value: '1d', label: '1 day', ttl: DAY },
  { value: '30d', label: '30 days', ttl: 30 * DAY },
  { value: '90d', label: '90 days', ttl: 90 * DAY },
  { value: '1y', label: '1 year', ttl: 365 * DAY },
];

/** The new token's secret, shown this once with a copy button: the server keeps only its hash. */
function NewTokenSecret({ created }: { created: ApiTokenCreated }) {
  return (
    <div className="message message-frozen new-token" role="status" data-testid="new-token">
      <p>
        Token <strong>{created.name}</strong> ({created.scope}) created. Copy it now: it will not be shown again.
      </p>
      <CopyField id="new-token-secret" value={created.token} testId="new-token-secret" label="New token" size={52} />
      <p className="hint">
        Use it as <code>authorization: Bearer &lt;token&gt;</code>, or sign in with it.
      </p>
    </div>
  );
}

export function CreateTokenForm() {
  const create = useCreateToken();
  const [name, setName] = useState('');
  const [scope, setScope] = useState<Scope>('write');
  const [lifetime, setLifetime] = useState('never');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    if (!name.trim()) return;
    const ttl = LIFETIMES.find((l) => l.value === lifetime)?.ttl;
    create.mutate({ name: name.trim(), scope, ...(ttl ? { ttl_s: ttl } : {}) }, { onSuccess: () => setName('') });
  };
  return (
    <>
      <form className="form" onSubmit={submit} aria-label="New API token">
        <div className="row">
          <Field id="token-name" label="Name">
            <input id="token-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={MAX_TOKEN_NAME} placeholder="ci-nightly" required />
          </Field>
          <Field id="token-scope" label="Scope">
            <Select id="token-scope" value={scope} onChange={(e) => setScope(e.target.value as Scope)} options={SCOPES} />
          </Field>
          <Field id="token-lifetime" label="Expires">
            <Select id="token-lifetime" value={lifetime} onChange={(e) => setLifetime(e.target.value)} options={LIFETIMES} />
          </Field>
        </div>
        <SubmitActions label="Create token" busy="Creating…" pending={create.isPending} disabled={name.trim() === ''} />
      </form>
      {create.isError && <ErrorMessage title="Could not create the token:" error={create.error} />}
      {create.data && <NewTokenSecret created={create.data} />}
    </>
  );
}
