// Where a signed-out browser goes, and where it comes back to: pure functions over addresses, so the
// redirect rules (no open redirects, the open pages stay open) are tested without a browser.
import { paths } from '@/app/paths';

export const SIGN_IN_PATH = paths.signIn;

/** Pages that work without signing in: the sign-in page itself and shared comparisons (/s/<slug>). */
export function isOpenPath(pathname: string): boolean {
  return pathname === SIGN_IN_PATH || pathname.startsWith(`${SIGN_IN_PATH}/`) || pathname.startsWith(paths.share(''));
}

/**
 * The `next` address if it is a path on this site, else "/". Refused: absolute URLs, protocol-relative
 * `//host` and `/\host` (browsers read both as another host), and the sign-in page itself (a loop).
 */
export function safeNext(raw: string | null | undefined): string {
  if (!raw || !raw.startsWith('/') || raw.startsWith('//') || raw.startsWith('/\\')) return '/';
  // Control characters (a tab or newline inside "/\t/evil") are dropped by URL parsers: refuse them.
  if ([...raw].some((c) => c.charCodeAt(0) < 0x20 || c.charCodeAt(0) === 0x7f)) return '/';
  const pathname = raw.split(/[?#]/, 1)[0] ?? '/';
  if (pathname === SIGN_IN_PATH || pathname.startsWith(`${SIGN_IN_PATH}/`)) return '/';
  return raw;
}

/** The sign-in page's address that comes back to `next` (path + search + hash) once signed in. */
export function signInPath(next?: string | null): string {
  const target = safeNext(next);
  return target === '/' ? SIGN_IN_PATH : `${SIGN_IN_PATH}?${new URLSearchParams({ next: target }).toString()}`;
}

/**
 * Where a 401 sends the browser from `pathname + search + hash`: the sign-in page, coming back here
 * afterwards; null on the open pages (the sign-in page itself, a shared comparison), which stay put.
 */
export function unauthorizedRedirect(pathname: string, search = '', hash = ''): string | null {
  if (isOpenPath(pathname)) return null;
  return signInPath(pathname + search + hash);
}

/** What GET /api/v1/session says, as far as where the browser may be is concerned. */
export interface SessionState {
  authenticated: boolean;
  public_read: boolean;
}

/**
 * Where a page sends the browser before asking for anything, or null to stay: signed out on a page that
 * needs a credential goes to sign in; with public reads (CTXBENCH_PUBLIC_READ) a signed-out browser
 * stays and reads, and only a write's 401 asks it to sign in (`unauthorizedRedirect`). Unknown yet
 * (the session is still loading): stay.
 */
export function signedOutRedirect(session: SessionState | undefined, pathname: string, search = '', hash = ''): string | null {
  if (!session || session.authenticated || session.public_read) return null;
  return unauthorizedRedirect(pathname, search, hash);
}

export interface SignInParams {
  /** Where to go once signed in (already made safe). */
  next: string;
  /** Why a one-time sign-in link failed, as the server said it (`?error=`), or null. */
  linkError: string | null;
}

/** The sign-in page's own address, read. */
export function decodeSignInParams(search: string): SignInParams {
  const params = new URLSearchParams(search);
  const error = params.get('error')?.trim();
  return { next: safeNext(params.get('next')), linkError: error ? error : null };
}

/** A failed sign-in link's reason as a sentence for a person. */
export function linkErrorMessage(reason: string): string {
  const why = reason.replace(/[.\s]+$/, '');
  return `That sign-in link did not work (${why}): each link works once. Sign in with your token instead.`;
}
