import { Link, useParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading, QueryFallback } from '@/components/Feedback';
import { OnlineBadge } from '@/components/StatusBadge';
import { freshness } from '@/lib/freshness';
import { DateTime, RelativeTime } from '@/components/Time';
import { useCanWrite, useSession } from '@/features/auth/api/session';
import { useDeleteMachine, useMachine } from '@/features/machines/api/machine';
import { EditLabels } from '@/features/machines/components/EditLabels';
import { LabelChips } from '@/features/machines/components/LabelChips';
import { RenameMachine } from '@/features/machines/components/RenameMachine';
import { groupFacts } from '@/features/machines/utils/fact-groups';
import { useRuns } from '@/features/runs/api/runs';
import { RunsTable } from '@/features/runs/components/RunsTable';
import type { Machine } from '@/lib/api-types';
import { comparePath } from '@/lib/compare-query';
import { historyPath } from '@/features/history/utils/history';
import { newRunPath } from '@/lib/query-state';
import { Housekeeping } from './housekeeping';
import { useDocumentTitle } from './title';
import { paths } from '../paths';

/** The machine's facts in full, in groups. */
function FactGroups({ facts }: { facts: Machine['facts'] }) {
  return (
    <div className="fact-groups">
      {groupFacts(facts).map((g) => (
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
  );
}

/** Delete the machine with its runs and results (admins only), once it is offline and idle. */
function MachineHousekeeping({ id, machine: m, busy }: { id: string; machine: Machine; busy: number }) {
  const remove = useDeleteMachine(id);
  return (
    <Housekeeping
      remove={remove}
      then={paths.machines}
      label="Delete machine"
      consequence={`Delete ${m.name} with all its runs and results? Its agent must enroll again to come back, as a new machine. This cannot be undone.`}
      typeToConfirm={m.name}
      disabledReason={
        m.online
          ? 'Its agent is connected: stop the agent, or revoke the machine on Add hosts, first.'
          : busy > 0
            ? `Cancel its ${busy} queued or running ${busy === 1 ? 'run' : 'runs'} first.`
            : null
      }
      testId="delete-machine"
    >
      <span className="muted small">Admins only: the machine, its runs and results go; shared comparisons keep their frozen numbers.</span>
    </Housekeeping>
  );
}

/** One machine: its facts in full, grouped, and its run history. */
export function MachinePage() {
  const { id = '' } = useParams();
  const machine = useMachine(id);
  const runs = useRuns({ machine: id, status: null });
  const isAdmin = useSession().data?.scope === 'admin';
  const canWrite = useCanWrite();
  useDocumentTitle(machine.data?.name ?? 'Machine');

  if (!machine.isSuccess) {
    const notFound = (
      <EmptyState title="Machine not found">
        <p>
          No machine <code>{id}</code> is on this server (it may have been deleted). See the <Link to={paths.machines}>machines</Link>.
        </p>
      </EmptyState>
    );
    return <QueryFallback query={machine} what="the machine" notFound={notFound} />;
  }
  const m = machine.data;
  const busy = (runs.data ?? []).filter((r) => r.status === 'queued' || r.status === 'running').length;
  return (
    <>
      <div className="page-head">
        <h1 data-testid="machine-name">{m.name}</h1>
        <OnlineBadge online={m.online} stale={freshness(machine).stale} />
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
          {canWrite && <RenameMachine key={m.name} machine={m} />}
          {isAdmin && <EditLabels key={JSON.stringify(m.admin_labels)} machine={m} />}
        </span>
      </div>
      <p className="lead">
        {m.display_name && m.agent_name && m.agent_name !== m.display_name ? <>its agent calls it {m.agent_name} · </> : null}
        {m.hostname} · <code className="small">{m.id}</code> · last seen <RelativeTime value={m.last_seen} /> · first seen{' '}
        <DateTime value={m.first_seen} /> · {m.kernels.length} kernels{m.agent_version ? ` · agent ${m.agent_version}` : ''}
      </p>
      <div className="machine-labels" data-testid="machine-labels">
        {m.hardware_class && (
          <span className="small" title="machines of one hardware class (CPU model, CPUs, memory, kernel) are peers" data-testid="hardware-class">
            {m.hardware_class}
          </span>
        )}
        <LabelChips machine={m} />
      </div>
      <h2>Facts</h2>
      <FactGroups facts={m.facts} />
      <h2>Runs</h2>
      {runs.isPending && <Loading what="runs" />}
      {runs.isError && <ErrorMessage title="Could not load runs:" error={runs.error} />}
      {runs.data && (runs.data.length === 0 ? <p className="muted">No runs on this machine yet.</p> : <RunsTable runs={runs.data} machines={new Map([[m.id, m]])} />)}
      {isAdmin && <MachineHousekeeping id={id} machine={m} busy={busy} />}
    </>
  );
}

export default MachinePage;
