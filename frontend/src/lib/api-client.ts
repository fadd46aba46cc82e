// The one fetch layer: every REST call goes through `apiFetch`, which turns any failure (HTTP error
// with FastAPI's `{"detail": ...}`, a non-JSON body, or no answer at all) into an `ApiError` whose
// message a person can read, naming the field when the server names one. A 401 (no credential, or a
// stale session) also goes to the one handler the app registers, which sends the browser to sign in.

export const API_BASE = '/api/v1';

export interface FieldError {
  /** Where the problem is, e.g. "items[0].params.placement" (FastAPI's loc without "body"). */
  field: string;
  message: string;
}

export class ApiError extends Error {
  /** HTTP status, or 0 when the server could not be reached. */
  readonly status: number;
  readonly fieldErrors: FieldError[];

  constructor(message: string, status: number, fieldErrors: FieldError[] = []) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.fieldErrors = fieldErrors;
  }

  get isNotFound(): boolean {
    return this.status === 404;
  }

  /** No valid credential: signed out, session expired, or the token was revoked. */
  get isUnauthorized(): boolean {
    return this.status === 401;
  }
}

export interface ApiRequestInit extends RequestInit {
  /**
   * false: a 401 is this caller's own answer (a wrong token on the sign-in form), not a reason to
   * send the browser to the sign-in page.
   */
  authRedirect?: boolean;
}

type UnauthorizedHandler = (error: ApiError) => void;
let unauthorizedHandler: UnauthorizedHandler | null = null;

/** The app's one reaction to a 401 (the router sends the browser to /signin); null removes it. */
export function setUnauthorizedHandler(handler: UnauthorizedHandler | null): void {
  unauthorizedHandler = handler;
}

/** FastAPI's `loc` (["body", "items", 0, "params", "placement"]) as a readable path. */
export function formatLoc(loc: unknown): string {
  if (!Array.isArray(loc)) return '';
  const parts = loc[0] === 'body' || loc[0] === 'query' || loc[0] === 'path' ? loc.slice(1) : loc;
  let out = '';
  for (const part of parts) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/** The field errors carried by a FastAPI `detail` (empty when it is a plain string). */
export function fieldErrorsFromDetail(detail: unknown): FieldError[] {
  if (!Array.isArray(detail)) return [];
  return detail
    .filter((d): d is Record<string, unknown> => typeof d === 'object' && d !== null)
    .map((d) => ({
      field: formatLoc(d.loc),
      message: typeof d.msg === 'string' ? d.msg : JSON.stringify(d),
    }));
}

/** One readable sentence from a FastAPI `detail`: a string, a list of `{loc, msg, type}`, or other. */
export function messageFromDetail(detail: unknown): string | null {
  if (typeof detail === 'string') return detail.trim() || null;
  if (Array.isArray(detail)) {
    const errors = fieldErrorsFromDetail(detail);
    if (errors.length === 0) return null;
    return errors.map((e) => (e.field ? `${e.field}: ${e.message}` : e.message)).join('; ');
  }
  if (detail && typeof detail === 'object') {
    const msg = (detail as Record<string, unknown>).message ?? (detail as Record<string, unknown>).msg;
    return typeof msg === 'string' ? msg : JSON.stringify(detail);
  }
  return null;
}

const STATUS_TEXT: Record<number, string> = {
  400: 'Bad request',
  401: 'Not authorised',
  403: 'Forbidden',
  404: 'Not found',
  409: 'Conflict',
  413: 'Request too large',
  422: 'Invalid request',
  500: 'Server error',
  502: 'Bad gateway',
  503: 'Service unavailable',
  504: 'Gateway timeout',
};

/** An ApiError from an HTTP error response's status and (already read) body text. */
export function errorFromResponse(status: number, bodyText: string): ApiError {
  let detail: unknown = undefined;
  try {
    detail = (JSON.parse(bodyText) as { detail?: unknown }).detail;
  } catch {
    // Not JSON (a proxy's HTML page, an empty body): fall back to the status.
  }
  const fromDetail = messageFromDetail(detail);
  const label = STATUS_TEXT[status] ?? 'Request failed';
  const message = fromDetail ?? `${label} (HTTP ${status})`;
  return new ApiError(message, status, fieldErrorsFromDetail(detail));
}

/** An ApiError for a request that got no HTTP answer (server down, network gone, CORS, abort). */
export function errorFromNetwork(err: unknown, path: string): ApiError {
  const why = err instanceof Error && err.message ? ` (${err.message})` : '';
  return new ApiError(`Cannot reach the ctxbench server for ${path}${why}. Is it running?`, 0);
}

// How browsers say a page's code (a lazily loaded chunk) could not be fetched: Chromium, Firefox, Safari.
const CHUNK_LOAD = /Failed to fetch dynamically imported module|error loading dynamically imported module|Importing a module script failed/i;

export const CHUNK_LOAD_MESSAGE =
  "This page's code could not be loaded from the ctxbench server: it may be stopped or restarting, or a new version was installed. Reload the page when it answers again.";

/** Whether `err` is the browser failing to fetch a page's code (not a bug in the page). */
export function isChunkLoadError(err: unknown): boolean {
  return err instanceof Error && CHUNK_LOAD.test(err.message);
}

/** Any thrown value as a readable message. */
export function errorMessage(err: unknown): string {
  if (isChunkLoadError(err)) return CHUNK_LOAD_MESSAGE;
  if (err instanceof Error) return err.message;
  if (typeof err === 'string') return err;
  return 'Something went wrong.';
}

export async function apiFetch<T>(path: string, { authRedirect = true, ...init }: ApiRequestInit = {}): Promise<T> {
  const url = `${API_BASE}${path}`;
  const headers = new Headers(init.headers);
  headers.set('Accept', 'application/json');
  if (init.body !== undefined && !headers.has('Content-Type')) {
    headers.set('Content-Type', 'application/json');
  }
  let response: Response;
  try {
    // The session is an HttpOnly cookie: sent on our own origin only, never readable by scripts.
    response = await fetch(url, { credentials: 'same-origin', ...init, headers });
  } catch (err) {
    if (err instanceof DOMException && err.name === 'AbortError') throw err;
    throw errorFromNetwork(err, url);
  }
  const text = await response.text();
  if (!response.ok) {
    const error = errorFromResponse(response.status, text);
    if (error.isUnauthorized && authRedirect) unauthorizedHandler?.(error);
    throw error;
  }
  if (text === '') return undefined as T;
  try {
    return JSON.parse(text) as T;
  } catch {
    throw new ApiError(`The server sent a response to ${url} that is not JSON.`, response.status);
  }
}

export function apiGet<T>(path: string, signal?: AbortSignal): Promise<T> {
  return apiFetch<T>(path, { signal });
}

export function apiPost<T>(path: string, body: unknown, init: ApiRequestInit = {}): Promise<T> {
  return apiFetch<T>(path, { ...init, method: 'POST', body: JSON.stringify(body) });
}

export function apiPatch<T>(path: string, body: unknown, init: ApiRequestInit = {}): Promise<T> {
  return apiFetch<T>(path, { ...init, method: 'PATCH', body: JSON.stringify(body) });
}

export function apiDelete<T>(path: string, init: ApiRequestInit = {}): Promise<T> {
  return apiFetch<T>(path, { ...init, method: 'DELETE' });
}
