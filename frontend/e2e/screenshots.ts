import { mkdirSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Page } from './fixtures';
import type { Locator } from '@playwright/test';

// Full-page screenshots of what the specs just checked, under build/screenshots (the README's images in
// docs/images are copied from there by hand when a page changes).
const SCREENSHOTS = resolve(dirname(fileURLToPath(import.meta.url)), '../../build/screenshots');

export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: resolve(SCREENSHOTS, name), fullPage: true });
}

/** One element's screenshot (where a full-page one would disturb the page). */
export async function shotOf(element: Locator, name: string): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  await element.screenshot({ path: resolve(SCREENSHOTS, name) });
}
