import { KernelLink } from '@/components/KernelLink';
import { StatusBadge } from '@/components/StatusBadge';
import type { RunItem } from '@/lib/api-types';
import { formatDuration, formatParams } from '@/lib/format';
import { DataTable } from '@/components/TableHead';
import { num } from '@/components/table-columns';
import { launchesCell } from '../utils/progress';

const LAUNCHES_HELP =
  "Kernel processes done of those planned. The run's launches take turns round-robin over its items (item 1, item 2, …, then item 1 again), so every item is running from the first round and finishes in the last.";

/** The run's items, each with its state, its launches done and, once it finished with a result, what it took. */
export function RunItemsTable({ items, durations }: { items: RunItem[]; durations?: ReadonlyMap<string, number> }) {
  return (
    <DataTable
      columns={[
        num('#'),
        { label: 'Kernel', className: 'col-kernel' },
        'Params',
        'State',
        num('Launches', LAUNCHES_HELP),
        num('Took', "The wall time of the item's kernel processes (launches)"),
        num('Attempt'),
        'Error',
      ]}
    >
      {[...items]
        .sort((a, b) => a.index - b.index)
        .map((item) => {
          const took = durations?.get(item.id);
          return (
            <tr key={item.id} data-testid="run-item">
              <td className="num">{item.index + 1}</td>
              <td className="col-kernel">
                <KernelLink id={item.kernel} />
              </td>
              <td className="small">{formatParams(item.params)}</td>
              <td>
                <StatusBadge status={item.state} />
              </td>
              <td className="num" data-testid="item-launches">
                {launchesCell(item) ?? <span className="muted">—</span>}
              </td>
              <td className="num" data-testid="item-duration">
                {took !== undefined ? formatDuration(took) : <span className="muted">—</span>}
              </td>
              <td className="num">{item.attempt ?? 1}</td>
              <td className="error-text">{item.error ?? ''}</td>
            </tr>
          );
        })}
    </DataTable>
  );
}
