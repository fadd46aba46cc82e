import { useState, type FormEvent } from 'react';
import { ErrorMessage } from '@/components/Feedback';
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
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(created.token);
    } catch {
      const input = document.getElementById('new-token-secret') as HTMLInputElement | null;
      input?.select();
      document.execCommand('copy');
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <div className="message message-frozen new-token" role="status" data-testid="new-token">
      <p>
        Token <strong>{created.name}</strong> ({created.scope}) created. Copy it now: it will not be shown again.
      </p>
      <span className="share-link">
        <input
          id="new-token-secret"
          readOnly
          value={created.token}
          data-testid="new-token-secret"
          aria-label="New token"
          spellCheck={false}
          onFocus={(e) => e.target.select()}
          size={52}
        />
        <button type="button" className="button" onClick={() => void copy()}>
          {copied ? 'Copied' : 'Copy'}
        </button>
      </span>
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
          <div className="field">
            <label htmlFor="token-name">Name</label>
            <input id="token-name" value={name} onChange={(e) => setName(e.target.value)} maxLength={MAX_TOKEN_NAME} placeholder="ci-nightly" required />
          </div>
          <div className="field">
            <label htmlFor="token-scope">Scope</label>
            <select id="token-scope" value={scope} onChange={(e) => setScope(e.target.value as Scope)}>
              {SCOPES.map((s) => (
                <option key={s.value} value={s.value}>
                  {s.label}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="token-lifetime">Expires</label>
            <select id="token-lifetime" value={lifetime} onChange={(e) => setLifetime(e.target.value)}>
              {LIFETIMES.map((l) => (
                <option key={l.value} value={l.value}>
                  {l.label}
                </option>
              ))}
            </select>
          </div>
        </div>
        <div className="actions">
          <button type="submit" className="button button-primary" disabled={create.isPending || name.trim() === ''}>
            {create.isPending ? 'Creating…' : 'Create token'}
          </button>
        </div>
      </form>
      {create.isError && <ErrorMessage title="Could not create the token:" error={create.error} />}
      {create.data && <NewTokenSecret created={create.data} />}
    </>
  );
}
