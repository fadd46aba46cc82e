import { lazy } from 'react';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { canCompare, compareQuery, shareQuery } from '@/features/compare/api/compare';
import { kernelsQuery } from '@/features/kernels/api/kernels';
import { machinesQuery } from '@/features/machines/api/machines';
import { setUnauthorizedHandler } from '@/lib/api-client';
import { decodeCompareView, isWellFormedSlug } from '@/lib/compare-query';
import { unauthorizedRedirect } from '@/lib/sign-in-path';
import { Layout, RouteError } from './layout';
import { routes } from './paths';
import { queryClient } from './query-client';

// Each page is its own chunk: the first page loads only what it shows.
const MachinesPage = lazy(() => import('./routes/machines'));
const NewRunPage = lazy(() => import('./routes/new-run'));
const NotFoundPage = lazy(() => import('./routes/not-found'));
const RunPage = lazy(() => import('./routes/run'));
const RunsPage = lazy(() => import('./routes/runs'));
const BatchPage = lazy(() => import('./routes/batch'));
const MachinePage = lazy(() => import('./routes/machine'));
const KernelsPage = lazy(() => import('./routes/kernels'));
const KernelPage = lazy(() => import('./routes/kernel'));
const HostsPage = lazy(() => import('./routes/hosts'));
const HistoryPage = lazy(() => import('./routes/history'));
// The compare and share pages carry the charts (Recharts): their own chunks, loaded on first visit.
const ComparePage = lazy(() => import('./routes/compare'));
const SharePage = lazy(() => import('./routes/share'));
const SignInPage = lazy(() => import('./routes/signin'));
const TokensPage = lazy(() => import('./routes/tokens'));
const SchedulesPage = lazy(() => import('./routes/schedules'));
const AlertsPage = lazy(() => import('./routes/alerts'));
const FleetPage = lazy(() => import('./routes/fleet'));

/**
 * The compare page's data is asked for as soon as its address is known, while its code (and the
 * charts) still load: the answer is there when the page first draws. Nothing waits on it here.
 */
function prefetchCompare({ request }: { request: Request }) {
  const view = decodeCompareView(new URL(request.url).search);
  if (canCompare(view)) void queryClient.prefetchQuery(compareQuery(view));
  void queryClient.prefetchQuery(machinesQuery());
  void queryClient.prefetchQuery(kernelsQuery());
  return null;
}

function prefetchShare({ params }: { params: { slug?: string } }) {
  if (params.slug && isWellFormedSlug(params.slug)) void queryClient.prefetchQuery(shareQuery(params.slug));
  return null;
}

const router = createBrowserRouter([
  {
    element: <Layout />,
    errorElement: <RouteError />,
    children: [
      { index: true, element: <MachinesPage /> },
      { path: routes.machines, element: <MachinesPage /> },
      { path: routes.machine, element: <MachinePage /> },
      { path: routes.kernels, element: <KernelsPage /> },
      { path: routes.kernel, element: <KernelPage /> },
      { path: routes.hosts, element: <HostsPage /> },
      { path: routes.compare, element: <ComparePage />, loader: prefetchCompare },
      { path: routes.history, element: <HistoryPage /> },
      { path: routes.share, element: <SharePage />, loader: prefetchShare },
      { path: routes.signIn, element: <SignInPage /> },
      { path: routes.tokens, element: <TokensPage /> },
      { path: routes.runs, element: <RunsPage /> },
      { path: routes.newRun, element: <NewRunPage /> },
      { path: routes.run, element: <RunPage /> },
      { path: routes.batch, element: <BatchPage /> },
      { path: routes.schedules, element: <SchedulesPage /> },
      { path: routes.alerts, element: <AlertsPage /> },
      { path: routes.fleet, element: <FleetPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);

// Any request answered 401 (signed out, session expired, token revoked) sends the browser to sign in,
// coming back here afterwards; the open pages (sign-in, shares) stay where they are.
setUnauthorizedHandler(() => {
  const { pathname, search, hash } = window.location;
  const to = unauthorizedRedirect(pathname, search, hash);
  if (to === null) return;
  void queryClient.invalidateQueries({ queryKey: ['session'] });
  void router.navigate(to, { replace: true });
});

export function AppRouter() {
  return <RouterProvider router={router} />;
}
