import { EmptyState } from '@/components/Feedback';

/** What to do when no agent has connected yet. */
export function NoMachines() {
  return (
    <EmptyState title="No machines yet">
      <p>
        A machine appears here when a ctxbench agent connects to this server. To measure this computer, start the
        server together with a local agent:
      </p>
      <pre>make run</pre>
      <p>To measure another host, copy the agent there and point it at this server's gRPC port with its token:</p>
      <pre>ctxbench-agent --server HOST:50051 --token TOKEN</pre>
      <p className="muted small">
        The token is in the server's data directory (<code>data/agent-token</code> by default). The page refreshes
        by itself.
      </p>
    </EmptyState>
  );
}
