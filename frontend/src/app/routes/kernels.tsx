import { useEffect } from 'react';
import { useLocation, useSearchParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { Select } from '@/components/Form';
import { useKernels } from '@/features/kernels/api/kernels';
import { KernelCard } from '@/features/kernels/components/KernelCard';
import { Seeds } from '@/features/kernels/components/Seeds';
import { decodeKernelsQuery, encodeKernelsQuery, familyGroups, searchKernels } from '@/features/kernels/utils/catalog';
import { useMachines } from '@/features/machines/api/machines';
import { useDocumentTitle } from './title';

/** Scrolls to the element the address's #hash names once `ready` (a seed, a kernel card). */
function useScrollToHash(ready: boolean) {
  const { hash } = useLocation();
  useEffect(() => {
    if (!ready || !hash) return;
    const el = document.getElementById(decodeURIComponent(hash.slice(1)));
    el?.scrollIntoView({ block: 'start' });
  }, [hash, ready]);
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
  // Searching, the best match leads (its family first); else families and kernels by name.
  const groups = familyGroups(found, query.q !== '');
  const machineIds = (machines.data ?? []).map((m) => m.id);
  useScrollToHash(kernels.isSuccess);
  const set = (patch: Partial<typeof query>) => setSearchParams(encodeKernelsQuery({ ...query, ...patch }), { replace: true });
  return (
    <>
      <h1>Kernels</h1>
      <p className="lead">
        Each measured primitive, its parameters, and what the <a href="#seeds">seed write-ups</a> measured.
      </p>
      <div className="toolbar">
        <label htmlFor="kernel-search">Search</label>
        <input id="kernel-search" type="search" value={query.q} onChange={(e) => set({ q: e.target.value })} placeholder="pipe, mutex, threads…" size={30} />
        <label htmlFor="kernel-family">Family</label>
        <Select
          id="kernel-family"
          value={query.family ?? ''}
          onChange={(e) => set({ family: e.target.value || null })}
          options={[{ value: '', label: 'All families' }, ...families]}
        />
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
      <Seeds />
    </>
  );
}

export default KernelsPage;
