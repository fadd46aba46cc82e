import type { Page } from './fixtures';

/** Brings Compare's sweep section into view: its charts (and their library) load as they come near. */
export async function showSweeps(page: Page): Promise<void> {
  await page.getByTestId('sweeps').first().scrollIntoViewIfNeeded();
}
