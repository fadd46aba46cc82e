import { Link, useSearchParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { useKernels } from '@/features/kernels/api/kernels';
import { decodeKernelsQuery, encodeKernelsQuery, paramRange, searchKernels } from '@/features/kernels/utils/catalog';
import { useMachines } from '@/features/machines/api/machines';
import type { Kernel } from '@/lib/api-types';
import { comparePath } from '@/lib/compare-query';
import { formatMeasure, formatParams } from '@/lib/format';
import { newRunPath } from '@/lib/query-state';
import { useDocumentTitle } from './title';

function show(v: unknown): string {
  if (v === null || v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

function KernelCard({ kernel, machineIds }: { kernel: Kernel; machineIds: string[] }) {
  const on = kernel.machines.filter((m) => machineIds.includes(m));
  const seed = kernel.seed_reference;
  return (
    <article className="kernel-card" data-testid="kernel-card" id={kernel.id}>
      <header className="kernel-card-head">
        <h3>
          <code>{kernel.id}</code> <span className="muted small">{kernel.title !== kernel.id ? kernel.title : ''}</span>
        </h3>
        <span className="badge badge-sweep">{kernel.unit}</span>
        <span className="run-actions">
          <Link className="button" to={newRunPath({ machines: on.slice(0, 1), kernels: [kernel.id] })} data-testid="run-this">
            Run this…
          </Link>
          {on.length >= 2 && (
            <Link className="button" to={comparePath({ machines: on, kernels: [kernel.id] })}>
              Compare machines
            </Link>
          )}
        </span>
      </header>
      <p>{kernel.description}</p>
      {kernel.params.length > 0 && (
        <table className="table params-table">
          <thead>
            <tr>
              <th scope="col">Parameter</th>
              <th scope="col">Type</th>
              <th scope="col">Default</th>
              <th scope="col">Range / choices</th>
              <th scope="col">Default sweep</th>
              <th scope="col">Help</th>
            </tr>
          </thead>
          <tbody>
            {kernel.params.map((p) => (
              <tr key={p.name}>
                <td>
                  <code>{p.name}</code>
                </td>
                <td>{p.type}</td>
                <td>{show(p.default)}</td>
                <td className="small">{paramRange(p) || '—'}</td>
                <td className="small">{p.sweep && p.sweep.length ? p.sweep.map(show).join(', ') : '—'}</td>
                <td className="small muted">{p.help ?? ''}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {seed && (
        <p className="seed-ref small" data-testid="seed-reference">
          Seed {seed.seed}: <strong>{formatMeasure(seed.value, seed.unit)}</strong> on {seed.machine}
          {seed.params && Object.keys(seed.params).length > 0 ? ` (${formatParams(seed.params)})` : ''}
          {seed.note ? `: ${seed.note}` : ''}
        </p>
      )}
      <p className="muted small">
        On {kernel.machines.length} {kernel.machines.length === 1 ? 'machine' : 'machines'}.
      </p>
    </article>
  );
}

/** The catalog: every kernel the agents list, by family, with parameters and the seeds' figures. */
export function KernelsPage() {
  useDocumentTitle('Kernels');
  const [searchParams, setSearchParams] = useSearchParams();
  const query = decodeKernelsQuery(searchParams);
  const kernels = useKernels();
  const machines = useMachines();
  const all = kernels.data ?? [];
  const families = [...new Set(all.map((k) => k.family))].sort();
  const found = searchKernels(all, query);
  const groups = families.map((f) => [f, found.filter((k) => k.family === f).sort((a, b) => a.id.localeCompare(b.id))] as const).filter(([, ks]) => ks.length > 0);
  const machineIds = (machines.data ?? []).map((m) => m.id);
  const set = (patch: Partial<typeof query>) => setSearchParams(encodeKernelsQuery({ ...query, ...patch }), { replace: true });
  return (
    <>
      <h1>Kernels</h1>
      <p className="lead">Each measured primitive, its parameters, and what the seed write-ups measured.</p>
      <div className="toolbar">
        <label htmlFor="kernel-search">Search</label>
        <input id="kernel-search" type="search" value={query.q} onChange={(e) => set({ q: e.target.value })} placeholder="pipe, mutex, threads…" size={30} />
        <label htmlFor="kernel-family">Family</label>
        <select id="kernel-family" value={query.family ?? ''} onChange={(e) => set({ family: e.target.value || null })}>
          <option value="">All families</option>
          {families.map((f) => (
            <option key={f} value={f}>
              {f}
            </option>
          ))}
        </select>
        <span className="muted small" data-testid="kernel-count">
          {found.length} of {all.length} kernels
        </span>
      </div>
      {kernels.isPending && <Loading what="kernels" />}
      {kernels.isError && <ErrorMessage title="Could not load kernels:" error={kernels.error} />}
      {kernels.data && all.length === 0 && (
        <EmptyState title="No kernels yet">
          <p>Kernels appear when an agent connects and lists its kernel executables.</p>
        </EmptyState>
      )}
      {kernels.data && all.length > 0 && found.length === 0 && <p className="muted">No kernel matches.</p>}
      {groups.map(([family, ks]) => (
        <section key={family} className="kernel-family-section" data-testid="kernel-family">
          <h2>
            {family} <span className="muted small">{ks.length}</span>
          </h2>
          {ks.map((k) => (
            <KernelCard key={k.id} kernel={k} machineIds={machineIds} />
          ))}
        </section>
      ))}
    </>
  );
}

export default KernelsPage;
