import type { CompareResponse, CompareRow } from '@/lib/api-types';
import type { CompareView } from '@/lib/compare-query';
import { chooseScale, formatNumber, formatParams, formatPercent, formatScaled } from '@/lib/format';
import { formatRatio, geomeanRows, isWorse, rowKey, rowWarning, sortMachineOf, sortRows } from '../utils/table';

function RatioCell({ row, machine, onClick }: { row: CompareRow; machine: string; onClick: () => void }) {
  const r = row.ratios[machine];
  if (!r || r.ratio === null) {
    return (
      <td className="num muted" data-testid="compare-ratio" data-machine-id={machine}>
        —
      </td>
    );
  }
  const worse = isWorse(r.ratio, row.higher_is_better);
  const p = r.p_value === null ? 'n < 5 on a side: no test' : `Mann-Whitney U p = ${formatNumber(r.p_value, 2)}`;
  return (
    <td
      className={`num ratio ${r.significant ? (worse ? 'ratio-worse' : 'ratio-better') : ''}`}
      data-testid="compare-ratio"
      data-machine-id={machine}
      onClick={onClick}
    >
      <span data-testid="ratio-value">{formatRatio(r.ratio)}</span>
      {r.significant && (
        <span className="mark mark-sig" data-testid="significant" title={`Significant difference (${p})`}>
          *
        </span>
      )}
      <div className="muted small" title={`95 % CI of the ratio; ${p}`}>
        {formatNumber(r.ci_low, 3)}–{formatNumber(r.ci_high, 3)}
      </div>
    </td>
  );
}

/**
 * One row per kernel and parameter point; per machine its median with the 95 % CI, and for the
 * machines that are not the baseline the ratio with its CI (* = Mann-Whitney U significant). Then the
 * geometric-mean rows per family and overall. Click a cell to see its samples.
 */
export function CompareTable({
  data,
  view,
  onView,
}: {
  data: CompareResponse;
  view: CompareView;
  onView: (patch: Partial<CompareView>) => void;
}) {
  const ids = data.machines.map((m) => m.id);
  const sortMachine = sortMachineOf(ids, data.baseline, view.sortMachine);
  const rows = sortRows(data.rows, view.sort, sortMachine);
  const gm = geomeanRows(data);
  const others = data.machines.filter((m) => m.id !== data.baseline);
  const select = (row: CompareRow) => onView({ cell: { kernel: row.kernel, paramsKey: row.params_key } });
  const selected = view.cell ? `${view.cell.kernel}|${view.cell.paramsKey}` : null;
  const toggleSort = (machine: string) => {
    const next = view.sort === 'ratio' && sortMachine === machine ? '-ratio' : view.sort === '-ratio' && sortMachine === machine ? 'kernel' : 'ratio';
    onView({ sort: next, sortMachine: next === 'kernel' ? null : machine });
  };
  const arrow = (machine: string) => (sortMachine === machine ? (view.sort === 'ratio' ? ' ↑' : view.sort === '-ratio' ? ' ↓' : '') : '');

  return (
    <div className="table-wrap">
      <table className="table compare-table" data-testid="compare-table">
        <thead>
          <tr>
            <th scope="col">Kernel</th>
            <th scope="col">Params</th>
            <th scope="col">Unit</th>
            {data.machines.map((m) => (
              <th key={m.id} scope="col" className="num" data-testid="compare-machine-head">
                {m.name}
                {m.id === data.baseline && <span className="badge badge-baseline">baseline</span>}
                <div className="muted small">median [95 % CI]</div>
              </th>
            ))}
            {others.map((m) => (
              <th key={m.id} scope="col" className="num" aria-sort={sortMachine === m.id && view.sort !== 'kernel' ? (view.sort === 'ratio' ? 'ascending' : 'descending') : 'none'}>
                <button type="button" className="link-button" onClick={() => toggleSort(m.id)} title="Sort by this ratio">
                  {m.name} / {data.machines.find((x) => x.id === data.baseline)?.name ?? 'baseline'}
                  {arrow(m.id)}
                </button>
                <div className="muted small">ratio [95 % CI]</div>
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => {
            const key = rowKey(row);
            const base = row.cells[data.baseline]?.median ?? Object.values(row.cells)[0]?.median ?? null;
            const scale = chooseScale(base, row.unit);
            const warning = rowWarning(row, data.warnings);
            return (
              <tr key={key} data-testid="compare-row" data-kernel={row.kernel} data-params={row.params_key} className={key === selected ? 'selected' : undefined}>
                <td>
                  <code>{row.kernel}</code>
                  {row.higher_is_better && <div className="muted small">higher is better</div>}
                  {warning && (
                    <div className="message-warn small" role="note" data-testid="row-warning">
                      {warning}
                    </div>
                  )}
                </td>
                <td className="small">{formatParams(row.params)}</td>
                <td className="small">{scale.unit}</td>
                {data.machines.map((m) => {
                  const c = row.cells[m.id];
                  if (!c) {
                    return (
                      <td key={m.id} className="num muted">
                        no result
                      </td>
                    );
                  }
                  return (
                    <td key={m.id} className="num cell-click" onClick={() => select(row)} data-testid="compare-cell" data-machine-id={m.id} data-result-id={c.result_id}>
                      <button type="button" className="link-button" data-testid="compare-median" title="Show the samples">
                        {formatScaled(c.median, row.units?.[m.id] && row.units[m.id] !== row.unit ? { factor: 1, unit: row.units[m.id]! } : scale)}
                      </button>
                      {c.noisy && (
                        <span className="mark mark-noisy" data-testid="noisy" title={`Noisy: CV ${formatPercent(c.cv)} (over 3 %)`}>
                          ~
                        </span>
                      )}
                      <div className="muted small">
                        [{formatScaled(c.ci_low, scale)}–{formatScaled(c.ci_high, scale)}] n={c.n}
                      </div>
                    </td>
                  );
                })}
                {others.map((m) => (
                  <RatioCell key={m.id} row={row} machine={m.id} onClick={() => select(row)} />
                ))}
              </tr>
            );
          })}
        </tbody>
        <tfoot>
          {gm.map((g) => (
            <tr key={g.label} className={g.family === null ? 'geomean geomean-all' : 'geomean'} data-testid="compare-geomean">
              <th scope="row" colSpan={3 + data.machines.length}>
                {g.label} <span className="muted small">({g.count} {g.count === 1 ? 'row' : 'rows'})</span>
              </th>
              {others.map((m) => (
                <td key={m.id} className="num strong" data-testid="geomean-ratio">
                  {formatRatio(g.ratios[m.id])}
                </td>
              ))}
            </tr>
          ))}
        </tfoot>
      </table>
      <p className="table-note muted small">
        Ratio = machine median ÷ baseline median (above 1: slower for times, faster for throughput). * = the
        difference is significant (two-sided Mann-Whitney U, n ≥ 5 a side, p &lt; 0.05). ~ = noisy (CV over 3 %).
        Click a median to see its samples.
      </p>
    </div>
  );
}
