import { Link } from 'react-router';
import { paths } from '@/app/paths';
import { useAlertCounts } from '../api/alerts';
import { badgeText } from '../utils/alerts';

/** The header's "Alerts" link, with the count of open alerts when there are any. */
export function AlertBadge({ enabled, className }: { enabled: boolean; className: string }) {
  const counts = useAlertCounts(enabled);
  const text = badgeText(counts.data?.open);
  return (
    <Link to={paths.alerts} className={className} data-testid="alerts-link">
      Alerts
      {text && (
        <span className="badge badge-failed alert-badge" data-testid="alerts-badge" aria-label={`${counts.data?.open} open`}>
          {text}
        </span>
      )}
    </Link>
  );
}
