// The compare view's state lives in its URL: /compare?machines=a,b&kernels=k1,fam.*&baseline=a
// [&runs=r1,r2][&batch=b][&sort=-ratio&sortm=b][&scale=log][&cell=<kernel>|<params_key>], or with sets of
// runs as the columns instead of machines: /compare?sides=before:r1,r2;after:r3 (same-machine A/B;
// ab=<machine> opens the run picker for it). [&selector=env=prod,!gpu] narrows the machine picker by labels.
// These functions are the only place that reads or writes it (and the object a share freezes).
import { paths, withQuery } from '@/app/paths';
import { list } from './query-state';

export type SortKey = 'kernel' | 'ratio' | '-ratio';
export type ChartScale = 'linear' | 'log';

export interface CompareView {
  machines: string[];
  /** Kernel ids or family prefixes ending in `.*`; empty = everything the machines have results for. */
  kernels: string[];
  /** One of `machines`; null = the first. */
  baseline: string | null;
  /** Specific runs (the run picker); empty = each machine's latest results. */
  runs: string[];
  batch: string | null;
  /** Table order: by kernel (default) or by the ratio of `sortMachine` (ascending, or descending with `-`). */
  sort: SortKey;
  sortMachine: string | null;
  /** The sweep charts' y axis. */
  scale: ChartScale;
  /** The selected cell (its row: kernel and canonical params), whose samples the distribution view shows. */
  cell: { kernel: string; paramsKey: string } | null;
  /** Named sets of runs compared instead of machines (before/after on one machine). */
  sides: Side[];
  /** The machine whose runs the A/B picker lists. */
  ab: string | null;
  /** A label selector narrowing the machine picker (the machines page's, GET /machines?selector=); not
   * what is compared, so neither the REST query nor a share carries it. */
  selector: string;
}

export interface Side {
  label: string;
  runs: string[];
}

export const EMPTY_COMPARE_VIEW: CompareView = {
  machines: [],
  kernels: [],
  baseline: null,
  runs: [],
  batch: null,
  sort: 'kernel',
  sortMachine: null,
  scale: 'linear',
  cell: null,
  sides: [],
  ab: null,
  selector: '',
};

const SIDE_LABEL = /^[A-Za-z0-9][A-Za-z0-9 _.+-]{0,31}$/;

/** `before:r1,r2;after:r3` → sides; malformed parts are left out (the server names its errors). */
export function decodeSides(raw: string | null): Side[] {
  if (!raw) return [];
  const out: Side[] = [];
  for (const part of raw.split(';')) {
    const i = part.indexOf(':');
    if (i < 0) continue;
    const label = part.slice(0, i).trim();
    const runs = [...new Set(part.slice(i + 1).split(',').map((r) => r.trim()).filter(Boolean))];
    if (SIDE_LABEL.test(label) && runs.length && !out.some((s) => s.label === label)) out.push({ label, runs });
  }
  return out;
}

export function encodeSides(sides: Side[]): string {
  return sides.map((s) => `${s.label}:${s.runs.join(',')}`).join(';');
}


function one(params: URLSearchParams, key: string): string | null {
  const v = params.get(key)?.trim();
  return v ? v : null;
}

const CELL_SEP = '|';

export function decodeCompareView(search: string | URLSearchParams): CompareView {
  const params = typeof search === 'string' ? new URLSearchParams(search) : search;
  const sort = one(params, 'sort');
  const scale = one(params, 'scale');
  const cellRaw = one(params, 'cell');
  let cell: CompareView['cell'] = null;
  if (cellRaw) {
    const i = cellRaw.indexOf(CELL_SEP);
    cell = i < 0 ? { kernel: cellRaw, paramsKey: '' } : { kernel: cellRaw.slice(0, i), paramsKey: cellRaw.slice(i + 1) };
  }
  return {
    machines: list(params, 'machines'),
    kernels: list(params, 'kernels'),
    baseline: one(params, 'baseline'),
    runs: list(params, 'runs'),
    batch: one(params, 'batch'),
    sort: sort === 'ratio' || sort === '-ratio' ? sort : 'kernel',
    sortMachine: one(params, 'sortm'),
    scale: scale === 'log' ? 'log' : 'linear',
    cell,
    sides: decodeSides(params.get('sides')),
    ab: one(params, 'ab'),
    selector: (params.get('selector') ?? '').trim(),
  };
}

/** A comma list that stays readable in the address bar (commas and `*` kept, the rest escaped). */
function commaList(values: string[]): string {
  return values.map((v) => encodeURIComponent(v).replace(/%2A/gi, '*')).join(',');
}

/** The query string (without "?"); defaults are left out so links stay short. */
export function encodeCompareView(view: Partial<CompareView>): string {
  const v = { ...EMPTY_COMPARE_VIEW, ...view };
  const parts: string[] = [];
  if (v.machines.length) parts.push(`machines=${commaList(v.machines)}`);
  if (v.kernels.length) parts.push(`kernels=${commaList(v.kernels)}`);
  if (v.baseline) parts.push(`baseline=${encodeURIComponent(v.baseline)}`);
  if (v.runs.length) parts.push(`runs=${commaList(v.runs)}`);
  if (v.batch) parts.push(`batch=${encodeURIComponent(v.batch)}`);
  if (v.sort !== 'kernel') parts.push(`sort=${v.sort}`);
  if (v.sort !== 'kernel' && v.sortMachine) parts.push(`sortm=${encodeURIComponent(v.sortMachine)}`);
  if (v.scale !== 'linear') parts.push(`scale=${v.scale}`);
  if (v.cell) parts.push(`cell=${encodeURIComponent(`${v.cell.kernel}${CELL_SEP}${v.cell.paramsKey}`)}`);
  if (v.sides.length) parts.push(`sides=${encodeURIComponent(encodeSides(v.sides)).replace(/%2C/gi, ',').replace(/%3A/gi, ':').replace(/%3B/gi, ';')}`);
  if (v.ab) parts.push(`ab=${encodeURIComponent(v.ab)}`);
  if (v.selector.trim()) parts.push(`selector=${encodeURIComponent(v.selector.trim()).replace(/%2C/gi, ',').replace(/%3D/gi, '=')}`);
  return parts.join('&');
}

export function comparePath(view: Partial<CompareView>): string {
  return withQuery(paths.compare, encodeCompareView(view));
}

/** The REST query for GET /compare: only what selects data (UI state stays in the browser). */
export function compareApiQuery(view: CompareView): string {
  return encodeCompareView({
    machines: view.machines,
    kernels: view.kernels,
    baseline: view.baseline,
    runs: view.runs,
    batch: view.batch,
    sides: view.sides,
  });
}

/** The object POST /shares freezes: the compare query and the UI state. */
export function viewToShare(view: CompareView): Record<string, unknown> {
  return {
    machines: view.machines,
    kernels: view.kernels,
    baseline: view.baseline ?? view.machines[0] ?? null,
    ...(view.runs.length ? { runs: view.runs } : {}),
    ...(view.batch ? { batch: view.batch } : {}),
    ...(view.sides.length ? { sides: encodeSides(view.sides), baseline: view.baseline ?? view.sides[0]!.label } : {}),
    sort: view.sort,
    sort_machine: view.sortMachine,
    scale: view.scale,
    cell: view.cell ? { kernel: view.cell.kernel, params_key: view.cell.paramsKey } : null,
  };
}

const strings = (v: unknown): string[] =>
  Array.isArray(v) ? v.filter((x): x is string => typeof x === 'string') : typeof v === 'string' ? v.split(',').filter(Boolean) : [];
const str = (v: unknown): string | null => (typeof v === 'string' && v ? v : null);

/** A share's stored view back as a CompareView (forgiving: unknown or missing fields take defaults). */
export function viewFromShare(obj: Record<string, unknown> | null | undefined): CompareView {
  const o = obj ?? {};
  const cell = o.cell as { kernel?: unknown; params_key?: unknown } | null | undefined;
  const sort = o.sort;
  return {
    machines: strings(o.machines),
    kernels: strings(o.kernels),
    baseline: str(o.baseline),
    runs: strings(o.runs),
    batch: str(o.batch),
    sort: sort === 'ratio' || sort === '-ratio' ? sort : 'kernel',
    sortMachine: str(o.sort_machine),
    scale: o.scale === 'log' ? 'log' : 'linear',
    cell: cell && typeof cell.kernel === 'string' ? { kernel: cell.kernel, paramsKey: typeof cell.params_key === 'string' ? cell.params_key : '' } : null,
    sides: decodeSides(str(o.sides)),
    ab: null,
    selector: '',
  };
}

/** Share slugs: base62, at least 12 characters (anything else is a 404 without asking). */
export function isWellFormedSlug(slug: string): boolean {
  return /^[0-9A-Za-z]{12,64}$/.test(slug);
}
