import { EmptyState } from '@/components/Feedback';
import { AddHostLink } from './AddHostLink';

/** What to do when no agent has connected yet: add a host, or start the local one. */
export function NoMachines() {
  return (
    <EmptyState title="No machines yet">
      <p>A machine appears here when a ctxbench agent connects to this server. Next:</p>
      <p>
        <AddHostLink primary>create a join token and run the one-line installer it gives on the host.</AddHostLink>
      </p>
      <p>To measure this computer instead, start the server together with a local agent:</p>
      <pre>make run</pre>
      <p className="muted small">The page refreshes by itself; then start a run from the machine&apos;s row.</p>
    </EmptyState>
  );
}
