import { Link } from 'react-router';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { DateTime } from '@/components/Time';
import { historyPath } from '@/features/history';
import { useFleetChanges, type FleetChange } from '../api/fleet';
import { percentText, valueText, type FleetView } from '../utils/fleet';

/** One fleet change: its sentence, then each host as a link to its series in History. */
function ChangeItem({ change }: { change: FleetChange }) {
  const series = (machine: string) => historyPath({ machine, kernel: change.kernel, params: change.params_key });
  return (
    <li className="fleet-change" data-testid="fleet-change" data-change-id={change.id}>
      <p data-testid="fleet-change-summary">
        <span className="strong">{change.summary}</span>
      </p>
      <p className="muted">
        <DateTime value={change.first_at} />
        {change.last_at !== change.first_at && (
          <>
            {' '}
            to <DateTime value={change.last_at} />
          </>
        )}
      </p>
      <p>
        Stepped:{' '}
        {change.hosts.map((h, i) => (
          <span key={h.machine_id}>
            {i > 0 && ', '}
            <Link to={series(h.machine_id)} data-testid="fleet-host-link" title={h.facts_changed.map((f) => `${f.fact}: ${valueText(f.before)} → ${valueText(f.after)}`).join('; ')}>
              {h.machine_name}
            </Link>{' '}
            <span className="muted">{percentText(h.ratio)}</span>
          </span>
        ))}
      </p>
      {change.others.length > 0 && (
        <p>
          Did not step:{' '}
          {change.others.map((o, i) => (
            <span key={o.machine_id}>
              {i > 0 && ', '}
              <Link to={series(o.machine_id)} data-testid="fleet-other-link">
                {o.machine_name}
              </Link>
              {Object.entries(o.facts).length > 0 && <span className="muted"> ({Object.entries(o.facts).map(([k, v]) => `${k} ${valueText(v)}`).join(', ')})</span>}
            </span>
          ))}
        </p>
      )}
    </li>
  );
}

/** The fleet changes of the view's range, newest first, a page at a time. */
export function FleetChangesList({ view, now }: { view: FleetView; now: Date }) {
  const changes = useFleetChanges(view, now);
  if (changes.isPending) return <Loading what="the fleet changes" />;
  if (changes.isError) return <ErrorMessage title="Could not load the fleet changes:" error={changes.error} />;
  const all = changes.data.pages.flatMap((p) => p.fleet_changes);
  const truncated = changes.data.pages[0]?.truncated;
  return (
    <>
      {all.length === 0 ? (
        <p className="muted" data-testid="fleet-changes-none">
          No kernel point stepped on several hosts together in this range.
        </p>
      ) : (
        <ol className="fleet-list" data-testid="fleet-changes-list">
          {all.map((c) => (
            <ChangeItem key={c.id} change={c} />
          ))}
        </ol>
      )}
      {truncated && <p className="muted">More series were measured in this range than one read looks at: narrow it by kernel.</p>}
      {changes.hasNextPage && (
        <button type="button" className="button" disabled={changes.isFetchingNextPage} onClick={() => void changes.fetchNextPage()}>
          More
        </button>
      )}
    </>
  );
}
