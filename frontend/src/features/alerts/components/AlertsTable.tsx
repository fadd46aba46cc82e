import { Link } from 'react-router';
import { ErrorMessage } from '@/components/Feedback';
import { DataTable } from '@/components/TableHead';
import { unseen } from '@/components/table-columns';
import { DateTime } from '@/components/Time';
import { formatNumber, formatPoint } from '@/lib/format';
import { historyPath } from '@/features/history';
import { useMoveAlert, type Alert } from '../api/alerts';
import { actionsFor, changeText, ciText, factText } from '../utils/alerts';

const LABEL = { ack: 'Acknowledge', resolve: 'Resolve' } as const;

function Actions({ alert }: { alert: Alert }) {
  const move = useMoveAlert();
  return (
    <>
      {actionsFor(alert.state).map((to) => (
        <button
          key={to}
          type="button"
          className="button button-small"
          data-testid={`alert-${to}`}
          disabled={move.isPending}
          onClick={() => move.mutate({ id: alert.id, to })}
        >
          {LABEL[to]}
        </button>
      ))}
      {move.isError && <ErrorMessage title="Could not change the alert:" error={move.error} />}
    </>
  );
}

function Who({ alert }: { alert: Alert }) {
  if (alert.state === 'resolved')
    return (
      <>
        resolved by {alert.resolved_by} <DateTime value={alert.resolved_at} />
      </>
    );
  if (alert.state === 'acknowledged')
    return (
      <>
        acknowledged by {alert.acknowledged_by} <DateTime value={alert.acknowledged_at} />
      </>
    );
  return <>open</>;
}

export function AlertsTable({ alerts }: { alerts: Alert[] }) {
  return (
    <DataTable columns={['Series', 'Change', 'Around the step', 'Since', 'State', unseen('Actions')]} testId="alerts-table">
      {alerts.map((a) => (
        <tr key={a.id} data-testid="alert-row" data-alert-id={a.id} data-state={a.state}>
          <td>
            <Link to={historyPath({ machine: a.machine_id, kernel: a.kernel, params: a.params_key })} data-testid="alert-history">
              <span className="strong">{a.kernel}</span>
              {a.params_key && <span className="muted"> {formatPoint(null, a.params_key)}</span>} on {a.machine_name}
            </Link>
          </td>
          <td title={`${formatNumber(a.before, 4)} → ${formatNumber(a.after, 4)} ${a.unit}; ${a.significance.rule}, noise ${(a.significance.noise * 100).toFixed(1)} %`}>
            <span className="strong">{changeText(a.ratio)}</span> <span className="muted">({ciText(a.ci_low, a.ci_high, a.significance.ci_level)})</span>
          </td>
          <td data-testid="alert-facts">
            {a.facts_changed.length === 0 ? <span className="muted">no fact changed</span> : a.facts_changed.map((f) => <div key={f.fact}>{factText(f)}</div>)}
          </td>
          <td>
            <DateTime value={a.at} />
          </td>
          <td data-testid="alert-state">
            <Who alert={a} />
          </td>
          <td>
            <Actions alert={a} />
          </td>
        </tr>
      ))}
    </DataTable>
  );
}
