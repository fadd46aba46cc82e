import { TableHead } from '@/components/TableHead';
import type { CompareResponse } from '@/lib/api-types';
import type { CompareView } from '@/lib/compare-query';
import { formatNumber, formatParams } from '@/lib/format';
import { heatColour, heatInk, heatLegend, heatPosition } from '../utils/heatmap';
import { compareByKernel, formatRatio, rowKey } from '../utils/table';

/** Machines × kernel points, coloured by log ratio to the baseline (blue better, red worse). */
export function Heatmap({ data, view, onView }: { data: CompareResponse; view: CompareView; onView: (p: Partial<CompareView>) => void }) {
  const rows = [...data.rows].sort(compareByKernel);
  const selected = view.cell ? `${view.cell.kernel}|${view.cell.paramsKey}` : null;
  return (
    <div className="heatmap-wrap" data-testid="heatmap">
      <table className="heatmap">
        <TableHead columns={['Kernel', ...data.machines.map((m) => (m.id === data.baseline ? `${m.name} (baseline)` : m.name))]} />
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)} className={rowKey(row) === selected ? 'selected' : undefined}>
              <th scope="row" className="small">
                <code>{row.kernel}</code> <span className="muted">{row.params_key ? formatParams(row.params) : ''}</span>
              </th>
              {data.machines.map((m) => {
                const r = row.ratios[m.id]?.ratio ?? null;
                const pos = heatPosition(r, row.higher_is_better);
                const open = () => onView({ cell: { kernel: row.kernel, paramsKey: row.params_key } });
                // A button per cell: reached with Tab, opened with Enter, and its name says what a
                // pointer's hover shows (the machine, the point, the ratio).
                const point = row.params_key ? `${row.kernel} ${formatParams(row.params)}` : row.kernel;
                return (
                  <td key={m.id} style={{ background: heatColour(pos), color: heatInk(pos) }} data-testid="heat-cell">
                    {r === null ? (
                      <span title="no ratio" aria-label={`${m.name}, ${point}: no ratio`}>
                        —
                      </span>
                    ) : (
                      <button
                        type="button"
                        className="heat-button"
                        title={`${m.name}: ${formatRatio(r)} the baseline (show the samples)`}
                        aria-label={`${point}, ${m.name}: ${formatRatio(r)} the baseline`}
                        aria-current={rowKey(row) === selected ? true : undefined}
                        onClick={open}
                      >
                        {formatRatio(r)}
                      </button>
                    )}
                  </td>
                );
              })}
            </tr>
          ))}
        </tbody>
      </table>
      <div className="heat-legend" aria-label="Colour scale">
        <span className="muted small">better</span>
        {heatLegend().map((s) => (
          <span key={s.ratio} className="heat-stop" style={{ background: s.colour, color: heatInk(Math.log(s.ratio) / Math.log(4)) }}>
            {formatNumber(s.ratio, 2)}×
          </span>
        ))}
        <span className="muted small">worse (log scale, clamped at 4×; for throughput units the colours flip)</span>
      </div>
    </div>
  );
}
