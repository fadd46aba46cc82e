import { Suspense, useState, type MouseEvent } from 'react';
import { Link, Navigate, NavLink, Outlet, useLocation, useNavigate, useRouteError } from 'react-router';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { AlertBadge } from '@/features/alerts';
import { useSession, useSignOut } from '@/features/auth/api/session';
import { isChunkLoadError } from '@/lib/api-client';
import { SIGN_IN_PATH, signedOutRedirect, signInPath } from '@/lib/sign-in-path';
import { paths } from './paths';

/** "Sign out" when signed in; "Sign in" when not (reads may be public, or this is an open page). */
function SessionControl() {
  const session = useSession();
  const signOut = useSignOut();
  const navigate = useNavigate();
  const { pathname, search } = useLocation();
  if (!session.data || pathname === SIGN_IN_PATH) return null;
  if (session.data.authenticated) {
    return (
      <span className="session-control">
        <span className="session-scope" data-testid="session-scope">
          Signed in: {session.data.scope ?? 'unknown scope'}
        </span>
        <button
          type="button"
          className="nav-link link-button"
          disabled={signOut.isPending}
          onClick={() => signOut.mutate(undefined, { onSuccess: () => void navigate(SIGN_IN_PATH, { replace: true }) })}
        >
          Sign out
        </button>
        {signOut.isError && (
          <span className="session-error" role="alert">
            Could not sign out: {signOut.error.message}
          </span>
        )}
      </span>
    );
  }
  return (
    <Link className="nav-link" to={signInPath(pathname + search)}>
      Sign in
    </Link>
  );
}

function Header() {
  const cls = ({ isActive }: { isActive: boolean }) => (isActive ? 'nav-link active' : 'nav-link');
  const { pathname } = useLocation();
  // The machines page is also the home page.
  const atHome = pathname === '/';
  const session = useSession().data;
  const isAdmin = session?.scope === 'admin';
  // The open alerts' count is a read: asked for once the session says reads are allowed.
  const canRead = Boolean(session && (session.authenticated || session.public_read)) && pathname !== SIGN_IN_PATH;
  // On a narrow screen the links fold behind a menu button; the menu is open on the page it was opened
  // on, so following a link closes it.
  const [openOn, setOpenOn] = useState<string | null>(null);
  const open = openOn === pathname;
  return (
    <header className="header">
      <nav className={open ? 'nav nav-open' : 'nav'} aria-label="Main">
        <NavLink to={paths.home} className="brand" end>
          ctxbench
        </NavLink>
        <button
          type="button"
          className="nav-toggle button"
          aria-expanded={open}
          aria-controls="nav-links"
          onClick={() => setOpenOn(open ? null : pathname)}
        >
          <span aria-hidden="true">☰</span> Menu
        </button>
        {/* Following a link closes the menu, even one to the page already shown. */}
        <div className="nav-links" id="nav-links" onClick={(e) => (e.target as Element).closest('a') && setOpenOn(null)}>
          <NavLink to={paths.machines} className={({ isActive }) => cls({ isActive: isActive || atHome })} end={false}>
            Machines
          </NavLink>
          <NavLink to={paths.kernels} className={cls}>
            Kernels
          </NavLink>
          <NavLink to={paths.compare} className={cls}>
            Compare
          </NavLink>
          <NavLink to={paths.history} className={cls}>
            History
          </NavLink>
          <NavLink to={paths.fleet} className={cls}>
            Fleet
          </NavLink>
          <NavLink to={paths.runs} className={cls} end>
            Runs
          </NavLink>
          <NavLink to={paths.newRun} className={cls}>
            New run
          </NavLink>
          <NavLink to={paths.schedules} className={cls}>
            Schedules
          </NavLink>
          <NavLink to={paths.hosts} className={cls}>
            Add hosts
          </NavLink>
          <AlertBadge enabled={canRead} className={pathname === paths.alerts ? 'nav-link active' : 'nav-link'} />
          <a className="nav-link nav-right" href="/docs">
            API docs
          </a>
          {isAdmin && (
            <NavLink to={paths.tokens} className={cls}>
              API tokens
            </NavLink>
          )}
          <SessionControl />
        </div>
      </nav>
    </header>
  );
}

/**
 * Signed out on a page that needs a credential (and reads are not public): straight to the sign-in
 * page, before the page's own requests come back 401 (the fetch layer redirects those too).
 */
function useSignInRedirect(): string | null {
  const session = useSession();
  const { pathname, search, hash } = useLocation();
  return signedOutRedirect(session.data, pathname, search, hash);
}

/** The first stop of Tab: past the navigation's links to the page itself. */
function SkipLink() {
  // Focus moves without a `#main` in the address (the address is the state of a shareable view).
  const skip = (e: MouseEvent<HTMLAnchorElement>) => {
    const main = document.getElementById('main');
    if (!main) return;
    e.preventDefault();
    main.focus();
    main.scrollIntoView({ block: 'start' });
  };
  return (
    <a className="skip-link" href="#main" onClick={skip}>
      Skip to content
    </a>
  );
}

export function Layout() {
  const redirect = useSignInRedirect();
  if (redirect) return <Navigate to={redirect} replace />;
  return (
    <>
      <SkipLink />
      <Header />
      <main className="main" id="main" tabIndex={-1}>
        <Suspense fallback={<Loading what="the page" />}>
          <Outlet />
        </Suspense>
      </main>
    </>
  );
}

/** Anything a page throws while rendering ends here, as a message under the header. */
export function RouteError() {
  const error = useRouteError();
  return (
    <>
      <SkipLink />
      <Header />
      <main className="main" id="main" tabIndex={-1}>
        {/* A page's code that could not be fetched is the server being away, not a bug in the page. */}
        <h1>{isChunkLoadError(error) ? 'The server did not answer' : 'Something went wrong'}</h1>
        <ErrorMessage error={error} />
        {isChunkLoadError(error) && (
          <button type="button" className="button" onClick={() => window.location.reload()}>
            Reload
          </button>
        )}
      </main>
    </>
  );
}
