import { expect, type Page } from './fixtures';

// The New run page as the specs drive it.

/** A kernel's row on the New run page: its checkbox, parameters and item count. */
export function kernelOption(page: Page, kernelId: string) {
  return page.getByTestId('kernel-option').filter({ has: page.getByRole('checkbox', { name: new RegExp(kernelId.replaceAll('.', '\\.')) }) });
}

/** Sweeps one parameter of a chosen kernel over custom values. */
export async function sweepCustom(page: Page, kernelId: string, param: string, values: string) {
  const option = kernelOption(page, kernelId);
  await option.getByLabel(`${param}: value or sweep`).selectOption('custom');
  await option.locator(`input[name="${param}"]`).fill(values);
}

/**
 * Sets the profile when one is given (its launches per item: quick's 3 against default's 7), repetitions
 * and min time, sees the item count when one is given, and starts: the run's page, or the batch's for
 * several machines.
 */
export async function startRuns(page: Page, settings: { profile?: 'quick' | 'default'; repetitions: string; minTime: string; items?: RegExp; machines?: number }) {
  if (settings.profile) await page.getByLabel('Profile').selectOption(settings.profile);
  await page.getByLabel('Repetitions').fill(settings.repetitions);
  await page.getByLabel(/Min time/).fill(settings.minTime);
  if (settings.items) await expect(page.getByTestId('item-count')).toHaveText(settings.items);
  const machines = settings.machines ?? 1;
  await page.getByRole('button', { name: machines > 1 ? `Start ${machines} runs` : 'Start run' }).click();
  await expect(page).toHaveURL(machines > 1 ? /\/batches\/[0-9a-f-]{36}$/ : /\/runs\/[0-9a-f-]{36}$/);
}
