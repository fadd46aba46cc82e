import { createBrowserRouter, RouterProvider } from 'react-router';
import { Layout, RouteError } from './layout';
import { MachinesPage } from './routes/machines';
import { NewRunPage } from './routes/new-run';
import { NotFoundPage } from './routes/not-found';
import { RunPage } from './routes/run';
import { RunsPage } from './routes/runs';

const router = createBrowserRouter([
  {
    element: <Layout />,
    errorElement: <RouteError />,
    children: [
      { index: true, element: <MachinesPage /> },
      { path: 'machines', element: <MachinesPage /> },
      { path: 'runs', element: <RunsPage /> },
      { path: 'runs/new', element: <NewRunPage /> },
      { path: 'runs/:id', element: <RunPage /> },
      { path: '*', element: <NotFoundPage /> },
    ],
  },
]);

export function AppRouter() {
  return <RouterProvider router={router} />;
}
