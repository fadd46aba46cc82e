// The explorer's one push channel: GET /api/v1/events (Server-Sent Events) says what changed — a machine
// went on- or offline, a run was created, progressed, finished or was deleted, a batch was edited, an alert
// opened or was acknowledged or resolved — and
// the queries that show it are invalidated, so pages update without timers. While the channel is down
// (no EventSource, refused, reconnecting) the old timers come back: `pollUnlessPushed(ms)`.
import type { QueryClient, QueryKey } from '@tanstack/react-query';
import { API_BASE } from '@/lib/api-client';

export const PUSH_URL = `${API_BASE}/events`;
export const PUSH_EVENT_NAMES = ['machine', 'run', 'batch', 'alert', 'resync'] as const;
/** Compare is heavy: while runs progress it refreshes at most this often (a finished run at once). */
export const COMPARE_THROTTLE_MS = 10_000;
const TERMINAL = new Set(['succeeded', 'failed', 'cancelled']);

export type PushEvent =
  | { kind: 'machine'; id: string; what: string }
  | { kind: 'run'; id: string; what: string; status: string | null; machine_id: string | null; batch_id: string | null }
  | { kind: 'batch'; id: string; what: string }
  | { kind: 'alert'; id: string; what: string }
  | { kind: 'resync' };

export function parsePushEvent(type: string, data: string): PushEvent | null {
  if (type === 'resync') return { kind: 'resync' };
  let body: unknown;
  try {
    body = JSON.parse(data);
  } catch {
    return null;
  }
  if (typeof body !== 'object' || body === null) return null;
  const b = body as Record<string, unknown>;
  if (typeof b.id !== 'string' || typeof b.what !== 'string') return null;
  const str = (v: unknown) => (typeof v === 'string' ? v : null);
  if (type === 'machine' || type === 'batch' || type === 'alert') return { kind: type, id: b.id, what: b.what };
  if (type === 'run') {
    return { kind: 'run', id: b.id, what: b.what, status: str(b.status), machine_id: str(b.machine_id), batch_id: str(b.batch_id) };
  }
  return null;
}

/** One query (or a prefix of many) to invalidate; `throttleMs`: not more often than that. */
export interface Invalidation {
  queryKey: QueryKey;
  exact?: boolean;
  throttleMs?: number;
}

/** Everything refetched on `resync` (null: every query) — and the query keys each event touches. */
export function invalidationsFor(event: PushEvent, cachedRunStatus?: string): Invalidation[] | null {
  switch (event.kind) {
    case 'resync':
      return null;
    case 'machine': {
      const out: Invalidation[] = [{ queryKey: ['machines'] }];
      // An enrollment uses a join token; a Hello brings the agent's catalog, which the kernel list
      // (the union of the catalogs) is made of: a form opened before the first agent came has none.
      if (event.what === 'online') out.push({ queryKey: ['join-tokens'] }, { queryKey: ['kernels'], exact: true });
      if (event.what !== 'offline') out.push({ queryKey: ['compare'] }); // names and facts
      if (event.what === 'deleted') out.push({ queryKey: ['runs'] });
      return out;
    }
    case 'alert':
      return [{ queryKey: ['alerts'] }]; // the header's count, the alerts page
    case 'batch':
      return [
        { queryKey: ['batches', event.id] },
        { queryKey: ['runs', 'batch', event.id] },
        ...(event.what === 'deleted' ? [{ queryKey: ['runs', 'list'] }] : []),
      ];
    case 'run': {
      const out: Invalidation[] = [{ queryKey: ['runs', 'list'] }];
      out.push({ queryKey: event.batch_id ? ['runs', 'batch', event.batch_id] : ['runs', 'batch'] });
      if (event.what !== 'changed') out.push({ queryKey: event.batch_id ? ['batches', event.batch_id] : ['batches'] });
      // The run page follows its run over its own stream; only a status it has not seen (a retry or
      // cancel from elsewhere, or the run page's stream being closed) needs the run read again.
      const ended = event.status !== null && TERMINAL.has(event.status);
      if (event.what === 'deleted' || (cachedRunStatus !== undefined && cachedRunStatus !== event.status)) {
        out.push({ queryKey: ['runs', event.id], exact: true });
        if (ended) out.push({ queryKey: ['runs', event.id, 'results'] });
      }
      if (ended || event.what === 'deleted') {
        out.push({ queryKey: ['compare'] }, { queryKey: ['history'] }, { queryKey: ['history-points'] }, { queryKey: ['changes'] });
      } else if (event.status === 'running') {
        out.push({ queryKey: ['compare'], throttleMs: COMPARE_THROTTLE_MS }); // results land as it runs
      }
      return out;
    }
  }
}

/**
 * Marks the queries `filters` names stale and reads those on screen again. A read already in flight may
 * have been answered before the change it is told of: it is left to finish (cancelling it would starve
 * a page whose reads take longer than events come, e.g. a batch page while its runs progress) and read
 * once more after it, or its older answer would stand and the change be lost (a form opened as the
 * first agent connects would keep it offline).
 */
export function refresh(client: QueryClient, filters?: { queryKey: QueryKey; exact?: boolean }): void {
  const inFlight = client.getQueryCache().findAll(filters).filter((q) => q.state.fetchStatus === 'fetching');
  const done = client.invalidateQueries(filters, { cancelRefetch: false });
  if (inFlight.length === 0) return;
  void done.then(() => {
    for (const q of inFlight) void client.invalidateQueries({ queryKey: q.queryKey, exact: true }, { cancelRefetch: false });
  });
}

// Whether the channel is live, for the fallback timers (module state: one channel per page).
let live = false;

export function isPushLive(): boolean {
  return live;
}

/** A `refetchInterval`: no timer while the push channel is live, `ms` while it is down. */
export function pollUnlessPushed(ms: number): () => number | false {
  return () => (live ? false : ms);
}

type EventSourceLike = Pick<EventSource, 'addEventListener' | 'close' | 'readyState'> & {
  onopen: ((this: EventSource, ev: Event) => unknown) | null;
  onerror: ((this: EventSource, ev: Event) => unknown) | null;
};

export interface PushOptions {
  url?: string;
  open?: (url: string) => EventSourceLike;
  now?: () => number;
  /** First wait before opening again after the server refused the stream (doubles up to 60 s). */
  retryMs?: number;
}

/**
 * Opens the channel and keeps it open: events invalidate their queries; when the browser gives up on it
 * (refused: 401, 429, 503) a new one is opened after a growing wait. Each state change refetches what
 * is on screen once: going down starts the fallback timers, coming up catches up with what was missed.
 * Returns a function that closes it.
 */
export function connectPush(client: QueryClient, options: PushOptions = {}): () => void {
  const url = options.url ?? PUSH_URL;
  const open = options.open ?? ((u: string) => new EventSource(u, { withCredentials: true }));
  const now = options.now ?? Date.now;
  const lastAt = new Map<string, number>();
  let source: EventSourceLike | null = null;
  let retryMs = options.retryMs ?? 5000;
  let timer: ReturnType<typeof setTimeout> | undefined;
  let closed = false;

  // Going down starts the timers again; coming up (the first time too: what changed between the page's
  // first reads and the stream's start was told to nobody) reads what is on screen once more.
  const setLive = (next: boolean) => {
    if (live === next) return;
    live = next;
    refresh(client);
  };

  const apply = (event: PushEvent) => {
    const cached = event.kind === 'run' ? client.getQueryData<{ status?: string }>(['runs', event.id])?.status : undefined;
    const todo = invalidationsFor(event, cached);
    if (todo === null) {
      refresh(client);
      return;
    }
    for (const { queryKey, exact, throttleMs } of todo) {
      if (throttleMs !== undefined) {
        const key = JSON.stringify(queryKey);
        if (now() - (lastAt.get(key) ?? -Infinity) < throttleMs) continue;
        lastAt.set(key, now());
      }
      refresh(client, { queryKey, exact });
    }
  };

  const start = () => {
    if (closed) return;
    const es = open(url);
    source = es;
    const onEvent = (e: Event) => {
      const m = e as MessageEvent<string>;
      const event = parsePushEvent(m.type, m.data);
      if (event) apply(event);
    };
    for (const name of PUSH_EVENT_NAMES) es.addEventListener(name, onEvent);
    es.onopen = () => {
      retryMs = options.retryMs ?? 5000;
      setLive(true);
    };
    es.onerror = () => {
      setLive(false);
      if (es.readyState === 2 /* CLOSED: refused; the browser will not retry */) {
        es.close();
        timer = setTimeout(start, retryMs);
        retryMs = Math.min(60_000, retryMs * 2);
      }
    };
  };

  if (typeof EventSource === 'undefined' && options.open === undefined) return () => undefined;
  start();
  return () => {
    closed = true;
    clearTimeout(timer);
    source?.close();
    live = false;
  };
}
