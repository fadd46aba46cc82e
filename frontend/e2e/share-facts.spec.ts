import { COMPARE_FIXTURE } from './compare-fixture';
import { expect, test } from './fixtures';
import { shot } from './screenshots';

// Issue 26: the sharer chooses which host facts a share shows anonymous viewers; by default what a
// comparison needs (no hostname, kernel command line or vulnerabilities). The server's answers are fixed
// here (tests/test_share_facts.py checks what the server keeps); this checks what the explorer sends
// and what the share page says.
const SLUG = 'FactsFixture0001';

test('the share box sends the facts chosen, and the share page names them', async ({ page }) => {
  let body: { view?: unknown; facts?: string[] } = {};
  await page.route('**/api/v1/compare?**', (route) => route.fulfill({ json: COMPARE_FIXTURE }));
  await page.route('**/api/v1/shares', (route) => {
    body = route.request().postDataJSON() as typeof body;
    return route.fulfill({ status: 201, json: { slug: SLUG, url: `/s/${SLUG}` } });
  });
  await page.route(`**/api/v1/shares/${SLUG}`, (route) =>
    route.fulfill({
      json: { view: body.view && { ...body.view, facts: body.facts }, result_ids: COMPARE_FIXTURE.result_ids, created_at: '2026-11-27T03:00:00', compare: COMPARE_FIXTURE },
    }),
  );

  await page.goto('/compare?machines=m-a,m-b&baseline=m-a');
  await expect(page.getByTestId('compare-row').first()).toBeVisible();
  const choice = page.getByTestId('share-facts');
  await expect(choice.locator('summary')).toHaveText('Facts shown: 8 of 19');
  await choice.locator('summary').click();
  await expect(choice.getByRole('checkbox', { name: 'CPU model' })).toBeChecked();
  await expect(choice.getByRole('checkbox', { name: 'hostname' })).not.toBeChecked();
  await expect(choice.getByRole('checkbox', { name: 'kernel command line' })).not.toBeChecked();
  await expect(choice.getByRole('checkbox', { name: 'CPU vulnerabilities' })).not.toBeChecked();

  // The default set first: it is what the server stores when the explorer sends nothing else.
  await page.getByRole('button', { name: 'Share' }).click();
  await expect(page.getByTestId('share-link')).toHaveValue(new RegExp(`/s/${SLUG}$`));
  expect(body.facts).toEqual(['cpu_model', 'arch', 'logical_cpus', 'physical_cores', 'smt_active', 'memory_bytes', 'kernel_release', 'virtualization']);

  // Another choice: the earlier link goes (it was made with other facts), the new one carries these.
  await choice.getByRole('checkbox', { name: 'kernel', exact: true }).uncheck();
  await choice.getByRole('checkbox', { name: 'CPU vulnerabilities' }).check();
  await expect(page.getByTestId('share-link')).toHaveCount(0);
  await expect(choice.locator('summary')).toHaveText('Facts shown: 8 of 19');
  await page.getByRole('button', { name: 'Share' }).click();
  await expect(page.getByTestId('share-link')).toBeVisible();
  await shot(page, 'share-facts.png');
  expect(body.facts).toEqual(['cpu_model', 'arch', 'logical_cpus', 'physical_cores', 'smt_active', 'memory_bytes', 'virtualization', 'vulnerabilities']);

  await page.goto(`/s/${SLUG}`);
  await expect(page.getByTestId('frozen-banner')).toBeVisible();
  await expect(page.getByTestId('share-facts-shown')).toContainText('This link shows only these host facts: CPU');
  await expect(page.getByRole('button', { name: 'Share' })).toHaveCount(0);
});
