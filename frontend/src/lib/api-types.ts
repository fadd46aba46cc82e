// The REST shapes of docs/architecture.md ("REST shapes"), exactly as the server sends them.
// Optional (`?`) marks fields a server may leave out; the explorer never relies on them being there.

export type ParamType = 'int' | 'float' | 'choice' | 'bool' | 'string';
export type ParamValue = number | string | boolean;

export interface MachineFacts {
  hostname?: string;
  os_release?: string;
  kernel_release?: string;
  kernel_cmdline?: string;
  cpu_model?: string;
  logical_cpus?: number;
  physical_cores?: number;
  smt_active?: boolean;
  caches?: Record<string, string>;
  // uint64 in the proto: a JSON number, or a string when serialised the protobuf-JSON way.
  memory_bytes?: number | string;
  governor?: string;
  boost?: string;
  vulnerabilities?: Record<string, string>;
  clocksource?: string;
  virtualization?: string;
  load_average?: number[];
  arch?: string;
  extra?: Record<string, string>;
}

export interface Machine {
  id: string;
  /** The display name when someone set one (PATCH /machines/{id}), else what the agent calls it. */
  name: string;
  /** The name someone gave it; null or absent: none (the agent's own name is shown). */
  display_name?: string | null;
  /** What its agent calls it (--name, else the hostname). */
  agent_name?: string;
  hostname: string;
  agent_version?: string;
  online: boolean;
  /** "active", "pending" (waits for an admin's approval: no runs) or "revoked". */
  status?: 'active' | 'pending' | 'revoked';
  first_seen?: string | null;
  last_seen: string | null;
  facts: MachineFacts;
  kernels: string[];
}

export interface ParamSpec {
  name: string;
  type: ParamType;
  default?: ParamValue | null;
  min?: number | null;
  max?: number | null;
  sweep?: ParamValue[] | null;
  choices?: string[] | null;
  help?: string | null;
}

export interface SeedReference {
  seed: string;
  value: number;
  unit: string;
  machine: string;
  params?: Record<string, ParamValue> | null;
  note?: string | null;
}

export interface Kernel {
  id: string;
  title: string;
  family: string;
  unit: string;
  description: string;
  params: ParamSpec[];
  seed_reference: SeedReference | null;
  machines: string[];
  /** Old ids of a renamed kernel (go.mutex for lock.go_mutex), still read as this kernel. */
  aliases?: string[];
}

export type RunStatus = 'queued' | 'running' | 'succeeded' | 'failed' | 'cancelled';
export type ItemState = RunStatus;

export interface RunItem {
  id: string;
  index: number;
  kernel: string;
  params: Record<string, ParamValue>;
  state: ItemState;
  error: string | null;
  result_id: string | null;
  timeout_s?: number;
  /** 1 for the first try; grows by one with each retry. */
  attempt?: number;
}

export type Profile = 'quick' | 'default' | 'thorough';

export interface Run {
  id: string;
  machine_id: string;
  /** The batch this run belongs to (its own id when started alone); absent on older servers. */
  batch_id?: string | null;
  /** A person's title for it (PATCH /runs/{id}); null or absent: none (the page makes one up). */
  name?: string | null;
  /** A person's free-text note about it. */
  note?: string | null;
  /** Its batch's title (PATCH /batches/{id}); null or absent: none. */
  batch_name?: string | null;
  profile?: Profile | null;
  status: RunStatus;
  /** When it last entered the queue (creation, or a retry). */
  queued_at?: string | null;
  created_at: string;
  started_at: string | null;
  finished_at: string | null;
  error: string | null;
  repetitions: number | null;
  min_time_s: number | null;
  /** Kernel processes per item; null on runs from before launches (one). */
  launches?: number | null;
  /** Every item; empty in the light list (`GET /runs?items=false`), where `progress` and `kernels` still count them. */
  items: RunItem[];
  progress: { total: number; done: number; failed: number; running?: number };
  /** Its items' distinct kernel ids, in order; absent on older servers (see `runKernels`). */
  kernels?: string[];
  /** The POST /runs body it was posted with, machine ids left out; absent on older servers. */
  request?: RunSettings;
}

/** A swept parameter: explicit values, or "default" for the kernel's own sweep (thinned by profile). */
export type SweepSpec = ParamValue[] | 'default';

export interface RunItemRequest {
  kernel: string;
  params: Record<string, ParamValue>;
  sweep?: Record<string, SweepSpec>;
}

/** What a run measures and how: a POST /runs body without its machines. */
export interface RunSettings {
  items: RunItemRequest[];
  profile?: Profile;
  repetitions?: number;
  min_time_s?: number;
  /** Kernel processes per item; the profile's when absent. */
  launches?: number;
}

/** POST /runs: `machine_id` for one run, or `machine_ids` for a batch (one run per machine). */
export interface RunRequest extends RunSettings {
  machine_id?: string;
  machine_ids?: string[];
}

/** PATCH /runs/{id} and /batches/{id}: the fields given change; null or "" clears one. */
export interface TitleNotePatch {
  name?: string | null;
  note?: string | null;
}

/** Budgets of the server's columns (a longer value is a 422 naming the field). */
export const MAX_TITLE = 200;
export const MAX_NOTE = 4000;
export const MAX_MACHINE_NAME = 255;

/** GET /batches/{id}: a batch's title and note, its runs and machines. */
export interface BatchInfo {
  id: string;
  name: string | null;
  note: string | null;
  run_ids: string[];
  machine_ids: string[];
}

/** POST /runs with `machine_ids` answers with the batch and its runs. */
export interface BatchCreated {
  batch_id: string;
  runs: Run[];
}

/** One kernel process of a result (docs/architecture.md "Sampling design"). */
export interface ResultLaunch {
  index: number;
  wall_s: number | null;
  cpu_s?: number | null;
  other_busy_frac?: number | null;
  disturbed?: boolean;
  /** Run again because an earlier launch was disturbed. */
  remeasured?: boolean;
  kept?: boolean;
  /** Repetitions this launch measured. */
  samples: number;
}

export interface Result {
  id: string;
  run_id?: string;
  item_id: string;
  machine_id?: string;
  kernel: string;
  status?: string;
  params: Record<string, ParamValue>;
  unit: string;
  n: number;
  // Null when the item measured nothing (the run's items carry the error).
  median: number | null;
  mean: number | null;
  stddev: number | null;
  cv: number | null;
  min: number | null;
  max: number | null;
  ci_low: number | null;
  ci_high: number | null;
  ci_method?: string | null;
  samples: number[];
  iterations?: number[];
  counters: Record<string, number>;
  harness?: Record<string, unknown>;
  /** Dynamic reruns: how many extra attempts ran, each attempt's CV, still noisy after the last. */
  reruns?: number;
  noisy?: boolean;
  attempt_cvs?: (number | null)[];
  /** Every kernel process the item ran (null on results from before launches). */
  launches?: ResultLaunch[] | null;
  started_at?: string | null;
  finished_at?: string | null;
  created_at?: string;
}

export const TERMINAL_RUN_STATUSES: readonly RunStatus[] = ['succeeded', 'failed', 'cancelled'];

/** A run's distinct kernel ids: the server's `kernels`, else (older servers) from its items. */
export function runKernels(run: Pick<Run, 'items' | 'kernels'>): string[] {
  return run.kernels ?? [...new Set(run.items.map((i) => i.kernel))];
}

/** A run from the light list (`items=false`): its counts are in `progress`, its items not sent. */
export function isLightRun(run: Pick<Run, 'items' | 'progress'>): boolean {
  return run.items.length === 0 && run.progress.total > 0;
}

export function isTerminal(status: RunStatus | undefined): boolean {
  return status !== undefined && TERMINAL_RUN_STATUSES.includes(status);
}

// ------------------------------------------------------------------ compare and share
// docs/architecture.md "Compare and share": GET /compare, POST /shares, GET /shares/{slug}.

export interface CompareMachine {
  id: string;
  name: string;
  hostname: string;
  online: boolean;
  facts: MachineFacts;
}

export interface CompareCell {
  result_id: string;
  run_id: string;
  median: number | null;
  ci_low: number | null;
  ci_high: number | null;
  /** bootstrap95: a 95 % interval (hierarchical bootstrap); minmax: too few launches for one, min–max. */
  ci_kind?: 'bootstrap95' | 'minmax' | null;
  /** Kernel processes the samples came from (1 for results from before launches). */
  n_launches?: number | null;
  n: number;
  cv: number | null;
  noisy: boolean;
  samples: number[];
  created_at?: string | null;
}

/** Why a ratio is significant or not (GET /compare, since issue 11). */
export interface Significance {
  significant: boolean;
  rule: 'ci_excludes_noise' | 'ci_includes_1' | 'within_noise' | 'too_few_launches';
  /** Run-to-run noise the CI had to clear, relative (0.05 = 5 %). */
  noise: number;
  noise_source: 'runs' | 'default';
  ci_level: number;
  /** [this machine's launches, the baseline's]. */
  n_launches: number[];
}

export interface CompareRatio {
  ratio: number | null;
  ci_low: number | null;
  ci_high: number | null;
  /** Always null since issue 11 (Mann-Whitney U is gone); kept for older shares. */
  p_value: number | null;
  significant: boolean;
  /** bootstrap_few_launches: a side has under 6 launches, so the interval covers less than 95 %. */
  ci_kind?: 'bootstrap95' | 'bootstrap_few_launches' | null;
  significance?: Significance | null;
}

export interface CompareRow {
  kernel: string;
  family: string;
  params: Record<string, ParamValue>;
  params_key: string;
  unit: string;
  /** Throughput units (MB/s): a ratio above 1 is better, not worse. */
  higher_is_better?: boolean;
  cells: Record<string, CompareCell>;
  ratios: Record<string, CompareRatio>;
  seed_reference: SeedReference | null;
  /** The server's words for this row (units that differ, …), when it has any. */
  warning?: string | null;
  /** Each machine's unit when they differ. */
  units?: Record<string, string>;
}

export interface FactDiff {
  fact: string;
  values: Record<string, unknown>;
  hint?: string | null;
}

export interface CompareResponse {
  machines: CompareMachine[];
  baseline: string;
  rows: CompareRow[];
  geomean: Record<string, number | null>;
  geomean_by_family: Record<string, Record<string, number | null>>;
  facts_diff: FactDiff[];
  result_ids: string[];
  warnings: (string | { row?: string; kernel?: string; params_key?: string; message?: string; detail?: string })[];
}

export interface ShareCreated {
  slug: string;
  url: string;
}

export interface Share {
  view: Record<string, unknown>;
  result_ids: string[];
  created_at: string;
  compare: CompareResponse;
}
