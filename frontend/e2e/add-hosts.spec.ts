import { expect, test } from './fixtures';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

// Issue 10: an admin creates a join token on "Add hosts", runs the command's agent with it, and sees
// the host appear online without reloading.
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

test('a join token from the Add hosts page enrolls a new host that shows up online', async ({ page }) => {
  await page.goto('/hosts');
  await expect(page.getByRole('heading', { name: 'Add hosts' })).toBeVisible();
  await page.getByRole('button', { name: 'Create join token' }).click();
  const command = (await page.getByTestId('install-command').locator('code').first().textContent()) ?? '';
  // The installer's SHA-256, or, on a server without bundles yet (a clean checkout: no `make dist`), a
  // placeholder that makes `sha256sum -c` refuse to run anything.
  expect(command).toMatch(
    /^f=\$\(mktemp\) && curl -fsSL http:\/\/\S+\/install-agent\.sh -o "\$f" && echo "([0-9a-f]{64}|<run make dist on the server>) {2}\$f" \| sha256sum -c - && printf '%s\\n' cxj_\S+ \| sh "\$f" --server \S+ --join-token-file - --ca-fingerprint sha256:[0-9a-f]{64}$/,
  );
  await expect(page.getByTestId('join-tokens').getByText('usable')).toBeVisible();

  // What the installer would do with that command: run the agent with the token in a 0600 file.
  const server = /--server (\S+)/.exec(command)![1];
  // The token goes to the installer on stdin (printf is a shell builtin: it is in no process's argv).
  const token = /printf '%s\\n' (cxj_\S+) \|/.exec(command)![1];
  const fingerprint = /--ca-fingerprint (\S+)/.exec(command)![1];
  const dir = mkdtempSync(join(tmpdir(), 'ctxbench-pw-host-'));
  writeFileSync(join(dir, 'join-token'), token + '\n', { mode: 0o600 });
  let agent: ChildProcess | undefined;
  try {
    agent = spawn(
      join(ROOT, 'build/bin/ctxbench-agent'),
      ['--server', server, '--join-token-file', join(dir, 'join-token'), '--ca-fingerprint', fingerprint,
        '--kernels', join(ROOT, 'build/kernels'), '--state-dir', join(dir, 'state'), '--name', 'pw-new-host'],
      { stdio: 'ignore' },
    );
    const row = page.getByTestId('host-row').filter({ hasText: 'pw-new-host' });
    await expect(row.getByText('online', { exact: true })).toBeVisible({ timeout: 30_000 });
    await expect(row.getByText('active', { exact: true })).toBeVisible();
    // The token's state cell (the column header says "used" too), refreshed when the host came online.
    await expect(page.getByTestId('join-tokens').getByRole('cell', { name: 'used', exact: true })).toBeVisible();

    page.once('dialog', (d) => void d.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await expect(row.getByText('revoked', { exact: true })).toBeVisible();
    await expect(row.getByText('offline', { exact: true })).toBeVisible({ timeout: 10_000 });
  } finally {
    agent?.kill('SIGTERM');
  }
});
