// The New run form as a POST /runs body: one machine → `machine_id`, several → `machine_ids` (a batch);
// each chosen kernel with its fixed values and its sweeps; the profile and optional overrides.
import { MIN_TIME_S, REPETITIONS, type Kernel, type ParamValue, type Profile, type RunItemRequest, type RunRequest, type RunSettings } from '@/lib/api-types';
import { coerceParam, coerceParams, type FormValue } from '@/lib/params';
import type { Limits } from '@/lib/limits';
import { kernelItemCount, parseSweepValues, type SweepChoice } from '@/lib/sweep';

export interface RunFormItem {
  kernel: Kernel;
  /** Form values by parameter name (used for the parameters that are not swept). */
  values: Record<string, FormValue>;
  /** Swept parameters by name. */
  sweeps?: Record<string, SweepChoice>;
}

export interface RunFormState {
  machineIds: string[];
  /** Chosen kernels in the order they will run. */
  items: RunFormItem[];
  profile: Profile;
  /** Empty: the profile's. */
  repetitions: string;
  /** Empty: the profile's. */
  minTime: string;
  /** Kept from a run being repeated (the form has no control for it); absent: the profile's. */
  launches?: number;
  /** The server's profiles and budgets (GET /limits). */
  limits: Limits;
}

/** Errors keyed like the form: "machine", "items", "repetitions", "min_time_s", "<kernel id>.<param>". */
export type FormErrors = Record<string, string>;

/** The POST /runs body for a filled-in form, or the form's errors. */
export function buildRunRequest(
  form: RunFormState,
): { ok: true; request: RunRequest } | { ok: false; errors: FormErrors } {
  const errors: FormErrors = {};
  const machineIds = [...new Set(form.machineIds.filter(Boolean))];
  if (machineIds.length === 0) errors.machine = 'Choose at least one machine.';
  if (form.items.length === 0) errors.items = 'Choose at least one kernel.';

  const request: RunRequest = machineIds.length > 1 ? { machine_ids: machineIds, items: [] } : { machine_id: machineIds[0] ?? '', items: [] };
  // "default" is the server's own default: leaving it out keeps the body valid for older servers too.
  if (form.profile !== 'default') request.profile = form.profile;

  const reps = coerceParam({ name: 'Repetitions', type: 'int', min: REPETITIONS.minimum, max: REPETITIONS.maximum }, form.repetitions);
  if (!reps.ok) errors.repetitions = reps.error;
  else if (reps.value !== undefined) request.repetitions = reps.value as number;

  const minTime = coerceParam({ name: 'Min time', type: 'float', min: MIN_TIME_S.minimum, max: MIN_TIME_S.maximum }, form.minTime);
  if (!minTime.ok) errors.min_time_s = minTime.error;
  else if (minTime.value !== undefined) request.min_time_s = minTime.value as number;

  if (form.launches !== undefined) request.launches = form.launches;

  let items = 0;
  for (const { kernel, values, sweeps = {} } of form.items) {
    const swept = kernel.params.filter((p) => sweeps[p.name]);
    const fixed = kernel.params.filter((p) => !sweeps[p.name]);
    const c = coerceParams(fixed, values);
    const item: RunItemRequest = { kernel: kernel.id, params: {} };
    if (!c.ok) {
      for (const [name, msg] of Object.entries(c.errors)) errors[`${kernel.id}.${name}`] = msg;
    } else {
      item.params = c.params;
      // The kernel grammar takes 4096 characters (params.ts); a run request, the server's budget.
      for (const [name, v] of Object.entries(c.params)) {
        if (typeof v === 'string' && [...v].length > form.limits.max_param_string) {
          errors[`${kernel.id}.${name}`] = `${name} must be at most ${form.limits.max_param_string} characters`;
        }
      }
    }
    for (const spec of swept) {
      const choice = sweeps[spec.name];
      if (!choice) continue;
      item.sweep ??= {};
      if (choice.mode === 'default') {
        if ((spec.sweep?.length ?? 0) === 0) errors[`${kernel.id}.${spec.name}`] = `${spec.name} has no default sweep`;
        else item.sweep[spec.name] = 'default';
      } else {
        const parsed = parseSweepValues(spec, choice.text);
        if (!parsed.ok) errors[`${kernel.id}.${spec.name}`] = parsed.error;
        else item.sweep[spec.name] = parsed.values;
      }
    }
    items += kernelItemCount(kernel.params, sweeps, form.limits.profiles[form.profile]?.thin_sweeps ?? false) ?? 0;
    request.items.push(item);
  }
  const { max_items_per_run: maxItems, max_batch_items: maxBatch } = form.limits;
  if (items > maxItems && !errors.items) {
    errors.items = `This run would have ${items} items; at most ${maxItems} are allowed. Sweep fewer points.`;
  } else if (items * machineIds.length > maxBatch && !errors.items) {
    errors.items = `These ${machineIds.length} runs would have ${items * machineIds.length} items in all; at most ${maxBatch} are allowed in one batch. Choose fewer machines or sweep fewer points.`;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, request };
}

/**
 * Server field errors (FastAPI locs like "items[0].params.placement", "items[0].sweep.threads",
 * "machine_ids[1]") keyed like the form, so each shows beside its control; errors that match no control
 * are left to the form's summary.
 */
export function formErrorsFromServer(
  fieldErrors: { field: string; message: string }[],
  request: RunRequest,
): FormErrors {
  const out: FormErrors = {};
  for (const { field, message } of fieldErrors) {
    const item = /^items\[(\d+)\]\.(?:params|sweep)\.([^.[\]]+)/.exec(field);
    if (item) {
      const kernel = request.items[Number(item[1])]?.kernel;
      if (kernel) out[`${kernel}.${item[2]}`] = message;
      continue;
    }
    if (field === 'repetitions' || field === 'min_time_s') out[field] = message;
    else if (field === 'machine_id' || field.startsWith('machine_ids')) out.machine = message;
  }
  return out;
}

/** The form's state that repeats a run: its kernels, their values and sweeps, profile and overrides. */
export interface RepeatedForm {
  kernels: string[];
  values: Record<string, Record<string, FormValue>>;
  sweeps: Record<string, Record<string, SweepChoice>>;
  profile: Profile;
  repetitions: string;
  minTime: string;
  launches?: number;
}

const asFormValue = (v: ParamValue): FormValue => (typeof v === 'boolean' ? v : String(v));

/**
 * A run's request (`Run.request`) as the New run form holds it, so "Run again" posts the same body. A
 * kernel listed twice keeps its first item (the form has one entry per kernel).
 */
export function formFromRequest(request: RunSettings): RepeatedForm {
  const out: RepeatedForm = {
    kernels: [],
    values: {},
    sweeps: {},
    profile: request.profile ?? 'default',
    repetitions: request.repetitions != null ? String(request.repetitions) : '',
    minTime: request.min_time_s != null ? String(request.min_time_s) : '',
  };
  if (request.launches != null) out.launches = request.launches;
  for (const item of request.items) {
    if (out.kernels.includes(item.kernel)) continue;
    out.kernels.push(item.kernel);
    out.values[item.kernel] = Object.fromEntries(Object.entries(item.params).map(([name, v]) => [name, asFormValue(v)]));
    out.sweeps[item.kernel] = Object.fromEntries(
      Object.entries(item.sweep ?? {}).map(([name, spec]): [string, SweepChoice] => [
        name,
        spec === 'default' ? { mode: 'default' } : { mode: 'custom', text: spec.map(String).join(', ') },
      ]),
    );
  }
  return out;
}
