// The explorer's form parsing against the golden vectors every parameter implementation shares
// (kernels/contract/param-vectors.json, kernels/contract/README.md "Parameter values").
import { describe, expect, it } from 'vitest';
import data from '../../../kernels/contract/param-vectors.json';
import type { ParamSpec, ParamValue } from './api-types';
import { coerceParam } from './params';

type VectorText = string | { repeat: string; times: number };
interface Vector {
  param: string;
  input: VectorText;
  canonical?: VectorText;
  error?: string;
  default?: boolean;
}
const vectors = data as unknown as { params: Record<string, ParamSpec>; wire: Vector[]; form: Vector[] };

const text = (t: VectorText): string => (typeof t === 'string' ? t : t.repeat.repeat(t.times));

/** The typed value a canonical string stands for. */
function typed(spec: ParamSpec, canonical: string): ParamValue {
  if (spec.type === 'int' || spec.type === 'float') return Number(canonical);
  if (spec.type === 'bool') return canonical === 'true';
  return canonical;
}

/** A form differs from the wire only where it trims (int, float, bool) or reads "" as the default. */
function formDiffers(spec: ParamSpec, input: string): boolean {
  const trims = spec.type === 'int' || spec.type === 'float' || spec.type === 'bool';
  return (trims && input !== input.trim()) || (input === '' && spec.type !== 'string');
}

function check(v: Vector) {
  const spec = vectors.params[v.param]!;
  const got = coerceParam(spec, text(v.input));
  if (v.error) expect(got.ok, `${v.param} ${JSON.stringify(v.input)}: want an error (${v.error})`).toBe(false);
  else if (v.default) expect(got).toEqual({ ok: true, value: undefined });
  else expect(got).toEqual({ ok: true, value: typed(spec, text(v.canonical!)) });
}

describe('golden parameter vectors', () => {
  const wire = vectors.wire.filter((v) => !formDiffers(vectors.params[v.param]!, text(v.input)));

  it('has vectors of every type, most of them wire ones a form reads alike', () => {
    expect(new Set(wire.map((v) => vectors.params[v.param]!.type))).toEqual(
      new Set(['int', 'float', 'bool', 'choice', 'string']),
    );
    expect(wire.length).toBeGreaterThan(vectors.wire.length * 0.8);
  });

  it.each(wire.map((v) => [`${v.param}=${JSON.stringify(v.input).slice(0, 40)}`, v] as const))('wire %s', (_, v) =>
    check(v),
  );

  it.each(vectors.form.map((v) => [`${v.param}=${JSON.stringify(v.input)}`, v] as const))('form %s', (_, v) =>
    check(v),
  );
});
