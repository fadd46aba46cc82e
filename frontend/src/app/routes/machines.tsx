import { Link, useSearchParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { useRecentRuns } from '@/features/machines/api/machine';
import { useMachines } from '@/features/machines/api/machines';
import { GettingStarted } from '@/features/machines/components/GettingStarted';
import { MachinesFilter } from '@/features/machines/components/MachinesFilter';
import { MachinesTable } from '@/features/machines/components/MachinesTable';
import { NoMachines } from '@/features/machines/components/NoMachines';
import { decodeMachinesView, encodeMachinesView, labelKeys } from '@/features/machines/utils/labels';
import { freshness } from '@/lib/freshness';
import { useDocumentTitle } from './title';
import { paths } from '../paths';

export function MachinesPage() {
  useDocumentTitle('Machines');
  const [searchParams, setSearchParams] = useSearchParams();
  const view = decodeMachinesView(searchParams);
  const machines = useMachines({ poll: true, selector: view.selector });
  const runs = useRecentRuns();
  const filtered = view.selector !== '';
  // From the first failed refresh (not after the retries): states shown as unknown, the error above them.
  const { problem, stale } = freshness(machines);
  const problemTitle = machines.data && stale
    ? `Could not refresh the machines: their states are unknown; the rest is as of ${new Date(machines.dataUpdatedAt).toLocaleTimeString()}.`
    : filtered
      ? 'Could not filter machines:'
      : 'Could not load machines:';
  return (
    <>
      <h1>Machines</h1>
      <p className="lead">The hosts whose agents have connected, with the facts that move OS-primitive costs.</p>
      {(filtered || (machines.data?.length ?? 0) > 0) && (
        <MachinesFilter view={view} labelKeys={labelKeys(machines.data ?? [])} onChange={(v) => setSearchParams(encodeMachinesView(v))} />
      )}
      {machines.isPending && !problem && <Loading what="machines" />}
      {problem !== null && <ErrorMessage title={problemTitle} error={problem} />}
      {machines.data && !filtered && machines.data.length > 0 && runs.data?.length === 0 && <GettingStarted machines={machines.data} />}
      {machines.data &&
        (stale || !machines.isError) &&
        (machines.data.length > 0 ? (
          <MachinesTable machines={machines.data} runs={runs.data} group={view.group} stale={stale} />
        ) : filtered ? (
          <EmptyState title="No machine matches">
            <p>
              No machine has labels matching <code>{view.selector}</code>. <Link to={paths.machines}>Show all machines</Link>.
            </p>
          </EmptyState>
        ) : (
          <NoMachines />
        ))}
    </>
  );
}

export default MachinesPage;
