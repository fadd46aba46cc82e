import { Link } from 'react-router';
import { KernelText } from '@/components/KernelText';
import type { Kernel } from '@/lib/api-types';
import { comparePath } from '@/lib/compare-query';
import { formatMeasure, formatParams } from '@/lib/format';
import { kernelPath, newRunPath } from '@/lib/query-state';
import { paramRange } from '../utils/catalog';
import { SeedLink } from '@/components/SeedLink';
import { TableHead } from '@/components/TableHead';

function show(v: unknown): string {
  if (v === null || v === undefined) return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}

/** One kernel's catalog entry: what it measures, its parameters, the seed's figure and where it runs. */
export function KernelCard({ kernel, machineIds }: { kernel: Kernel; machineIds: string[] }) {
  const on = kernel.machines.filter((m) => machineIds.includes(m));
  const seed = kernel.seed_reference;
  return (
    <article className="kernel-card" data-testid="kernel-card" id={kernel.id}>
      <header className="kernel-card-head">
        <h3>
          <Link to={kernelPath(kernel.id)} className="kernel-link">
            <code>{kernel.id}</code>
          </Link>{' '}
          <span className="muted small">{kernel.title !== kernel.id ? kernel.title : ''}</span>
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
      <p className="kernel-description">
        <KernelText text={kernel.description} />
      </p>
      {kernel.params.length > 0 && (
        <table className="table params-table">
          <TableHead columns={['Parameter', 'Type', 'Default', 'Range / choices', 'Default sweep', 'Help']} />
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
                <td className="small muted">
                  <KernelText text={p.help} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
      {seed && (
        <p className="seed-ref small" data-testid="seed-reference">
          <SeedLink seed={seed.seed} />: <strong>{formatMeasure(seed.value, seed.unit)}</strong> on {seed.machine}
          {seed.params && Object.keys(seed.params).length > 0 ? ` (${formatParams(seed.params)})` : ''}
          {seed.note && (
            <>
              : <KernelText text={seed.note} />
            </>
          )}
        </p>
      )}
      <p className="muted small">
        On {kernel.machines.length} {kernel.machines.length === 1 ? 'machine' : 'machines'}.
      </p>
    </article>
  );
}
