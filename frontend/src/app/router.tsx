import { lazy } from 'react';
import { createBrowserRouter, RouterProvider } from 'react-router';
import { Layout, RouteError } from './layout';

// Each page is its own chunk: the first page loads only what it shows.
const MachinesPage = lazy(() => import('./routes/machines'));
const NewRunPage = lazy(() => import('./routes/new-run'));
const NotFoundPage = lazy(() => import('./routes/not-found'));
const RunPage = lazy(() => import('./routes/run'));
const RunsPage = lazy(() => import('./routes/runs'));
const BatchPage = lazy(() => import('./routes/batch'));
const MachinePage = lazy(() => import('./routes/machine'));
const KernelsPage = lazy(() => import('./routes/kernels'));
// The compare and share pages carry the charts (Recharts): their own chunks, loaded on first visit.
const ComparePage = lazy(() => import('./routes/compare'));
const SharePage = lazy(() => import('./routes/share'));

const router = createBrowserRouter([
  {
    element: <Layout />,
    errorElement: <RouteError />,
    children: [
      { index: true, element: <MachinesPage /> },
      { path: 'machines', element: <MachinesPage /> },
      { path: 'machines/:id', element: <MachinePage /> },
      { path: 'kernels', element: <KernelsPage /> },
      { path: 'compare', element: <ComparePage /> },
      { path: 's/:slug', element: <SharePage /> },
      { path: 'runs', element: <RunsPage /> },
      { path: 'runs/new', element: <NewRunPage /> },
      { path: 'runs/:id', element: <RunPage /> },
      { path: 'batches/:batchId', element: <BatchPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);

export function AppRouter() {
  return <RouterProvider router={router} />;
}
