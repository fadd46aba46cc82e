import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DIST_DIR } from './credentials';
import { expect, test } from './fixtures';
import { localMachine } from './runs';
import { shot } from './screenshots';

// Issue 26 item 10: the machines page shows which hosts run an older agent than the server offers, and
// the command that upgrades them. The stack's dist dir gets an installer and a SHA256SUMS as `make dist`
// writes them (oldest first): first with the local agent's own version as the newest, then with a newer
// bundle after it, so the real agent reports an older version than the one offered.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

function writeSums(arch: string, versions: string[]): void {
  const lines = versions.map((v) => `${'a'.repeat(64)}  ctxbench-agent-${v}-linux-${arch}.tar.gz\n`);
  writeFileSync(join(DIST_DIR, 'SHA256SUMS'), lines.join(''));
}

test.afterEach(() => {
  rmSync(DIST_DIR, { recursive: true, force: true }); // the other specs see a server without bundles
});

test('a host whose agent is older than the offered one shows "outdated" and its upgrade command', async ({ page, request }) => {
  const local = await localMachine(request);
  const m = (await (await request.get(`/api/v1/machines/${local.id}`)).json()) as { agent_version: string; facts: { arch: string } };
  expect(m.agent_version).not.toBe('');
  mkdirSync(DIST_DIR, { recursive: true });
  copyFileSync(join(ROOT, 'deploy/install-agent.sh'), join(DIST_DIR, 'install-agent.sh'));

  // Its own version is the newest offered: nothing to upgrade.
  writeSums(m.facts.arch, ['0.0.1+e2e0old', m.agent_version]);
  await page.goto('/machines');
  const row = page.locator(`[data-testid="machine-row"][data-machine-id="${local.id}"]`);
  await expect(row.getByTestId('machine-online')).toHaveText('online');
  await expect(row.getByTestId('agent-outdated')).toHaveCount(0);
  await expect(page.getByTestId('outdated-agents')).toHaveCount(0);

  // A newer bundle is offered after it: the host is outdated, and the page says how to upgrade it.
  const offered = `${m.agent_version}.e2enew`;
  writeSums(m.facts.arch, [m.agent_version, offered]);
  await page.reload();
  await expect(row.getByTestId('agent-outdated')).toHaveText('outdated');
  await expect(row.getByTestId('agent-outdated')).toHaveAttribute('title', `agent ${m.agent_version}; this server offers ${offered}`);
  const panel = page.getByTestId('outdated-agents');
  await expect(panel.getByRole('heading')).toContainText(`an older agent than this server offers (${offered})`);
  await expect(panel.getByTestId('outdated-hosts')).toContainText(`${local.name} (${m.agent_version})`);

  // The command checks the installer exactly as the server serves it, and carries no token.
  const served = await (await request.get('/install-agent.sh')).text();
  const sha = createHash('sha256').update(served).digest('hex');
  const command = (await panel.getByTestId('upgrade-command').textContent()) ?? '';
  expect(command).toMatch(/^f=\$\(mktemp\) && curl -fsSL http:\/\/\S+\/install-agent\.sh -o "\$f" && echo "[0-9a-f]{64} {2}\$f" \| sha256sum -c - && sh "\$f"$/);
  expect(command).toContain(`echo "${sha}  $f"`);
  await shot(page, 'machines-outdated.png');
});
