import { DataTable } from '@/components/TableHead';
import type { CompareResponse } from '@/lib/api-types';
import { factLabel } from '@/lib/facts';

function show(v: unknown): string {
  if (v === null || v === undefined || v === '') return '—';
  if (typeof v === 'string') return v;
  return JSON.stringify(v);
}

/** Only the facts that differ between the compared machines, with the server's hint on each. */
export function FactsDiff({ data }: { data: CompareResponse }) {
  if (data.facts_diff.length === 0) {
    return <p className="muted">The compared machines have the same facts.</p>;
  }
  return (
    <DataTable columns={['Fact', ...data.machines.map((m) => m.name)]} testId="facts-diff">
      {data.facts_diff.map((d) => (
        <tr key={d.fact} data-testid="fact-diff">
          <th scope="row">
            <span className="fact-label" title={d.fact}>
              {factLabel(d.fact)}
            </span>
            {d.hint && <div className="muted small hint">{d.hint}</div>}
          </th>
          {data.machines.map((m) => (
            <td key={m.id} className="small fact-value">
              {show(d.values[m.id])}
            </td>
          ))}
        </tr>
      ))}
    </DataTable>
  );
}
