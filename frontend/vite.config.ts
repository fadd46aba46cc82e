/// <reference types="vitest/config" />
import { defineConfig, type Plugin } from 'vite';
import react from '@vitejs/plugin-react';
import { readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { brotliCompressSync, constants, gzipSync } from 'node:zlib';

// The server (FastAPI) serves the built explorer at `/`; in development Vite serves it and forwards
// the API and the OpenAPI docs to a server started with `make run` on its default port.
const apiTarget = process.env.CTXBENCH_API_URL ?? 'http://127.0.0.1:8080';

// Text files worth compressing; source maps too (a debugger fetches them whole).
const COMPRESSIBLE = /\.(js|mjs|css|html|svg|json|txt|map)$/;
const MIN_COMPRESS_BYTES = 1024;

/**
 * Writes `<file>.gz` and `<file>.br` beside each text file of the build, so the server sends a
 * compressed file as it is (frontend.py) instead of compressing on every request. A variant that saves
 * nothing is not written.
 */
function precompress(): Plugin {
  return {
    name: 'ctxbench-precompress',
    apply: 'build',
    writeBundle(options) {
      const walk = (dir: string): string[] =>
        readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
          e.isDirectory() ? walk(join(dir, e.name)) : [join(dir, e.name)],
        );
      if (!options.dir) return;
      for (const file of walk(options.dir)) {
        if (!COMPRESSIBLE.test(file) || statSync(file).size < MIN_COMPRESS_BYTES) continue;
        const raw = readFileSync(file);
        const variants: [string, Buffer][] = [
          ['.gz', gzipSync(raw, { level: 9 })],
          [
            '.br',
            brotliCompressSync(raw, {
              params: {
                [constants.BROTLI_PARAM_MODE]: constants.BROTLI_MODE_TEXT,
                // Source maps are large and rarely fetched: a faster setting for them.
                [constants.BROTLI_PARAM_QUALITY]: file.endsWith('.map') ? 5 : constants.BROTLI_MAX_QUALITY,
                [constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
              },
            }),
          ],
        ];
        for (const [suffix, packed] of variants) if (packed.length < raw.length) writeFileSync(file + suffix, packed);
      }
    },
  };
}

// Libraries in chunks of their own, named after them: a release that changes only the app leaves them
// cached, and the charts (Recharts with d3 and its state store) load only with a page that draws one.
// Higher priority is captured first, so a library's own dependencies on React stay in React's chunk.
const VENDOR_CHUNKS = [
  { name: 'react', test: /[\\/]node_modules[\\/](react|react-dom|scheduler)[\\/]/, priority: 40 },
  { name: 'router', test: /[\\/]node_modules[\\/]react-router[\\/]/, priority: 30 },
  { name: 'query', test: /[\\/]node_modules[\\/]@tanstack[\\/]/, priority: 20 },
  { name: 'charts', test: /[\\/]node_modules[\\/]/, priority: 10, entriesAware: true, entriesAwareMergeThreshold: 20_000 },
];

export default defineConfig({
  plugins: [react(), precompress()],
  resolve: {
    alias: { '@': fileURLToPath(new URL('./src', import.meta.url)) },
  },
  build: {
    outDir: '../build/frontend',
    emptyOutDir: true,
    sourcemap: true,
    rolldownOptions: {
      output: { codeSplitting: { groups: VENDOR_CHUNKS } },
    },
  },
  server: {
    proxy: {
      '/api': {
        target: apiTarget,
        changeOrigin: true,
        // The server refuses cookie writes from another origin (issue 9): the dev page's origin is
        // Vite's, so the proxy presents the server's own.
        configure: (proxy) => {
          proxy.on('proxyReq', (req) => {
            if (req.getHeader('origin')) req.setHeader('origin', new URL(apiTarget).origin);
          });
        },
      },
      '/docs': { target: apiTarget, changeOrigin: true },
      '/openapi.json': { target: apiTarget, changeOrigin: true },
    },
  },
  test: {
    include: ['src/**/*.test.{ts,tsx}'],
    environment: 'node',
  },
});
