import { Link } from 'react-router';
import { useRecentRuns } from '@/features/machines';
import type { Machine } from '@/lib/api-types';
import type { CompareView } from '@/lib/compare-query';
import { paths } from '@/app/paths';

/**
 * One machine chosen (e.g. from a run's "Compare with…" when no other machine has measured its
 * kernels): a button per other machine, those with results first, and where more machines come from.
 */
export function PickAnother({ machines, view, onView }: { machines: Machine[]; view: CompareView; onView: (p: Partial<CompareView>) => void }) {
  const chosen = view.machines[0]!;
  const name = machines.find((m) => m.id === chosen)?.name ?? chosen;
  const recent = useRecentRuns();
  const measured = new Set((recent.data ?? []).filter((r) => r.status === 'succeeded').map((r) => r.machine_id));
  const others = machines.filter((m) => m.id !== chosen).sort((a, b) => Number(measured.has(b.id)) - Number(measured.has(a.id)) || a.name.localeCompare(b.name));
  return (
    <div className="message message-info" data-testid="compare-prompt" role="note">
      <p>
        <strong>Pick a machine to compare with {name}.</strong>{' '}
        {others.length > 0 ? 'Its results sit beside each other machine’s latest results for the same kernels:' : 'No other machine has connected to this server yet.'}
      </p>
      {others.length > 0 && (
        <div className="chips">
          {others.map((m) => (
            <button
              key={m.id}
              type="button"
              className="chip"
              onClick={() => onView({ machines: [...view.machines, m.id], baseline: view.baseline ?? chosen })}
              data-testid="add-machine"
            >
              + {m.name}
              {recent.data && !measured.has(m.id) && <span className="muted small"> (no results yet)</span>}
            </button>
          ))}
        </div>
      )}
      <p className="small">
        To measure another host, <Link to={paths.hosts}>Add hosts</Link>, then run the same kernels there.
      </p>
    </div>
  );
}
