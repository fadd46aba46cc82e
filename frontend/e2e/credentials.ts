import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_HTTP_PORT, HTTP_PORT } from './ports';

// The browser tests' credential and the files the stack leaves for them, in one place (issue 9).

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
/** The stack's files and the test results: one directory per HTTP port, so two runs in one checkout
 * (moved with CTXBENCH_E2E_HTTP_PORT) never empty each other's data directory. */
export const E2E_DIR = resolve(ROOT, HTTP_PORT === DEFAULT_HTTP_PORT ? 'build/e2e-playwright' : `build/e2e-playwright-${HTTP_PORT}`);

/** Given to the server as CTXBENCH_ADMIN_TOKEN; the API helpers send it as `authorization: Bearer`. */
export const ADMIN_TOKEN = process.env.CTXBENCH_E2E_ADMIN_TOKEN ?? 'playwright-admin-token-3f9a1c07d2b84e6a';

/** The browser state the global setup signs in once with the admin token: the specs start signed in. */
export const ADMIN_STATE = resolve(E2E_DIR, 'admin-state.json');

/** run.sh's stdout, copied: the server prints its one-time sign-in link there, as a person sees it. */
export const RUN_LOG = resolve(E2E_DIR, 'run.log');

/** The stack's dist dir (no bundles: the specs that need some write them), inside its data dir, which
 * each start empties (CTXBENCH_RUN_FRESH). */
export const DIST_DIR = resolve(E2E_DIR, 'data/dist');

/** A browser context with no cookies: someone who has never signed in. */
export const SIGNED_OUT = { cookies: [], origins: [] };
