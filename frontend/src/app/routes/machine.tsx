import { Link, useParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { OnlineBadge } from '@/components/StatusBadge';
import { DateTime, RelativeTime } from '@/components/Time';
import { useMachine } from '@/features/machines/api/machine';
import { groupFacts } from '@/features/machines/utils/fact-groups';
import { useRuns } from '@/features/runs/api/runs';
import { RunsTable } from '@/features/runs/components/RunsTable';
import { ApiError } from '@/lib/api-client';
import { comparePath } from '@/lib/compare-query';
import { historyPath } from '@/features/history/utils/history';
import { newRunPath } from '@/lib/query-state';
import { useDocumentTitle } from './title';

/** One machine: its facts in full, grouped, and its run history. */
export function MachinePage() {
  const { id = '' } = useParams();
  const machine = useMachine(id);
  const runs = useRuns({ machine: id, status: null });
  useDocumentTitle(machine.data?.name ?? 'Machine');

  if (machine.isPending) return <Loading what="the machine" />;
  if (machine.isError) {
    if (machine.error instanceof ApiError && machine.error.isNotFound) {
      return (
        <EmptyState title="Machine not found">
          <p>
            No machine <code>{id}</code> has connected to this server. See the <Link to="/machines">machines</Link>.
          </p>
        </EmptyState>
      );
    }
    return <ErrorMessage title="Could not load the machine:" error={machine.error} />;
  }
  const m = machine.data;
  return (
    <>
      <div className="page-head">
        <h1>{m.name}</h1>
        <OnlineBadge online={m.online} />
        <span className="run-actions">
          <Link className="button button-primary" to={newRunPath({ machines: [m.id] })}>
            New run
          </Link>
          <Link className="button" to={comparePath({ ab: m.id })} data-testid="machine-ab">
            Compare its runs
          </Link>
          <Link className="button" to={historyPath({ machine: m.id })}>
            History
          </Link>
        </span>
      </div>
      <p className="lead">
        {m.hostname} · <code className="small">{m.id}</code> · last seen <RelativeTime value={m.last_seen} /> · first seen{' '}
        <DateTime value={m.first_seen} /> · {m.kernels.length} kernels{m.agent_version ? ` · agent ${m.agent_version}` : ''}
      </p>
      <h2>Facts</h2>
      <div className="fact-groups">
        {groupFacts(m.facts).map((g) => (
          <section key={g.title} className="fact-group" data-testid="fact-group">
            <h3>{g.title}</h3>
            <dl>
              {g.facts.map((f) => (
                <div key={f.key}>
                  <dt title={f.key}>{f.label}</dt>
                  <dd>{f.value}</dd>
                </div>
              ))}
            </dl>
          </section>
        ))}
      </div>
      <h2>Runs</h2>
      {runs.isPending && <Loading what="runs" />}
      {runs.isError && <ErrorMessage title="Could not load runs:" error={runs.error} />}
      {runs.data && (runs.data.length === 0 ? <p className="muted">No runs on this machine yet.</p> : <RunsTable runs={runs.data} machines={new Map([[m.id, m]])} />)}
    </>
  );
}

export default MachinePage;
