import { AddHosts } from '@/features/hosts/components/AddHosts';
import { useDocumentTitle } from './title';

export default function HostsPage() {
  useDocumentTitle('Add hosts');
  return (
    <>
      <h1>Add hosts</h1>
      <p className="muted">
        A join token lets new hosts enroll once; each gets its own credential. Revoking a host disconnects it at once.
      </p>
      <AddHosts />
    </>
  );
}
