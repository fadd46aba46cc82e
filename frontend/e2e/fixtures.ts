import { test as base, expect, type Browser, type BrowserContext, type Page } from '@playwright/test';
import { ADMIN_TOKEN, SIGNED_OUT } from './credentials';

export { expect };
export type { APIRequestContext, Browser, BrowserContext, Page } from '@playwright/test';

/**
 * A CSP violation anywhere fails the test: the server sends `script-src 'self'; style-src 'self'`, so an
 * inline script or style the build lets in would break the page for real users. Chromium reports one
 * both as a `securitypolicyviolation` event (caught by an init script) and as a console error.
 */
export async function watchCsp(context: BrowserContext): Promise<string[]> {
  const violations: string[] = [];
  await context.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) => {
      console.error(`securitypolicyviolation: ${e.violatedDirective} blocked ${e.blockedURI || 'inline'} at ${e.sourceFile}:${e.lineNumber}`);
    });
  });
  const watch = (page: Page) =>
    page.on('console', (msg) => {
      const text = msg.text();
      if (msg.type() === 'error' && (text.includes('Content Security Policy') || text.startsWith('securitypolicyviolation'))) {
        violations.push(`${page.url()}: ${text}`);
      }
    });
  context.pages().forEach(watch);
  context.on('page', watch);
  return violations;
}

/** A context that has never signed in (config's storageState would otherwise sign it in as admin). */
export async function signedOutContext(browser: Browser): Promise<{ context: BrowserContext; violations: string[] }> {
  const context = await browser.newContext({ storageState: SIGNED_OUT });
  return { context, violations: await watchCsp(context) };
}

/** A page in a signed-out context of its own (close the context when done). */
export async function signedOutPage(browser: Browser): Promise<{ context: BrowserContext; page: Page; violations: string[] }> {
  const { context, violations } = await signedOutContext(browser);
  return { context, page: await context.newPage(), violations };
}

export const test = base.extend<{ cspViolations: string[] }>({
  // The API helpers speak for a script: the admin token as a Bearer header, no session cookie.
  request: async ({ playwright }, provide) => {
    const request = await playwright.request.newContext({ storageState: SIGNED_OUT, extraHTTPHeaders: { authorization: `Bearer ${ADMIN_TOKEN}` } });
    await provide(request);
    await request.dispose();
  },
  cspViolations: [
    async ({ context }, provide) => {
      const violations = await watchCsp(context);
      await provide(violations);
      expect(violations, 'Content Security Policy violations').toEqual([]);
    },
    { auto: true },
  ],
});
