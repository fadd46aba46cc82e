// The REST shapes the explorer reads and sends, as names onto the types generated from the server's
// OpenAPI document (`make gen`: scripts/openapi.py -> api/openapi.json -> openapi-typescript ->
// api/schema.d.ts; `make gen-check` fails when they are stale). Closed sets (statuses, profiles, parameter
// types, a result's launches, compare's warnings) come exact from the server's schemas. Nothing here is
// written by hand but narrowings: where the server's schema says only `dict[str, Any]` or `Any` (a
// parameter value, the machine facts), `Narrow` gives the explorer the precise type, and refuses at
// compile time any narrowing the generated type does not allow (a field the server dropped, a type it
// changed).
import type { components } from './api/schema';
import { BUDGETS } from './api/budgets';

type Schemas = components['schemas'];

/** T with the fields of R replacing its own; each of R's fields must exist in T and fit its type. */
type Narrow<T, R extends { [K in keyof R]: K extends keyof T ? T[K] : never }> = Omit<T, keyof R> & R;

export type ParamType = Schemas['ParamOut']['type'];
export type ParamValue = number | string | boolean;
type Params = Record<string, ParamValue>;

/** The facts an agent reports (the server keeps them as a JSON object; see proto MachineFacts). */
export type MachineFacts = {
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
};

/** GET /machines: `status` is "active", "pending" (waits for an admin's approval: no runs) or "revoked". */
export type Machine = Narrow<Schemas['MachineOut'], { facts: MachineFacts }>;
export type PreflightCheck = Schemas['PreflightOut'];

export type ParamSpec = Narrow<Schemas['ParamOut'], { default: ParamValue | null; sweep: ParamValue[] }>;
export type SeedReference = Schemas['SeedReferenceOut'];
export type Kernel = Narrow<Schemas['KernelOut'], { params: ParamSpec[] }>;

export type RunStatus = Schemas['RunStatus'];
export type ItemState = Schemas['ItemState'];
export type Profile = Schemas['RunCreate']['profile'];

export type RunItem = Narrow<Schemas['RunItemOut'], { params: Params }>;

/** A swept parameter: explicit values, or "default" for the kernel's own sweep (thinned by profile). */
export type SweepSpec = ParamValue[] | 'default';

export type RunItemRequest = Narrow<Schemas['RunItemIn'], { params: Params; sweep?: Record<string, SweepSpec> }>;

/** POST /runs: `machine_id` for one run, or `machine_ids` for a batch (one run per machine). */
export type RunRequest = Narrow<Schemas['RunCreate'], { items: RunItemRequest[]; profile?: Profile }>;

/** What a run measures and how: a POST /runs body without its machines (a run's `request`). */
export type RunSettings = Omit<RunRequest, 'machine_id' | 'machine_ids'>;

/**
 * A run. `items` is empty in the light list (`GET /runs?items=false`), where `progress` and `kernels`
 * still count them; `request` is the POST /runs body it was posted with, machine ids left out.
 */
export type Run = Narrow<Schemas['RunOut'], { items: RunItem[]; request: RunSettings }>;

/** PATCH /runs/{id} and /batches/{id}: the fields given change; null or "" clears one. */
export type TitleNotePatch = Schemas['TitleNotePatch'];

/** Budgets of the server's columns (a longer value is a 422 naming the field), from its schemas. */
export const MAX_TITLE = BUDGETS.TitleNotePatch.name.maxLength;
export const MAX_NOTE = BUDGETS.TitleNotePatch.note.maxLength;
export const MAX_MACHINE_NAME = BUDGETS.MachinePatch.name.maxLength;
export const MAX_TOKEN_NAME = BUDGETS.TokenCreate.name.maxLength;
/** POST /runs overrides: repetitions and min time per repetition (seconds). */
export const REPETITIONS = BUDGETS.RunCreate.repetitions;
export const MIN_TIME_S = BUDGETS.RunCreate.min_time_s;
/** POST /join-tokens: hosts one token enrols, and seconds it stays valid. */
export const JOIN_TOKEN = BUDGETS.JoinTokenCreate;

/** GET /batches/{id}: a batch's title and note, its runs and machines. */
export type BatchInfo = Schemas['BatchInfo'];

/** POST /runs with `machine_ids` answers with the batch and its runs. */
export type BatchCreated = Narrow<Schemas['BatchOut'], { runs: Run[] }>;

/** One kernel process of a result (docs/architecture.md "Sampling design"). */
export type ResultLaunch = Schemas['LaunchOut'];

/** A result; its stats are null when the item measured nothing (the run's items carry the error). */
export type Result = Narrow<Schemas['ResultOut'], { params: Params }>;
/** What the host took away while a result was measured (results and compare cells). */
export type Interference = Schemas['Interference'];

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

export type CompareMachine = Narrow<Schemas['CompareMachine'], { facts: MachineFacts }>;
export type CompareCell = Schemas['CompareCell'];
/** Why a ratio is significant or not (GET /compare, since issue 11). */
export type Significance = Schemas['Significance'];
export type CompareRatio = Schemas['CompareRatio'];
export type CompareRow = Narrow<Schemas['CompareRow'], { params: Params; seed_reference: SeedReference | null }>;
export type FactDiff = Schemas['FactDiff'];

/** One of GET /compare's warnings: a message, and the row it is about when it is about one. */
export type CompareWarning = Schemas['CompareWarning'];

export type CompareResponse = Narrow<Schemas['CompareOut'], { machines: CompareMachine[]; rows: CompareRow[] }>;

export type ShareCreated = Schemas['ShareCreated'];
/** A machine fact a share may carry (POST /shares `facts`). */
export type ShareFact = NonNullable<Schemas['ShareCreate']['facts']>[number];

/** GET /shares/{slug}: `compare` is null for shares stored before frozen answers (migration 0003). */
export type Share = Narrow<Schemas['ShareOut'], { compare: CompareResponse | null }>;
