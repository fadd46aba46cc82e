import { Link, useLocation, useNavigate } from 'react-router';
import { useSession } from '@/features/auth/api/session';
import { SignInForm } from '@/features/auth/components/SignInForm';
import { decodeSignInParams, linkErrorMessage } from '@/lib/sign-in-path';
import { useDocumentTitle } from './title';

/** /signin?next=<path>&error=<why a one-time link failed>: open to everyone. */
export function SignInPage() {
  useDocumentTitle('Sign in');
  const { search } = useLocation();
  const navigate = useNavigate();
  const { next, linkError } = decodeSignInParams(search);
  const session = useSession();
  const signedIn = session.data?.authenticated === true;
  return (
    <div className="signin">
      <h1>Sign in</h1>
      {linkError && (
        <div className="message message-error" role="alert" data-testid="signin-link-error">
          {linkErrorMessage(linkError)}
        </div>
      )}
      {signedIn ? (
        <p className="lead" data-testid="signin-already">
          You are signed in ({session.data?.scope}). <Link to={next}>Continue</Link>, or sign in with another token below.
        </p>
      ) : (
        <p className="lead">
          This ctxbench server needs a token. <code>make run</code> prints a one-time sign-in link; after that, use the admin
          token or an API token an admin made for you.
        </p>
      )}
      {session.data?.public_read && !signedIn && (
        <p className="muted">
          Reading is open on this server: you can <Link to={next}>look around</Link> without signing in; starting runs needs a
          token.
        </p>
      )}
      <SignInForm onSignedIn={() => void navigate(next, { replace: true })} />
    </div>
  );
}

export default SignInPage;
