import { expect, test } from './fixtures';
import { localMachine } from './runs';

// Issue 27 (the machines page left open): "last seen" ages on its own, without a reload or a new answer
// from the server. The page's clock is Playwright's, moved forward; the machine is run.sh's real agent.

test('the machines page ages "last seen" while it stays open (issue 27)', async ({ page, request }) => {
  const machine = await localMachine(request);
  await page.clock.install();
  await page.goto('/machines');
  const seen = page.locator(`[data-machine-id="${machine.id}"] time`).first();
  await expect(seen).toHaveText(/^(just now|\d+ s ago)$/);
  const first = await seen.textContent();
  await page.clock.fastForward('01:30');
  await expect(seen).toHaveText(/^\d+ min ago$/);
  console.log(`last seen: "${first}", then after 90 s of page clock: "${await seen.textContent()}"`);
});
