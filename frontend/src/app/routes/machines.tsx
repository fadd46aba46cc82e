import { ErrorMessage, Loading } from '@/components/Feedback';
import { useRecentRuns } from '@/features/machines/api/machine';
import { useMachines } from '@/features/machines/api/machines';
import { GettingStarted } from '@/features/machines/components/GettingStarted';
import { MachinesTable } from '@/features/machines/components/MachinesTable';
import { NoMachines } from '@/features/machines/components/NoMachines';
import { useDocumentTitle } from './title';

export function MachinesPage() {
  useDocumentTitle('Machines');
  const machines = useMachines({ poll: true });
  const runs = useRecentRuns();
  return (
    <>
      <h1>Machines</h1>
      <p className="lead">The hosts whose agents have connected, with the facts that move OS-primitive costs.</p>
      {machines.isPending && <Loading what="machines" />}
      {machines.isError && <ErrorMessage title="Could not load machines:" error={machines.error} />}
      {machines.data && machines.data.length > 0 && runs.data?.length === 0 && <GettingStarted machines={machines.data} />}
      {machines.data && (machines.data.length === 0 ? <NoMachines /> : <MachinesTable machines={machines.data} runs={runs.data} />)}
    </>
  );
}

export default MachinesPage;
