// A full-page screenshot of one explorer page on a running server, signed in with a token, in Debian's
// Chromium: `node scripts/shoot.mjs <base url> <path and query> <png> [test id to wait for]`.
// The token comes from the environment (CTXBENCH_TOKEN), never argv. Used by `make bench` (scripts/bench_aa.py)
// to redo the README's compare screenshot from a real A/A comparison.
import { chromium } from 'playwright-core';

const [base, path, out, waitFor] = process.argv.slice(2);
const token = process.env.CTXBENCH_TOKEN;
if (!base || !path || !out || !token) {
  console.error('usage: CTXBENCH_TOKEN=… node scripts/shoot.mjs <base url> <path> <png> [test id]');
  process.exit(2);
}
const browser = await chromium.launch({ executablePath: '/usr/bin/chromium', args: ['--no-sandbox', '--headless'] });
try {
  const context = await browser.newContext({ baseURL: base, viewport: { width: 1600, height: 900 } });
  const res = await context.request.post('/api/v1/session', { data: { token } });
  if (res.status() !== 200) throw new Error(`sign-in answered ${res.status()}`);
  const page = await context.newPage();
  await page.goto(path);
  if (waitFor) await page.getByTestId(waitFor).first().waitFor({ timeout: 30_000 });
  await page.waitForLoadState('networkidle');
  // What loads as it comes into view (Compare's sweep charts): through the page once, then back up.
  await page.evaluate(async () => {
    for (let y = 0; y < document.documentElement.scrollHeight; y += window.innerHeight / 2) {
      window.scrollTo(0, y);
      await new Promise((done) => setTimeout(done, 100));
    }
    window.scrollTo(0, 0);
  });
  await page.waitForLoadState('networkidle');
  await page.screenshot({ path: out, fullPage: true });
} finally {
  await browser.close();
}
