import { KernelLink } from '@/components/KernelLink';
import type { CompareResponse, CompareRow } from '@/lib/api-types';
import type { CompareView } from '@/lib/compare-query';
import { FIGURE_TITLE, figureOf, figureStat, figureStatText } from '@/lib/figure';
import { formatNumber, formatParams, formatPercent, formatScaled, type Scale } from '@/lib/format';
import { ciLabel, ciTitle, formatRatio, geomeanRows, isWorse, kernelScales, rowKey, scaleKey, rowWarning, ruleShort, ruleTitle, sortMachineOf, sortRows } from '../utils/table';
import { InterferenceBadge } from '@/components/InterferenceBadge';

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
  const why = ruleTitle(r);
  const rule = ruleShort(r);
  return (
    <td
      className={`num ratio ${r.significant ? (worse ? 'ratio-worse' : 'ratio-better') : ''}`}
      data-testid="compare-ratio"
      data-machine-id={machine}
      onClick={onClick}
      title={why}
    >
      <span data-testid="ratio-value">{formatRatio(r.ratio)}</span>
      {r.significant && (
        <span className="mark mark-sig" data-testid="significant" title={why}>
          *
        </span>
      )}
      <div className="muted small" title={ciTitle(r.ci_kind)}>
        {formatNumber(r.ci_low, 3)}–{formatNumber(r.ci_high, 3)} <span data-testid="ratio-ci-kind">{ciLabel(r.ci_kind)}</span>
      </div>
      {rule && (
        <div className="muted small" data-testid="ratio-rule" data-rule={r.significance?.rule}>
          {rule}
        </div>
      )}
    </td>
  );
}

/**
 * A machine's figure in a row (lib/figure.ts: the number its ratio compares) with what it is (p5,
 * median), its interval and the noisy mark; click to see its samples.
 */
function FigureCell({ row, machine, scale, onClick }: { row: CompareRow; machine: string; scale: Scale; onClick: () => void }) {
  const c = row.cells[machine];
  if (!c) {
    return <td className="num muted">no result</td>;
  }
  return (
    <td className="num cell-click" onClick={onClick} data-testid="compare-cell" data-machine-id={machine} data-result-id={c.result_id}>
      <button type="button" className="link-button" data-testid="compare-median" title="Show the samples">
        {formatScaled(figureOf(c), row.units?.[machine] && row.units[machine] !== row.unit ? { factor: 1, unit: row.units[machine]! } : scale)}
      </button>
      {c.noisy && (
        <span className="mark mark-noisy" data-testid="noisy" title={`Noisy: CV ${formatPercent(c.cv)} (over 3 %)`}>
          ~
        </span>
      )}
      <div className="muted small" title={ciTitle(c.ci_kind)}>
        <span data-testid="cell-figure-stat" title={figureStatText(figureStat(c))}>
          {figureStat(c)}
        </span>{' '}
        [{formatScaled(c.ci_low, scale)}–{formatScaled(c.ci_high, scale)}] <span data-testid="cell-ci-kind">{ciLabel(c.ci_kind)}</span> n={c.n}
        {c.n_launches ? `, ${c.n_launches} launch${c.n_launches === 1 ? '' : 'es'}` : ''}
      </div>
      <InterferenceBadge value={c.interference} />
    </td>
  );
}

/** One kernel and parameter point: its figures per machine, then its ratios to the baseline. */
function CompareTableRow(props: { data: CompareResponse; row: CompareRow; scales: Map<string, Scale>; selected: boolean; onSelect: () => void }) {
  const { data, row, scales, selected, onSelect } = props;
  const scale = scales.get(scaleKey(row)) ?? { factor: 1, unit: row.unit };
  const warning = rowWarning(row, data.warnings);
  return (
    <tr data-testid="compare-row" data-kernel={row.kernel} data-params={row.params_key} className={selected ? 'selected' : undefined}>
      <td className="col-kernel">
        <KernelLink id={row.kernel} />
        {/* On a phone the params and unit columns fold in here, so a figure is in view without scrolling. */}
        <div className="muted small narrow-only" data-testid="compare-point-narrow">
          {row.params_key ? `${formatParams(row.params)} · ` : ''}
          {scale.unit}
        </div>
        {row.higher_is_better && <div className="muted small">higher is better</div>}
        {warning && (
          <div className="message-warn small" role="note" data-testid="row-warning">
            {warning}
          </div>
        )}
      </td>
      <td className="small wide-only">{formatParams(row.params)}</td>
      <td className="small wide-only" data-testid="compare-unit">
        {scale.unit}
      </td>
      {data.machines.map((m) => (
        <FigureCell key={m.id} row={row} machine={m.id} scale={scale} onClick={onSelect} />
      ))}
      {data.machines
        .filter((m) => m.id !== data.baseline)
        .map((m) => (
          <RatioCell key={m.id} row={row} machine={m.id} onClick={onSelect} />
        ))}
    </tr>
  );
}

/** The column heads: a figure column per machine, then a sortable ratio column per non-baseline machine. */
function CompareTableHead({ data, view, onView, sortMachine }: { data: CompareResponse; view: CompareView; onView: (patch: Partial<CompareView>) => void; sortMachine: string | null }) {
  const others = data.machines.filter((m) => m.id !== data.baseline);
  const toggleSort = (machine: string) => {
    const next = view.sort === 'ratio' && sortMachine === machine ? '-ratio' : view.sort === '-ratio' && sortMachine === machine ? 'kernel' : 'ratio';
    onView({ sort: next, sortMachine: next === 'kernel' ? null : machine });
  };
  const arrow = (machine: string) => (sortMachine === machine ? (view.sort === 'ratio' ? ' ↑' : view.sort === '-ratio' ? ' ↓' : '') : '');
  return (
    <thead>
      <tr>
        <th scope="col" className="col-kernel">Kernel</th>
        <th scope="col" className="wide-only">Params</th>
        <th scope="col" className="wide-only">Unit</th>
        {data.machines.map((m) => (
          <th key={m.id} scope="col" className="num" data-testid="compare-machine-head">
            {m.name}
            {m.id === data.baseline && <span className="badge badge-baseline">baseline</span>}
            <div className="muted small" title={FIGURE_TITLE}>
              figure [CI]
            </div>
          </th>
        ))}
        {others.map((m) => (
          <th key={m.id} scope="col" className="num" aria-sort={sortMachine === m.id && view.sort !== 'kernel' ? (view.sort === 'ratio' ? 'ascending' : 'descending') : 'none'}>
            <button type="button" className="link-button" onClick={() => toggleSort(m.id)} title="Sort by this ratio">
              {m.name} / {data.machines.find((x) => x.id === data.baseline)?.name ?? 'baseline'}
              {arrow(m.id)}
            </button>
            <div className="muted small">ratio, CI</div>
          </th>
        ))}
      </tr>
    </thead>
  );
}

/** The geometric-mean rows, per family and overall. */
function GeomeanFoot({ data }: { data: CompareResponse }) {
  const others = data.machines.filter((m) => m.id !== data.baseline);
  return (
    <tfoot>
      {geomeanRows(data).map((g) => (
        <tr key={g.label} className={g.family === null ? 'geomean geomean-all' : 'geomean'} data-testid="compare-geomean">
          <th scope="row" colSpan={1 + data.machines.length}>
            {g.label} <span className="muted small">({g.count} {g.count === 1 ? 'row' : 'rows'})</span>
          </th>
          {/* The params and unit columns' share of the label: gone with those columns on a phone. */}
          <td className="wide-only" colSpan={2} />
          {others.map((m) => (
            <td key={m.id} className="num strong" data-testid="geomean-ratio">
              {formatRatio(g.ratios[m.id])}
            </td>
          ))}
        </tr>
      ))}
    </tfoot>
  );
}

/**
 * One row per kernel and parameter point; per machine its figure with its interval (labelled: a 95 % CI
 * only with enough launches, else min–max), and for the machines that are not the baseline the ratio
 * with its CI (* = significant: the CI clears the run-to-run noise; the rule is under it and in its
 * tooltip). Then the geometric-mean rows per family and overall. Click a cell to see its samples.
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
  const scales = kernelScales(data.rows);
  const select = (row: CompareRow) => onView({ cell: { kernel: row.kernel, paramsKey: row.params_key } });
  const selected = view.cell ? `${view.cell.kernel}|${view.cell.paramsKey}` : null;

  return (
    <div className="table-wrap">
      <table className="table compare-table" data-testid="compare-table">
        <CompareTableHead data={data} view={view} onView={onView} sortMachine={sortMachine} />
        <tbody>
          {rows.map((row) => {
            const key = rowKey(row);
            return <CompareTableRow key={key} data={data} row={row} scales={scales} selected={key === selected} onSelect={() => select(row)} />;
          })}
        </tbody>
        <GeomeanFoot data={data} />
      </table>
      <p className="table-note muted small">
        Figure: the p5 of the repetitions for short samples (a shared host slows whole repetitions together:
        their median wanders from run to run, their 5th percentile repeats), the median for long samples; which
        one is under each. Ratio = machine figure ÷ baseline figure (above 1: slower for times, faster for
        throughput). Intervals are of the figure, from a hierarchical bootstrap (launches, then samples); “95 %
        CI” only with 6 launches or more, else “min–max” or “CI &lt; 95 %”. * = significant: the ratio’s CI lies beyond the run-to-run noise (learned
        from the machines’ own runs, else a default floor); the rule is under each ratio. ~ = noisy (CV over 3 %).
        Click a figure to see its samples.
      </p>
    </div>
  );
}
