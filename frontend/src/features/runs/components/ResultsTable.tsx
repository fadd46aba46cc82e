import { KernelLink } from '@/components/KernelLink';
import type { Result, RunItem } from '@/lib/api-types';
import { rerunNote, resultScales, sortByItemOrder, toResultRow, type ResultRow } from '../utils/result-rows';
import { DataTable } from '@/components/TableHead';
import { num } from '@/components/table-columns';
import { InterferenceBadge } from '@/components/InterferenceBadge';
import { disturbedLaunchesText } from '@/lib/interference';
import { FIGURE_TITLE } from '@/lib/figure';

/**
 * A result's counters, compact: the summary line (switches per op, CPU/wall) opens into every counter
 * with what it means; each counter's tooltip says the same.
 */
function Counters({ row }: { row: ResultRow }) {
  if (row.counters.length === 0) return <span className="muted">—</span>;
  const n = row.counters.length;
  return (
    <details className="counters" data-testid="result-counters">
      <summary title="Show every counter and what it means">
        {row.countersSummary || `${n} ${n === 1 ? 'counter' : 'counters'}`}
        {row.countersSummary && <span className="muted"> · {n} counters</span>}
      </summary>
      <dl>
        {row.counters.map((c) => (
          <div key={c.name} data-testid="counter" data-counter={c.name} title={`${c.name}: ${c.help}`}>
            <dt>{c.label}</dt>
            <dd className="num">{c.value}</dd>
            <dd className="counter-help muted">{c.help}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

/** Reruns and noise of one result: "noisy" when still above the CV threshold after its reruns. */
function RerunMarks({ result }: { result: Result }) {
  const note = rerunNote(result);
  if (note === null) return null;
  const reruns = result.reruns ?? 0;
  return (
    <>
      {reruns > 0 && !result.noisy && (
        <span className="badge badge-rerun" data-testid="result-reruns" title={note}>
          {reruns} {reruns === 1 ? 'rerun' : 'reruns'}
        </span>
      )}
      {result.noisy && (
        <span className="badge badge-noisy" data-testid="result-noisy" title={note}>
          noisy
        </span>
      )}
    </>
  );
}

export function ResultsTable({ results, items }: { results: Result[]; items: RunItem[] }) {
  const sorted = sortByItemOrder(results, items);
  const scales = resultScales(results);
  const rangeNote = sorted.map((r) => toResultRow(r, scales)).find((r) => r.ciIsRange)?.ciMethod;
  const note = rangeNote && <p className="table-note small muted">† the sample range [min, max]: {rangeNote}</p>;
  return (
    <DataTable columns={[{ label: 'Kernel', className: 'col-kernel' }, 'Params', 'Unit', num('n'), num('Figure', FIGURE_TITLE), num('95 % CI'), num('Mean'), num('Stddev'), num('CV'), num('Min'), num('Max'), 'Counters']} className="results" note={note}>
      {sorted.map((result) => {
        const r = toResultRow(result, scales);
        const disturbed = disturbedLaunchesText(result.interference);
        return (
          <tr key={r.id} data-testid="result-row">
            <td className="col-kernel">
              <KernelLink id={r.kernel} /> <RerunMarks result={result} /> <InterferenceBadge value={result.interference} />
              {disturbed && (
                <div className="small muted wrap-note" data-testid="result-disturbed">
                  {disturbed}
                </div>
              )}
            </td>
            <td className="small params-cell">{r.params}</td>
            <td>{r.unit}</td>
            <td className="num">{r.n}</td>
            <td className="num" title={r.figureTitle}>
              <span className="strong" data-testid="result-median">
                {r.figure}
              </span>
              <div className="muted small" data-testid="result-figure-stat">
                {r.figureStat}
              </div>
            </td>
            <td className="num" title={r.ciMethod ?? undefined}>
              {r.ci}
              {r.ciIsRange && <sup aria-label="sample range">†</sup>}
            </td>
            <td className="num">{r.mean}</td>
            <td className="num">{r.stddev}</td>
            <td className="num">{r.cv}</td>
            <td className="num">{r.min}</td>
            <td className="num">{r.max}</td>
            <td className="small counters-cell">
              <Counters row={r} />
            </td>
          </tr>
        );
      })}
    </DataTable>
  );
}
