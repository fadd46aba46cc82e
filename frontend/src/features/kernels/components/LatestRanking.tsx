import { lazy, Suspense, useState } from 'react';
import { Link } from 'react-router';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { Select } from '@/components/Form';
import { RelativeTime } from '@/components/Time';
import { historyPath } from '@/features/history';
import { FIGURE_TITLE, figureOf, figureStat, figureStatText } from '@/lib/figure';
import { formatMeasure, formatNumber, formatPoint } from '@/lib/format';
import { runPath } from '@/lib/query-state';
import { useKernelLatest, versusBest } from '../api/latest';
import { paths } from '@/app/paths';
import { DataTable } from '@/components/TableHead';
import { num } from '@/components/table-columns';

const RankedChart = lazy(() => import('./RankedChart'));

/** The kernel's latest result on every machine, per parameter point, best first, with a chart. */
export function LatestRanking({ kernelId }: { kernelId: string }) {
  const latest = useKernelLatest(kernelId);
  const [pick, setPick] = useState<string | null>(null);
  if (latest.isPending) return <Loading what="results" />;
  if (latest.isError) return <ErrorMessage title="Could not load results:" error={latest.error} />;
  if (latest.data.length === 0) {
    return (
      <p className="muted" data-testid="ranking-empty">
        No machine has measured it yet: start a run from <Link to={paths.newRun}>New run</Link>.
      </p>
    );
  }
  const point = latest.data.find((p) => p.params_key === pick) ?? latest.data[0]!;
  const vs = versusBest(point);
  return (
    <section data-testid="kernel-ranking">
      {latest.data.length > 1 && (
        <label className="field-inline">
          Point{' '}
          <Select
            value={point.params_key}
            onChange={(e) => setPick(e.target.value)}
            data-testid="ranking-point"
            options={latest.data.map((p) => ({ value: p.params_key, label: `${formatPoint(p.params, p.params_key)} · ${p.results.length} machines` }))}
          />
        </label>
      )}
      <Suspense fallback={<Loading what="the chart" />}>
        <RankedChart kernel={kernelId} point={point} />
      </Suspense>
      <DataTable columns={['#', 'Machine', num('Figure', FIGURE_TITLE), num('CI'), num('vs best'), 'Measured']} testId="ranking-table">
        {point.results.map((r, i) => (
          <tr key={r.machine_id} data-testid="ranking-row">
            <td>{i + 1}</td>
            <td>
              <Link to={paths.machine(r.machine_id)}>{r.machine_name}</Link>{' '}
              <Link className="small" to={historyPath({ machine: r.machine_id, kernel: kernelId, params: point.params_key })}>
                history
              </Link>
            </td>
            <td className="num">
              {formatMeasure(figureOf(r), r.unit)}{' '}
              <span className="muted small" title={figureStatText(figureStat(r))} data-testid="ranking-figure-stat">
                {figureStat(r)}
              </span>
            </td>
            <td className="num muted">
              {r.ci_low !== null && r.ci_high !== null ? `${formatMeasure(r.ci_low, r.unit)} – ${formatMeasure(r.ci_high, r.unit)}` : '—'}
            </td>
            <td className="num">{vs[i] === null ? '—' : `×${formatNumber(vs[i], 3)}`}</td>
            <td>
              <Link to={runPath(r.run_id)}>
                <RelativeTime value={r.at} />
              </Link>
            </td>
          </tr>
        ))}
      </DataTable>
      <p className="muted small">
        Each machine’s latest successful result of this point; {point.higher_is_better ? 'higher' : 'lower'} is better. To test a
        difference, compare the machines: a ratio there comes with its CI and the rule that decides.
      </p>
    </section>
  );
}
