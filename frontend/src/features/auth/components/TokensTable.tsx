import { useState } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import { DataTable } from '@/components/TableHead';
import { unseen } from '@/components/table-columns';
import { DateTime, RelativeTime } from '@/components/Time';
import { useRevokeToken, type ApiToken } from '../api/tokens';

/** Revoke asks once more in place: the token stops working at once and its sessions end. */
function RevokeButton({ token }: { token: ApiToken }) {
  const revoke = useRevokeToken();
  const [asking, setAsking] = useState(false);
  if (token.revoked_at) return null;
  if (!asking) {
    return (
      <button type="button" className="button button-small" onClick={() => setAsking(true)}>
        Revoke
      </button>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={`Revoke ${token.name}?`}>
      <span>Revoke {token.name}? Scripts using it get 401 at once.</span>{' '}
      <button type="button" className="button button-small button-danger" disabled={revoke.isPending} onClick={() => revoke.mutate(token.id)}>
        {revoke.isPending ? 'Revoking…' : 'Yes, revoke'}
      </button>{' '}
      <button type="button" className="button button-small" onClick={() => setAsking(false)} disabled={revoke.isPending}>
        Keep it
      </button>
      {revoke.isError && <ErrorMessage title="Could not revoke:" error={revoke.error} />}
    </span>
  );
}

export function TokensTable({ tokens }: { tokens: ApiToken[] }) {
  if (tokens.length === 0) return <p className="muted">No API tokens yet: scripts and CI use the admin token until you create one.</p>;
  return (
    <DataTable columns={['Name', 'Scope', 'Created', 'Last used', 'Expires', 'Revoked', unseen('Actions')]}>
      {tokens.map((t) => (
        <tr key={t.id} data-testid="token-row" data-token-id={t.id}>
          <td className="strong">{t.name}</td>
          <td>{t.scope}</td>
          <td>
            <DateTime value={t.created_at} />
          </td>
          <td>
            <RelativeTime value={t.last_used_at} />
          </td>
          <td>{t.expires_at ? <DateTime value={t.expires_at} /> : <span className="muted">never</span>}</td>
          <td data-testid="token-revoked">{t.revoked_at ? <DateTime value={t.revoked_at} /> : <span className="muted">no</span>}</td>
          <td>
            <RevokeButton token={t} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
