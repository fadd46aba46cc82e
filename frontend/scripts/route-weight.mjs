// The JS a page of the built explorer makes the browser fetch: the entry chunk, the route's module and
// everything they import statically (before the page draws), then, for each chunk the page's own code
// imports lazily (charts), what that adds. Sizes raw, gzipped (level 9) and brotli (quality 11): the
// server sends the build's precompressed files as they are.
//
//   node scripts/route-weight.mjs [build dir] [route module ...]
//   defaults: ../build/frontend src/app/routes/compare.tsx
// Reads the build's manifest: build with `npx vite build --manifest`.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';

const [dir = '../build/frontend', ...routes] = process.argv.slice(2);
const manifest = JSON.parse(readFileSync(join(dir, '.vite/manifest.json'), 'utf8'));
const entry = Object.keys(manifest).find((k) => manifest[k].isEntry);
const sizes = new Map();
function size(key) {
  const file = manifest[key].file;
  if (!sizes.has(file)) {
    const raw = readFileSync(join(dir, file));
    sizes.set(file, { raw: raw.length, gz: gzipSync(raw, { level: 9 }).length, br: brotliCompressSync(raw).length });
  }
  return sizes.get(file);
}

// Chunks reachable from `keys` through static imports (and lazy ones with `lazy`), not entering `stop`:
// what is loaded already, or the entry, whose lazy imports are the other pages.
function reach(keys, lazy, stop) {
  const seen = new Set();
  const walk = (k) => {
    if (seen.has(k) || stop.has(k)) return;
    seen.add(k);
    for (const i of manifest[k].imports ?? []) walk(i);
    if (lazy) for (const i of manifest[k].dynamicImports ?? []) walk(i);
  };
  keys.forEach(walk);
  return seen;
}

const kb = (n) => `${(n / 1024).toFixed(1)} KB`;
function report(label, keys) {
  const t = [...keys].map(size).reduce((a, s) => ({ raw: a.raw + s.raw, gz: a.gz + s.gz, br: a.br + s.br }), { raw: 0, gz: 0, br: 0 });
  console.log(`  ${label}: ${keys.size} JS files, ${kb(t.raw)}, gzip ${kb(t.gz)}, brotli ${kb(t.br)}`);
}

for (const route of routes.length ? routes : ['src/app/routes/compare.tsx']) {
  if (!manifest[route]) throw new Error(`${route}: not in ${dir}/.vite/manifest.json`);
  console.log(route);
  const first = reach([entry, route], false, new Set());
  report('first load (entry + route)', first);
  const own = reach([route], false, new Set([entry]));
  const lazy = [...new Set([...own].flatMap((k) => manifest[k].dynamicImports ?? []))];
  const everything = new Set(first);
  for (const d of lazy) {
    const more = reach([d], true, first);
    more.forEach((k) => everything.add(k));
    report(`first load + ${manifest[d].name ?? d}`, new Set([...first, ...more]));
  }
  if (lazy.length > 1) report('first load + all of its lazy chunks', everything);
  for (const k of [...everything].sort((a, b) => size(b).gz - size(a).gz)) {
    console.log(`    ${kb(size(k).gz).padStart(9)} gz  ${manifest[k].file}${first.has(k) ? '' : ' (lazy)'}`);
  }
}
