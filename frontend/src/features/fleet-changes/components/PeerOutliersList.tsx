import { Link } from 'react-router';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { historyPath } from '@/features/history';
import { usePeers, type PeerOutlier } from '../api/fleet';
import { valueText, type FleetView } from '../utils/fleet';

function OutlierItem({ outlier: o }: { outlier: PeerOutlier }) {
  return (
    <li data-testid="peer-outlier" data-machine-id={o.machine_id}>
      <p>
        <span className="strong" data-testid="peer-summary">
          {o.summary}
        </span>{' '}
        <Link to={historyPath({ machine: o.machine_id, kernel: o.kernel, params: o.params_key })} data-testid="peer-history">
          History
        </Link>
      </p>
      {o.facts_differ.length > 0 && (
        <ul className="muted" data-testid="peer-facts">
          {o.facts_differ.map((f) => (
            <li key={f.fact} title={f.hint ?? undefined}>
              {f.fact}: {valueText(f.value)} here, {valueText(f.majority)} on {f.majority_count} of {f.reporting}
            </li>
          ))}
        </ul>
      )}
    </li>
  );
}

/** Machines far from their hardware class's latest figure for a point. */
export function PeerOutliersList({ view }: { view: FleetView }) {
  const peers = usePeers(view);
  if (peers.isPending) return <Loading what="the peer outliers" />;
  if (peers.isError) return <ErrorMessage title="Could not load the peer outliers:" error={peers.error} />;
  if (peers.data.outliers.length === 0)
    return (
      <p className="muted" data-testid="peer-outliers-none">
        No machine stands out from its hardware class ({peers.data.points} points had at least 3 peers to judge by).
      </p>
    );
  return (
    <ul className="fleet-list" data-testid="peer-outliers">
      {peers.data.outliers.map((o) => (
        <OutlierItem key={`${o.machine_id} ${o.kernel} ${o.params_key}`} outlier={o} />
      ))}
    </ul>
  );
}
