// The explorer's routes, defined once: router.tsx matches `routes`, every link builds its address with
// `paths` (the builders with a query string, comparePath, newRunPath, historyPath, put theirs after these).
// Addresses are shared as links, so a path here never changes; a new page adds one. It imports nothing,
// so any module may import it (eslint.config.js lets features, components and lib import this file of app/).

const seg = (id: string) => encodeURIComponent(id);

/** Route patterns as React Router matches them (relative to the layout route at `/`). */
export const routes = {
  machines: 'machines',
  machine: 'machines/:id',
  kernels: 'kernels',
  kernel: 'kernels/:id',
  hosts: 'hosts',
  compare: 'compare',
  history: 'history',
  share: 's/:slug',
  signIn: 'signin',
  tokens: 'tokens',
  runs: 'runs',
  newRun: 'runs/new',
  run: 'runs/:id',
  batch: 'batches/:batchId',
  schedules: 'schedules',
  alerts: 'alerts',
  fleet: 'fleet',
} as const;

/** The address of each page. */
export const paths = {
  home: '/',
  machines: '/machines',
  machine: (id: string) => `/machines/${seg(id)}`,
  kernels: '/kernels',
  kernel: (id: string) => `/kernels/${seg(id)}`,
  hosts: '/hosts',
  compare: '/compare',
  history: '/history',
  share: (slug: string) => `/s/${seg(slug)}`,
  signIn: '/signin',
  tokens: '/tokens',
  runs: '/runs',
  newRun: '/runs/new',
  run: (id: string) => `/runs/${seg(id)}`,
  batch: (batchId: string) => `/batches/${seg(batchId)}`,
  schedules: '/schedules',
  alerts: '/alerts',
  fleet: '/fleet',
} as const;

/** A page's address with a query string, when it has one. */
export function withQuery(path: string, qs: string): string {
  return qs ? `${path}?${qs}` : path;
}
