import { Link } from 'react-router';
import { OnlineBadge } from '@/components/StatusBadge';
import { RelativeTime } from '@/components/Time';
import { useNow } from '@/components/use-now';
import type { Machine } from '@/lib/api-types';
import { newRunPath } from '@/lib/query-state';
import { MachineFacts } from './MachineFacts';

export function MachinesTable({ machines }: { machines: Machine[] }) {
  const now = useNow();
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th scope="col">Machine</th>
            <th scope="col">State</th>
            <th scope="col">Last seen</th>
            <th scope="col">Facts</th>
            <th scope="col" className="num">
              Kernels
            </th>
            <th scope="col">
              <span className="visually-hidden">Actions</span>
            </th>
          </tr>
        </thead>
        <tbody>
          {machines.map((m) => (
            <tr key={m.id} data-testid="machine-row" data-machine-id={m.id}>
              <td>
                <div className="strong">{m.name}</div>
                <div className="muted small">{m.hostname}</div>
              </td>
              <td>
                <OnlineBadge online={m.online} />
              </td>
              <td>
                <RelativeTime value={m.last_seen} now={now} />
              </td>
              <td>
                <MachineFacts facts={m.facts} />
              </td>
              <td className="num">{m.kernels.length}</td>
              <td>
                <Link className="button" to={newRunPath({ machines: [m.id] })} aria-label={`New run on ${m.name}`}>
                  New run
                </Link>
              </td>
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
