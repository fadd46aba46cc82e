// The URL is the state of every shareable view: these functions are the only place that reads or
// writes a view's query string, so links stay stable and decoding stays forgiving.
import { paths, withQuery } from '@/app/paths';
import type { RunStatus } from './api-types';

function toParams(search: string | URLSearchParams): URLSearchParams {
  return typeof search === 'string' ? new URLSearchParams(search) : search;
}

function nonEmpty(value: string | null): string | null {
  const v = value?.trim();
  return v ? v : null;
}

/** Distinct non-empty values, first occurrence first; "a,b" is split so hand-written links work too. */
export function list(params: URLSearchParams, key: string): string[] {
  const seen = new Set<string>();
  for (const raw of params.getAll(key)) {
    for (const part of raw.split(',')) {
      const v = part.trim();
      if (v) seen.add(v);
    }
  }
  return [...seen];
}

/** A list as one readable "a,b" value (commas kept, each part escaped); decoded by `list`. */
function commaList(values: string[]): string {
  return values.map((v) => encodeURIComponent(v)).join(',');
}

function join(parts: string[]): string {
  return parts.filter(Boolean).join('&');
}

// ------------------------------------------------------------------ /runs/new

export interface NewRunQuery {
  /** The machines to run on (their ids), in the order chosen; one run per machine. */
  machines: string[];
  /** Kernel ids ticked in advance (e.g. from a "run this again" link). */
  kernels: string[];
  /** A run to repeat: the form starts from its request (params, sweeps, profile, overrides). */
  from?: string;
}

/** `?machines=a,b` (and the older `?machine=a`, kept working for existing links). */
export function decodeNewRunQuery(search: string | URLSearchParams): NewRunQuery {
  const params = toParams(search);
  const machines = [...new Set([...list(params, 'machines'), ...list(params, 'machine')])];
  const from = nonEmpty(params.get('from'));
  return from ? { machines, kernels: list(params, 'kernel'), from } : { machines, kernels: list(params, 'kernel') };
}

/** The query string (without "?") for a new-run view; empty parts are left out. */
export function encodeNewRunQuery(query: Partial<NewRunQuery>): string {
  const machines = [...new Set((query.machines ?? []).filter(Boolean))];
  const kernels = new URLSearchParams();
  for (const k of query.kernels ?? []) kernels.append('kernel', k);
  const from = query.from ? `from=${encodeURIComponent(query.from)}` : '';
  return join([machines.length > 0 ? `machines=${commaList(machines)}` : '', kernels.toString(), from]);
}

export function newRunPath(query: Partial<NewRunQuery> = {}): string {
  return withQuery(paths.newRun, encodeNewRunQuery(query));
}

// ------------------------------------------------------------------ /runs

export const RUN_STATUS_FILTERS: readonly RunStatus[] = ['queued', 'running', 'succeeded', 'failed', 'cancelled'];

export interface RunsQuery {
  /** Only runs on this machine. */
  machine: string | null;
  /** Only runs in this state. */
  status: RunStatus | null;
}

export function decodeRunsQuery(search: string | URLSearchParams): RunsQuery {
  const params = toParams(search);
  const status = nonEmpty(params.get('status'));
  return {
    machine: nonEmpty(params.get('machine')),
    status: status && (RUN_STATUS_FILTERS as readonly string[]).includes(status) ? (status as RunStatus) : null,
  };
}

export function encodeRunsQuery(query: Partial<RunsQuery>): string {
  const params = new URLSearchParams();
  if (query.machine) params.set('machine', query.machine);
  if (query.status) params.set('status', query.status);
  return params.toString();
}

/** The REST query string for GET /runs matching a runs view. */
export function runsApiQuery(query: Partial<RunsQuery> & { batch?: string | null }, limit = 100): string {
  const params = new URLSearchParams();
  if (query.machine) params.set('machine_id', query.machine);
  if (query.status) params.set('status', query.status);
  if (query.batch) params.set('batch_id', query.batch);
  params.set('limit', String(limit));
  return params.toString();
}

// ------------------------------------------------------------------ /runs/:id, /batches/:id

export const runPath = paths.run;
export const batchPath = paths.batch;
/** One kernel's own page: its catalog entry (description, parameters, seed figure). */
export const kernelPath = paths.kernel;
