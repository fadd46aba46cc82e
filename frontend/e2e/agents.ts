import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { E2E_DIR } from './credentials';
import { expect, type APIRequestContext } from './fixtures';
import { GRPC_TARGET } from './ports';

// More real agents beside run.sh's, for the specs that need a second machine (or one to delete).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * Starts a real agent named `name` on a fresh spool of its own (so its own machine id), and waits until
 * its machine is online (and is not `other`); the agent is stopped again when it never comes. `extra`:
 * more flags (`--label k=v`).
 */
export async function startAgent(request: APIRequestContext, name: string, other = '', extra: string[] = []): Promise<{ id: string; agent: ChildProcess }> {
  const spool = resolve(E2E_DIR, `spool-${name}`);
  rmSync(spool, { recursive: true, force: true });
  const agent = spawn(
    resolve(ROOT, 'build/bin/ctxbench-agent'),
    ['--server', GRPC_TARGET, '--token-file', resolve(E2E_DIR, 'data/agent-token'), '--ca-file', resolve(E2E_DIR, 'data/tls/ca.pem'), '--kernels', resolve(ROOT, 'build/kernels'), '--spool', spool, ...extra],
    { env: { ...process.env, CTXBENCH_AGENT_NAME: name }, stdio: 'ignore' },
  );
  let id = '';
  try {
    await expect
      .poll(
        async () => {
          const machines = (await (await request.get('/api/v1/machines')).json()) as { id: string; name: string; online: boolean }[];
          return (id = machines.find((m) => m.online && m.id !== other && m.name === name)?.id ?? '');
        },
        { timeout: 30_000, intervals: [250] },
      )
      .not.toBe('');
  } catch (e) {
    await stopAgent(agent); // never left behind, retrying against the next stack
    throw e;
  }
  return { id, agent };
}

/** Stops an agent and waits until it has gone (at most 5 s), so later tests see its machine offline. */
export async function stopAgent(agent: ChildProcess): Promise<void> {
  if (agent.exitCode !== null) return;
  const gone = new Promise((done) => agent.once('exit', done));
  agent.kill('SIGTERM');
  await Promise.race([gone, new Promise((done) => setTimeout(done, 5000))]);
}
