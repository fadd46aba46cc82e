import { describe, expect, it } from 'vitest';
import { coerceParam, coerceParams, initialFormValue, type ParamRule } from './params';

const threads: ParamRule = { name: 'threads', type: 'int', default: 1, min: 1, max: 4096 };
const ratio: ParamRule = { name: 'ratio', type: 'float', default: 0.5, min: 0, max: 1 };
const placement: ParamRule = {
  name: 'placement',
  type: 'choice',
  default: 'same_core',
  choices: ['same_core', 'cross_core', 'unpinned'],
};
const pin: ParamRule = { name: 'pin', type: 'bool', default: false };
const dir: ParamRule = { name: 'dir', type: 'string', default: '/tmp' };


describe('initialFormValue', () => {
  it('prefills defaults as the controls hold them', () => {
    expect(initialFormValue(threads)).toBe('1');
    expect(initialFormValue(ratio)).toBe('0.5');
    expect(initialFormValue(placement)).toBe('same_core');
    expect(initialFormValue(pin)).toBe(false);
    expect(initialFormValue({ ...pin, default: true })).toBe(true);
    expect(initialFormValue(dir)).toBe('/tmp');
    expect(initialFormValue({ name: 'x', type: 'choice', choices: ['a', 'b'] })).toBe('a');
    expect(initialFormValue({ name: 'n', type: 'int' })).toBe('');
  });
});

describe('coerceParam', () => {
  it('turns ints into numbers within range', () => {
    expect(coerceParam(threads, '4')).toEqual({ ok: true, value: 4 });
    expect(coerceParam(threads, ' 16 ')).toEqual({ ok: true, value: 16 });
    expect(coerceParam(threads, '')).toEqual({ ok: true, value: undefined });
    expect(coerceParam(threads, '1.5')).toEqual({ ok: false, error: 'threads must be a whole number' });
    expect(coerceParam(threads, 'abc')).toEqual({ ok: false, error: 'threads must be a whole number' });
    expect(coerceParam(threads, '0')).toEqual({ ok: false, error: 'threads must be between 1 and 4096' });
    expect(coerceParam(threads, '5000')).toEqual({ ok: false, error: 'threads must be between 1 and 4096' });
    expect(coerceParam({ name: 'n', type: 'int', min: 2 }, '1')).toEqual({ ok: false, error: 'n must be at least 2' });
    expect(coerceParam({ name: 'n', type: 'int', max: 2 }, '3')).toEqual({ ok: false, error: 'n must be at most 2' });
  });

  it('turns floats into numbers within range', () => {
    expect(coerceParam(ratio, '0.25')).toEqual({ ok: true, value: 0.25 });
    expect(coerceParam(ratio, '1e-1')).toEqual({ ok: true, value: 0.1 });
    expect(coerceParam(ratio, 'x')).toEqual({ ok: false, error: 'ratio must be a number' });
    expect(coerceParam(ratio, '2')).toEqual({ ok: false, error: 'ratio must be between 0 and 1' });
  });

  it('checks choices, keeps strings, reads bools', () => {
    expect(coerceParam(placement, 'cross_core')).toEqual({ ok: true, value: 'cross_core' });
    expect(coerceParam(placement, 'moon')).toEqual({
      ok: false,
      error: 'placement must be one of same_core, cross_core, unpinned',
    });
    expect(coerceParam(dir, ' /var/tmp ')).toEqual({ ok: true, value: ' /var/tmp ' });
    expect(coerceParam(pin, true)).toEqual({ ok: true, value: true });
    expect(coerceParam(pin, 'false')).toEqual({ ok: true, value: false });
    expect(coerceParam(pin, 'maybe')).toEqual({ ok: false, error: 'pin must be true or false' });
  });
});

describe('coerceParams', () => {
  it('collects typed params, leaving empty ones to the kernel default', () => {
    expect(coerceParams([threads, placement, pin], { threads: '', placement: 'unpinned', pin: true })).toEqual({
      ok: true,
      params: { placement: 'unpinned', pin: true },
    });
  });

  it('collects every error by name', () => {
    expect(coerceParams([threads, ratio], { threads: 'x', ratio: '9' })).toEqual({
      ok: false,
      errors: { threads: 'threads must be a whole number', ratio: 'ratio must be between 0 and 1' },
    });
  });
});
