import { ErrorMessage, Loading } from '@/components/Feedback';
import { AddHosts, HostsTable } from '@/features/hosts/components/AddHosts';
import { useMachines } from '@/features/machines/api/machines';
import { useDocumentTitle } from './title';

export default function HostsPage() {
  useDocumentTitle('Add hosts');
  const machines = useMachines({ poll: true });
  return (
    <>
      <h1>Add hosts</h1>
      <p className="muted">
        A join token lets new hosts enroll once; each gets its own credential. Revoking a host disconnects it at once.
      </p>
      <AddHosts />
      <h2>Hosts</h2>
      {machines.isPending ? (
        <Loading what="machines" />
      ) : machines.error ? (
        <ErrorMessage error={machines.error} />
      ) : (
        <HostsTable machines={machines.data} />
      )}
    </>
  );
}
