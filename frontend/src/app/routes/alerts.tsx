import { useState } from 'react';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { Select } from '@/components/Form';
import { useSession } from '@/features/auth/api/session';
import { useAlerts, type AlertState } from '@/features/alerts/api/alerts';
import { AlertsTable } from '@/features/alerts/components/AlertsTable';
import { WebhooksSection } from '@/features/alerts/components/WebhooksSection';
import { useDocumentTitle } from './title';

const STATES = [
  { value: 'open', label: 'Open' },
  { value: 'acknowledged', label: 'Acknowledged' },
  { value: 'resolved', label: 'Resolved' },
  { value: '', label: 'All' },
] as const;

/** /alerts: significant steps in series (History's rule), with what changed on the host around each. */
export function AlertsPage() {
  useDocumentTitle('Alerts');
  const [state, setState] = useState<AlertState | ''>('open');
  const alerts = useAlerts(state || null);
  const isAdmin = useSession().data?.scope === 'admin';
  return (
    <>
      <h1>Alerts</h1>
      <p className="lead">
        A series whose cost stepped up or down for good (the same rule as History and Compare) opens one alert, with the facts that changed on that host around
        the step. Acknowledge it while you look, resolve it when it is explained.
      </p>
      <label>
        Show <Select aria-label="Alert state" value={state} onChange={(e) => setState(e.target.value as AlertState | '')} options={STATES} />
      </label>
      {alerts.isPending && <Loading what="the alerts" />}
      {alerts.isError && <ErrorMessage title="Could not load the alerts:" error={alerts.error} />}
      {alerts.data && (alerts.data.length === 0 ? <p className="muted" data-testid="alerts-none">No alerts here.</p> : <AlertsTable alerts={alerts.data} />)}
      {isAdmin && <WebhooksSection />}
    </>
  );
}

export default AlertsPage;
