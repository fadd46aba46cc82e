import { useRef, useState } from 'react';
import type { Machine } from '@/lib/api-types';

function UpgradeCommand({ command }: { command: string }) {
  const [copied, setCopied] = useState(false);
  const code = useRef<HTMLElement>(null);
  return (
    <>
      <pre className="code-block">
        <code ref={code} data-testid="upgrade-command">
          {command}
        </code>
      </pre>
      <button
        type="button"
        className="button"
        onClick={() => {
          // Without a secure context there is no clipboard API: the command is selected to copy by hand.
          const select = () => {
            if (code.current) window.getSelection()?.selectAllChildren(code.current);
          };
          try {
            navigator.clipboard.writeText(command).then(() => setCopied(true), select);
          } catch {
            select();
          }
        }}
      >
        {copied ? 'Copied' : 'Copy'}
      </button>
    </>
  );
}

/** A machine's "outdated" badge: its agent is older than the one this server offers (GET /machines). */
export function OutdatedBadge({ machine: m }: { machine: Machine }) {
  if (!m.agent_outdated) return null;
  return (
    <span className="badge badge-noisy" data-testid="agent-outdated" title={`agent ${m.agent_version || 'unknown'}; this server offers ${m.agent_offered_version ?? ''}`}>
      outdated
    </span>
  );
}

/** Above the machines: which hosts run an older agent than the server offers, and the one line that
 * upgrades one in place (run on each; the installer keeps its identity and settings). */
export function OutdatedAgents({ machines }: { machines: Machine[] }) {
  const old = machines.filter((m) => m.agent_outdated);
  if (old.length === 0) return null;
  const command = old.find((m) => m.upgrade_command)?.upgrade_command;
  const offered = [...new Set(old.map((m) => m.agent_offered_version).filter(Boolean))].join(', ');
  return (
    <section className="card" data-testid="outdated-agents" aria-labelledby="outdated-agents-title">
      <h2 id="outdated-agents-title">
        {old.length === 1 ? '1 host runs' : `${old.length} hosts run`} an older agent than this server offers ({offered})
      </h2>
      <p data-testid="outdated-hosts">
        {old.map((m, i) => (
          <span key={m.id}>
            {i > 0 && ', '}
            <strong>{m.name}</strong> <span className="muted small">({m.agent_version || 'unknown version'})</span>
          </span>
        ))}
      </p>
      {command ? (
        <>
          <p>Run this on each of them to upgrade its agent in place (it keeps the host&apos;s identity and settings; no token):</p>
          <UpgradeCommand command={command} />
        </>
      ) : (
        <p className="muted">The server has no installer to offer: run make dist on it.</p>
      )}
    </section>
  );
}
