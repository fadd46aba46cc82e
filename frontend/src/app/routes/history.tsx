import { lazy, Suspense, useState } from 'react';
import { Link, useNavigate, useSearchParams } from 'react-router';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { Select } from '@/components/Form';
import { CHOOSE, machineOptions } from '@/components/options';
import { DateTime } from '@/components/Time';
import { useChanges, useHistory, useHistoryPoints, type FactChange, type History, type Step } from '@/features/history/api/history';
import { decodeHistoryQuery, factValue, historyPath, ruleText, stepText, type HistoryQuery } from '@/features/history/utils/history';
import { useMachines } from '@/features/machines/api/machines';
import { factLabel } from '@/lib/facts';
import { FIGURE_TITLE, figureOf, figureStat, figureStatText } from '@/lib/figure';
import { formatMeasure, formatNumber, formatPoint } from '@/lib/format';
import { runPath } from '@/lib/query-state';
import { useDocumentTitle } from './title';
import { paths } from '../paths';
import { DataTable } from '@/components/TableHead';

const HistoryChart = lazy(() => import('@/features/history/components/HistoryChart'));

const higherIsBetter = (unit: string) => /\/\s*s(ec(ond)?)?$/i.test(unit.trim());

function FactList({ facts }: { facts: FactChange[] }) {
  if (facts.length === 0) return <span className="muted">none</span>;
  return (
    <ul className="plain-list">
      {facts.map((f) => (
        <li key={f.fact} title={f.hint ?? undefined}>
          <span title={f.fact}>{factLabel(f.fact)}</span>: {factValue(f.before, f.fact)} → {factValue(f.after, f.fact)}
        </li>
      ))}
    </ul>
  );
}

function StepsTable({ steps, unit }: { steps: Step[]; unit: string }) {
  if (steps.length === 0) return <p className="muted">No step in this series: its runs agree within their noise.</p>;
  return (
    <DataTable
      columns={[
        'First run after',
        { label: 'Before → after', title: 'The median of the runs’ figures before the step and after it (up to 10 runs each)' },
        'Ratio [95 % CI]',
        'Verdict',
        'Facts that changed',
      ]}
      testId="history-steps"
    >
      {steps.map((s) => (
        <tr key={s.run_id} data-significant={s.significant}>
          <td>
            <Link to={runPath(s.run_id)}>
              <DateTime value={s.at} />
            </Link>
          </td>
          <td>
            {formatMeasure(s.before, unit)} → {formatMeasure(s.after, unit)}
          </td>
          <td>
            {formatNumber(s.ratio, 3)} [{formatNumber(s.ci_low, 3)}, {formatNumber(s.ci_high, 3)}]
            <div className="muted small">{stepText(s, higherIsBetter(unit))}</div>
          </td>
          <td>
            <strong>{s.significant ? 'Changed' : 'No change'}</strong>
            <div className="muted small">
              {ruleText(s.significance.rule, s.significance.busy)}; noise {formatNumber(s.significance.noise * 100, 2)} % (
              {s.significance.noise_source === 'runs' ? 'from the runs' : 'default floor'}), runs {s.significance.runs.join(' vs ')}
            </div>
          </td>
          <td>
            <FactList facts={s.facts_changed} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}

function SeriesView({ data }: { data: History }) {
  return (
    <>
      <p className="lead" data-testid="history-summary">
        {data.points.length} runs{data.truncated ? ' (the newest 200)' : ''} of <code>{data.kernel}</code>
        {data.params_key ? <> with <code>{formatPoint(data.params, data.params_key)}</code></> : null} on{' '}
        <Link to={paths.machine(data.machine.id)}>{data.machine.name}</Link>.{' '}
        {data.changes.filter((s) => s.significant).length} real change(s), {data.fact_changes.length} fact change(s).
      </p>
      <Suspense fallback={<Loading what="the chart" />}>
        <HistoryChart data={data} />
      </Suspense>
      <h2>Steps</h2>
      <p className="muted small">
        A step is real when the ratio of the runs after it to the runs before it has a 95 % CI outside this point’s run-to-run
        noise, the rule Compare uses. Candidates that fail it are listed with the reason.
      </p>
      <StepsTable steps={data.changes} unit={data.unit} />
      <h2>Runs</h2>
      <DataTable columns={['Run', { label: 'Figure', title: FIGURE_TITLE }, 'CI', 'Launches', 'Agent']} testId="history-points">
        {[...data.points].reverse().map((p) => (
          <tr key={p.result_id}>
            <td>
              <Link to={runPath(p.run_id)}>
                <DateTime value={p.at} />
              </Link>
            </td>
            <td>
              {formatMeasure(figureOf(p), p.unit)}{' '}
              <span className="muted small" title={figureStatText(figureStat(p))} data-testid="history-figure-stat">
                {figureStat(p)}
              </span>
            </td>
            <td className="muted">
              {p.ci_low !== null && p.ci_high !== null ? `${formatMeasure(p.ci_low, p.unit)} – ${formatMeasure(p.ci_high, p.unit)}` : '—'}
            </td>
            <td>{p.n_launches}</td>
            <td className="muted small">{p.agent_version ?? '—'}</td>
          </tr>
        ))}
      </DataTable>
    </>
  );
}

function Series({ query }: { query: HistoryQuery }) {
  const points = useHistoryPoints(query.machine, query.kernel);
  const only = points.data?.length === 1 ? points.data[0]!.params_key : null;
  const params = query.params ?? only;
  const history = useHistory(query.machine, query.kernel, params);
  if (points.isPending) return <Loading what="the kernel's points" />;
  if (points.isError) return <ErrorMessage title="Could not load the kernel's points:" error={points.error} />;
  if (points.data.length === 0) {
    return <p className="muted">No successful result of {query.kernel} on this machine yet: run it, then come back.</p>;
  }
  if (params === null) return <p className="muted">This kernel has {points.data.length} parameter points here: pick one above.</p>;
  if (history.isPending) return <Loading what="the history" />;
  if (history.isError) return <ErrorMessage title="Could not load the history:" error={history.error} />;
  return <SeriesView data={history.data} />;
}

function FleetChanges() {
  const [all, setAll] = useState(false);
  const changes = useChanges(all);
  return (
    <>
      <h2>Changes across the fleet</h2>
      <label className="field-inline">
        <input type="checkbox" checked={all} onChange={(e) => setAll(e.target.checked)} /> also steps that are not significant
      </label>
      {changes.isPending && <Loading what="changes" />}
      {changes.isError && <ErrorMessage title="Could not load changes:" error={changes.error} />}
      {changes.data &&
        (changes.data.changes.length === 0 ? (
          <p className="muted" data-testid="no-changes">
            No change detected: every kernel point with 4 or more runs has stayed within its noise.
          </p>
        ) : (
          <DataTable columns={['When', 'Machine', 'Kernel', 'Ratio [95 % CI]', 'Facts that changed']} testId="fleet-changes">
            {changes.data.changes.map((c) => (
              <tr key={`${c.machine_id}/${c.kernel}/${c.params_key}/${c.run_id}`}>
                <td>
                  <DateTime value={c.at} />
                </td>
                <td>{c.machine_name}</td>
                <td>
                  <Link to={historyPath({ machine: c.machine_id, kernel: c.kernel, params: c.params_key })}>
                    <code>{c.kernel}</code>
                  </Link>
                  {c.params_key && <div className="muted small">{formatPoint(c.params, c.params_key)}</div>}
                </td>
                <td>
                  {formatNumber(c.ratio, 3)} [{formatNumber(c.ci_low, 3)}, {formatNumber(c.ci_high, 3)}]
                  <div className="muted small">
                    {stepText(c, higherIsBetter(c.unit))}
                    {c.significant ? '' : ` · ${ruleText(c.significance.rule, c.significance.busy)}`}
                  </div>
                </td>
                <td>
                  <FactList facts={c.facts_changed} />
                </td>
              </tr>
            ))}
          </DataTable>
        ))}
      {changes.data?.more && <p className="muted small">Showing the newest 100.</p>}
    </>
  );
}

/** History: one kernel point over time on one machine, and the changes detected across the fleet. */
export function HistoryPage() {
  const [search] = useSearchParams();
  const query = decodeHistoryQuery(search);
  const navigate = useNavigate();
  const machines = useMachines();
  const points = useHistoryPoints(query.machine, query.kernel);
  useDocumentTitle(query.kernel ? `History of ${query.kernel}` : 'History');
  const go = (q: Partial<HistoryQuery>) => void navigate(historyPath({ ...query, ...q }));
  const machine = machines.data?.find((m) => m.id === query.machine);
  return (
    <>
      <div className="page-head">
        <h1>History</h1>
      </div>
      <p className="lead">A kernel point over time on one machine: when its cost really changed, and what changed on the machine then.</p>
      <div className="toolbar history-pickers">
        <label>
          Machine{' '}
          <Select
            value={query.machine}
            onChange={(e) => go({ machine: e.target.value, kernel: '', params: null })}
            data-testid="history-machine"
            options={[CHOOSE, ...machineOptions(machines.data ?? [])]}
          />
        </label>
        <label>
          Kernel{' '}
          <Select
            value={query.kernel}
            disabled={!machine}
            onChange={(e) => go({ kernel: e.target.value, params: null })}
            data-testid="history-kernel"
            options={[CHOOSE, ...(machine?.kernels ?? [])]}
          />
        </label>
        {points.data && points.data.length > 1 && (
          <label>
            Point{' '}
            <Select
              value={query.params ?? ''}
              onChange={(e) => go({ params: e.target.value })}
              data-testid="history-params"
              options={[...(query.params === null ? [CHOOSE] : []), ...points.data.map((p) => ({ value: p.params_key, label: `${formatPoint(p.params, p.params_key)} · ${p.runs} runs` }))]}
            />
          </label>
        )}
      </div>
      {query.machine && query.kernel ? <Series query={query} /> : <FleetChanges />}
    </>
  );
}

export default HistoryPage;
