import { expect, test } from './fixtures';

// Issue 27 item 14, end to end: the explorer as `make run` serves it (Vite's build with its .gz and .br
// beside each asset, frontend.py choosing one): hashed assets cached for a year and compressed, the
// page itself revalidated. The headers' unit tests are server/tests/test_frontend.py.

test('the real build is served compressed, its hashed assets immutable, its pages revalidated (issue 27, 14)', async ({ request }) => {
  const page = await request.get('/compare', { headers: { 'accept-encoding': 'gzip, br' } });
  expect(page.status()).toBe(200);
  expect(page.headers()['cache-control']).toBe('no-cache');
  expect(page.headers()['etag']).toBeTruthy();
  const html = await page.text();
  const assets = [...html.matchAll(/(?:src|href)="(\/assets\/[^"]+\.(?:js|css))"/g)].map((m) => m[1]!);
  expect(assets.length, 'index.html names its entry script and stylesheet').toBeGreaterThanOrEqual(2);
  // Every script and stylesheet the page loads, the lazy ones too (module preloads name them).
  let compressed = 0;
  for (const path of assets) {
    const plain = await request.get(path, { headers: { 'accept-encoding': 'identity' } });
    const size = (await plain.body()).length;
    for (const [accept, coding] of [
      ['gzip, deflate, br', 'br'],
      ['gzip', 'gzip'],
    ] as const) {
      const r = await request.get(path, { headers: { 'accept-encoding': accept } });
      expect(r.status(), path).toBe(200);
      const h = r.headers();
      expect(h['cache-control'], path).toBe('public, max-age=31536000, immutable');
      // The build leaves files under 1 KiB as they are (vite.config.ts): nothing to gain.
      expect(h['content-encoding'], `${path} (${size} bytes) with ${accept}`).toBe(size < 1024 ? undefined : coding);
      if (size >= 1024) compressed++;
    }
  }
  expect(compressed, 'the entry chunk and the big vendor chunks are compressed').toBeGreaterThan(4);
});
