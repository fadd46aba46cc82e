import { Suspense } from 'react';
import { NavLink, Outlet, useLocation, useRouteError } from 'react-router';
import { ErrorMessage, Loading } from '@/components/Feedback';

function Header() {
  const cls = ({ isActive }: { isActive: boolean }) => (isActive ? 'nav-link active' : 'nav-link');
  // The machines page is also the home page.
  const atHome = useLocation().pathname === '/';
  return (
    <header className="header">
      <nav className="nav" aria-label="Main">
        <NavLink to="/" className="brand" end>
          ctxbench
        </NavLink>
        <NavLink to="/machines" className={({ isActive }) => cls({ isActive: isActive || atHome })} end={false}>
          Machines
        </NavLink>
        <NavLink to="/kernels" className={cls}>
          Kernels
        </NavLink>
        <NavLink to="/compare" className={cls}>
          Compare
        </NavLink>
        <NavLink to="/runs" className={cls} end>
          Runs
        </NavLink>
        <NavLink to="/runs/new" className={cls}>
          New run
        </NavLink>
        <NavLink to="/hosts" className={cls}>
          Add hosts
        </NavLink>
        <a className="nav-link nav-right" href="/docs">
          API docs
        </a>
      </nav>
    </header>
  );
}

export function Layout() {
  return (
    <>
      <Header />
      <main className="main">
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
      <Header />
      <main className="main">
        <h1>Something went wrong</h1>
        <ErrorMessage error={error} />
      </main>
    </>
  );
}
