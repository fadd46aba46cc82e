import { useState, type FormEvent } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import { Field, SubmitActions } from '@/components/Form';
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
      <Field id="signin-token" label="Token">
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
      </Field>
      <SubmitActions label="Sign in" busy="Signing in…" pending={signIn.isPending} disabled={token.trim() === ''} />
      {signIn.isError && <ErrorMessage title="Could not sign in:" error={signIn.error} />}
    </form>
  );
}
