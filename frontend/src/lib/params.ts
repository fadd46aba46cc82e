// Kernel parameters between the form and the API: form controls hold strings (and booleans for
// checkboxes); the API wants typed JSON values checked against the kernel's spec.
import type { ParamSpec, ParamValue } from './api-types';

export type FormValue = string | boolean;

/** What checking a value needs of a parameter: its name and type, and whichever bounds it has. */
export type ParamRule = Pick<ParamSpec, 'name' | 'type'> & Partial<Omit<ParamSpec, 'name' | 'type'>>;

// The wire forms of kernels/contract/README.md "Parameter values". A form trims surrounding whitespace
// from int, float and bool fields and reads an empty one as "the kernel's default"; after that it
// applies the wire rules exactly (the golden vectors in kernels/contract/param-vectors.json check it).
const WIRE_INT = /^-?[0-9]+$/;
const WIRE_FLOAT = /^-?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?$/;
export const MAX_STRING = 4096;

export type Coerced =
  | { ok: true; value: ParamValue | undefined } // undefined: left empty, the kernel's default applies
  | { ok: false; error: string };

/** The form control's initial value for a parameter: its default, as the control holds it. */
export function initialFormValue(spec: ParamRule): FormValue {
  const d = spec.default;
  if (spec.type === 'bool') return d === true || d === 'true';
  if (d === null || d === undefined) {
    if (spec.type === 'choice') return spec.choices?.[0] ?? '';
    return '';
  }
  return String(d);
}

function rangeError(spec: ParamRule, n: number): string | null {
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
export function coerceParam(spec: ParamRule, raw: FormValue): Coerced {
  if (spec.type === 'bool') {
    if (typeof raw === 'boolean') return { ok: true, value: raw };
    const v = raw.trim();
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
      if (!WIRE_INT.test(v)) return { ok: false, error: `${spec.name} must be a whole number` };
      const n = Number(v) || 0; // "-0" is 0
      if (!Number.isSafeInteger(n)) return { ok: false, error: `${spec.name} is too large` };
      const err = rangeError(spec, n);
      return err ? { ok: false, error: err } : { ok: true, value: n };
    }
    case 'float': {
      const v = text.trim();
      if (v === '') return { ok: true, value: undefined };
      const n = Number(v);
      if (!WIRE_FLOAT.test(v) || !Number.isFinite(n)) return { ok: false, error: `${spec.name} must be a number` };
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
    case 'string':
      if ([...text].length > MAX_STRING) {
        return { ok: false, error: `${spec.name} must be at most ${MAX_STRING} characters` };
      }
      if (text.includes('\0')) return { ok: false, error: `${spec.name} must not contain a NUL character` };
      return { ok: true, value: text };
    default:
      // A type this explorer does not know yet: sent verbatim for the server to judge.
      return { ok: true, value: text };
  }
}

/** Form values of one kernel as its `params` object, or the errors by parameter name. */
export function coerceParams(
  specs: readonly ParamRule[],
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
