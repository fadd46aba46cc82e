import { DataTable } from '@/components/TableHead';
import type { CompareResponse } from '@/lib/api-types';
import { factHint, factLabel, factText, preflightDetails } from '@/lib/facts';

/** Only the facts that differ between the compared machines, with a hint on each (the server's first).
 * `shown`: on a share, the facts its sharer let it carry (the others are not compared here). */
export function FactsDiff({ data, shown }: { data: CompareResponse; shown?: string[] }) {
  const among = shown ? (
    <p className="muted small" data-testid="share-facts-shown">
      This link shows only these host facts: {shown.length > 0 ? shown.map(factLabel).join(', ') : 'none'}.
    </p>
  ) : null;
  if (data.facts_diff.length === 0) {
    return (
      <>
        {among}
        <p className="muted">The compared machines have the same {shown ? 'facts among those' : 'facts'}.</p>
      </>
    );
  }
  return (
    <>
      {among}
      <DataTable columns={['Fact', ...data.machines.map((m) => m.name)]} testId="facts-diff">
      {data.facts_diff.map((d) => {
        const hint = factHint(d.fact, d.hint);
        return (
          <tr key={d.fact} data-testid="fact-diff" data-fact={d.fact}>
            <th scope="row">
              <span className="fact-label" title={d.fact}>
                {factLabel(d.fact)}
              </span>
              {hint && <div className="muted small hint">{hint}</div>}
            </th>
            {data.machines.map((m) => {
              const v = d.values[m.id];
              return (
                <td key={m.id} className="small fact-value" title={d.fact === 'preflight' ? preflightDetails(v) || undefined : undefined}>
                  {factText(d.fact, v) || '—'}
                </td>
              );
            })}
          </tr>
        );
      })}
      </DataTable>
    </>
  );
}
