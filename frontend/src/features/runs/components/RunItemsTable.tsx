import { KernelLink } from '@/components/KernelLink';
import { StatusBadge } from '@/components/StatusBadge';
import type { RunItem } from '@/lib/api-types';
import { formatParams } from '@/lib/format';

export function RunItemsTable({ items }: { items: RunItem[] }) {
  return (
    <div className="table-wrap">
      <table className="table">
        <thead>
          <tr>
            <th scope="col" className="num">
              #
            </th>
            <th scope="col">Kernel</th>
            <th scope="col">Params</th>
            <th scope="col">State</th>
            <th scope="col" className="num">
              Attempt
            </th>
            <th scope="col">Error</th>
          </tr>
        </thead>
        <tbody>
          {[...items]
            .sort((a, b) => a.index - b.index)
            .map((item) => (
              <tr key={item.id} data-testid="run-item">
                <td className="num">{item.index + 1}</td>
                <td>
                  <KernelLink id={item.kernel} />
                </td>
                <td className="small">{formatParams(item.params)}</td>
                <td>
                  <StatusBadge status={item.state} />
                </td>
                <td className="num">{item.attempt ?? 1}</td>
                <td className="error-text">{item.error ?? ''}</td>
              </tr>
            ))}
        </tbody>
      </table>
    </div>
  );
}
