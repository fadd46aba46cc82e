// Kernel parameters between the form and the API: form controls hold strings (and booleans for
// checkboxes); the API wants typed JSON values checked against the kernel's spec.
import type { Kernel, ParamSpec, ParamValue, RunRequest } from './api-types';

export type FormValue = string | boolean;

export type Coerced =
  | { ok: true; value: ParamValue | undefined } // undefined: left empty, the kernel's default applies
  | { ok: false; error: string };

/** The form control's initial value for a parameter: its default, as the control holds it. */
export function initialFormValue(spec: ParamSpec): FormValue {
  const d = spec.default;
  if (spec.type === 'bool') return d === true || d === 'true';
  if (d === null || d === undefined) {
    if (spec.type === 'choice') return spec.choices?.[0] ?? '';
    return '';
  }
  return String(d);
}

function rangeError(spec: ParamSpec, n: number): string | null {
  const { min, max } = spec;
  const hasMin = min !== null && min !== undefined;
  const hasMax = max !== null && max !== undefined;
  if ((hasMin && n < min) || (hasMax && n > max)) {
    if (hasMin && hasMax) return `${spec.name} must be between ${min} and ${max}`;
    return hasMin ? `${spec.name} must be at least ${min}` : `${spec.name} must be at most ${max}`;
  }
  return null;
}

/** One form value as the typed value the API expects, or a message saying what is wrong with it. */
export function coerceParam(spec: ParamSpec, raw: FormValue): Coerced {
  if (spec.type === 'bool') {
    if (typeof raw === 'boolean') return { ok: true, value: raw };
    const v = raw.trim().toLowerCase();
    if (v === 'true') return { ok: true, value: true };
    if (v === 'false') return { ok: true, value: false };
    if (v === '') return { ok: true, value: undefined };
    return { ok: false, error: `${spec.name} must be true or false` };
  }
  const text = typeof raw === 'boolean' ? String(raw) : raw;
  switch (spec.type) {
    case 'int': {
      const v = text.trim();
      if (v === '') return { ok: true, value: undefined };
      if (!/^[+-]?\d+$/.test(v)) return { ok: false, error: `${spec.name} must be a whole number` };
      const n = Number(v);
      if (!Number.isSafeInteger(n)) return { ok: false, error: `${spec.name} is too large` };
      const err = rangeError(spec, n);
      return err ? { ok: false, error: err } : { ok: true, value: n };
    }
    case 'float': {
      const v = text.trim();
      if (v === '') return { ok: true, value: undefined };
      const n = Number(v);
      if (!Number.isFinite(n)) return { ok: false, error: `${spec.name} must be a number` };
      const err = rangeError(spec, n);
      return err ? { ok: false, error: err } : { ok: true, value: n };
    }
    case 'choice': {
      if (text === '') return { ok: true, value: undefined };
      const choices = spec.choices ?? [];
      if (choices.length > 0 && !choices.includes(text)) {
        return { ok: false, error: `${spec.name} must be one of ${choices.join(', ')}` };
      }
      return { ok: true, value: text };
    }
    default:
      // 'string' and any type this explorer does not know yet: sent verbatim for the server to judge.
      return { ok: true, value: text };
  }
}

/** Form values of one kernel as its `params` object, or the errors by parameter name. */
export function coerceParams(
  specs: ParamSpec[],
  values: Record<string, FormValue>,
): { ok: true; params: Record<string, ParamValue> } | { ok: false; errors: Record<string, string> } {
  const params: Record<string, ParamValue> = {};
  const errors: Record<string, string> = {};
  for (const spec of specs) {
    const raw = values[spec.name];
    if (raw === undefined) continue;
    const c = coerceParam(spec, raw);
    if (!c.ok) errors[spec.name] = c.error;
    else if (c.value !== undefined) params[spec.name] = c.value;
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, params };
}

export interface RunFormState {
  machineId: string;
  /** Chosen kernels in the order they will run, each with its form values by parameter name. */
  items: { kernel: Kernel; values: Record<string, FormValue> }[];
  repetitions: string;
  /** Empty: each kernel's own default. */
  minTime: string;
}

/** Errors keyed like the form: "machine", "items", "repetitions", "min_time_s", "<kernel id>.<param>". */
export type FormErrors = Record<string, string>;

/** The POST /runs body for a filled-in form, or the form's errors. */
export function buildRunRequest(
  form: RunFormState,
): { ok: true; request: RunRequest } | { ok: false; errors: FormErrors } {
  const errors: FormErrors = {};
  if (!form.machineId) errors.machine = 'Choose a machine.';
  if (form.items.length === 0) errors.items = 'Choose at least one kernel.';

  const request: RunRequest = { machine_id: form.machineId, items: [] };

  const reps = coerceParam({ name: 'Repetitions', type: 'int', min: 1, max: 1000 }, form.repetitions);
  if (!reps.ok) errors.repetitions = reps.error;
  else if (reps.value !== undefined) request.repetitions = reps.value as number;

  const minTime = coerceParam({ name: 'Min time', type: 'float', min: 0.001, max: 60 }, form.minTime);
  if (!minTime.ok) errors.min_time_s = minTime.error;
  else if (minTime.value !== undefined) request.min_time_s = minTime.value as number;

  for (const { kernel, values } of form.items) {
    const c = coerceParams(kernel.params, values);
    if (!c.ok) {
      for (const [name, msg] of Object.entries(c.errors)) errors[`${kernel.id}.${name}`] = msg;
    } else {
      request.items.push({ kernel: kernel.id, params: c.params });
    }
  }
  return Object.keys(errors).length > 0 ? { ok: false, errors } : { ok: true, request };
}

/**
 * Server field errors (FastAPI locs like "items[0].params.placement", "repetitions") keyed like the
 * form, so each shows beside its control; errors that match no control are left to the form's summary.
 */
export function formErrorsFromServer(
  fieldErrors: { field: string; message: string }[],
  request: RunRequest,
): FormErrors {
  const out: FormErrors = {};
  for (const { field, message } of fieldErrors) {
    const item = /^items\[(\d+)\]\.params\.([^.[\]]+)/.exec(field);
    if (item) {
      const kernel = request.items[Number(item[1])]?.kernel;
      if (kernel) out[`${kernel}.${item[2]}`] = message;
      continue;
    }
    if (field === 'repetitions' || field === 'min_time_s') out[field] = message;
    else if (field === 'machine_id') out.machine = message;
  }
  return out;
}
