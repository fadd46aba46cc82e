import { useState, type FormEvent } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import { useSignIn } from '../api/session';

/**
 * The token goes to POST /api/v1/session once and is forgotten: the server answers with an HttpOnly
 * cookie, which the browser sends from then on. A 401 shows the server's one line (unknown, revoked…).
 */
export function SignInForm({ onSignedIn }: { onSignedIn: () => void }) {
  const signIn = useSignIn();
  const [token, setToken] = useState('');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const t = token.trim();
    if (!t) return;
    signIn.mutate(t, {
      onSuccess: () => {
        setToken('');
        onSignedIn();
      },
    });
  };
  return (
    <form className="form signin-form" onSubmit={submit} aria-label="Sign in">
      <div className="field">
        <label htmlFor="signin-token">Token</label>
        <input
          id="signin-token"
          name="token"
          type="password"
          autoComplete="current-password"
          spellCheck={false}
          value={token}
          onChange={(e) => setToken(e.target.value)}
          aria-invalid={signIn.isError}
          aria-describedby="signin-hint"
          required
          autoFocus
        />
        <span id="signin-hint" className="hint">
          The admin token (in <code>&lt;data dir&gt;/admin-token</code>, or <code>CTXBENCH_ADMIN_TOKEN</code>) or an API token.
        </span>
      </div>
      <div className="actions">
        <button type="submit" className="button button-primary" disabled={signIn.isPending || token.trim() === ''}>
          {signIn.isPending ? 'Signing in…' : 'Sign in'}
        </button>
      </div>
      {signIn.isError && <ErrorMessage title="Could not sign in:" error={signIn.error} />}
    </form>
  );
}
