// The URL is the state of every shareable view: these functions are the only place that reads or
// writes a view's query string, so links stay stable and decoding stays forgiving.

function toParams(search: string | URLSearchParams): URLSearchParams {
  return typeof search === 'string' ? new URLSearchParams(search) : search;
}

function nonEmpty(value: string | null): string | null {
  const v = value?.trim();
  return v ? v : null;
}

/** Distinct non-empty values, first occurrence first; "a,b" is split so hand-written links work too. */
function list(params: URLSearchParams, key: string): string[] {
  const seen = new Set<string>();
  for (const raw of params.getAll(key)) {
    for (const part of raw.split(',')) {
      const v = part.trim();
      if (v) seen.add(v);
    }
  }
  return [...seen];
}

// ------------------------------------------------------------------ /runs/new

export interface NewRunQuery {
  /** The machine to run on (its id). */
  machine: string | null;
  /** Kernel ids ticked in advance (e.g. from a "run this again" link). */
  kernels: string[];
}

export function decodeNewRunQuery(search: string | URLSearchParams): NewRunQuery {
  const params = toParams(search);
  return { machine: nonEmpty(params.get('machine')), kernels: list(params, 'kernel') };
}

/** The query string (without "?") for a new-run view; empty parts are left out. */
export function encodeNewRunQuery(query: Partial<NewRunQuery>): string {
  const params = new URLSearchParams();
  if (query.machine) params.set('machine', query.machine);
  for (const k of query.kernels ?? []) params.append('kernel', k);
  return params.toString();
}

export function newRunPath(query: Partial<NewRunQuery> = {}): string {
  const qs = encodeNewRunQuery(query);
  return qs ? `/runs/new?${qs}` : '/runs/new';
}

// ------------------------------------------------------------------ /runs

export interface RunsQuery {
  /** Only runs on this machine. */
  machine: string | null;
}

export function decodeRunsQuery(search: string | URLSearchParams): RunsQuery {
  return { machine: nonEmpty(toParams(search).get('machine')) };
}

export function encodeRunsQuery(query: Partial<RunsQuery>): string {
  const params = new URLSearchParams();
  if (query.machine) params.set('machine', query.machine);
  return params.toString();
}

/** The REST query string for GET /runs matching a runs view. */
export function runsApiQuery(query: RunsQuery, limit = 100): string {
  const params = new URLSearchParams();
  if (query.machine) params.set('machine_id', query.machine);
  params.set('limit', String(limit));
  return params.toString();
}
