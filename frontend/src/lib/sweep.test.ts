import { describe, expect, it } from 'vitest';
import { countItems, describeBadValues, kernelItemCount, MAX_NAMED_BAD_VALUES, parseSweepValues, sweepPoints, thinSweep, type SweepChoice } from './sweep';
import type { ParamRule } from './params';

const threads: ParamRule = { name: 'threads', type: 'int', default: 1, min: 1, max: 1024, sweep: [1, 2, 4, 8, 16, 32, 64, 128, 256, 512, 1024] };
const procs: ParamRule = { name: 'procs', type: 'int', default: 1, min: 1, max: 1024, sweep: [1, 2, 4, 8] };
const placement: ParamRule = { name: 'placement', type: 'choice', default: 'same_core', choices: ['same_core', 'cross_core', 'unpinned'] };
const ratio: ParamRule = { name: 'ratio', type: 'float', min: 0, max: 1 };
const sigmask: ParamRule = { name: 'save_sigmask', type: 'bool', default: false, sweep: [false, true] };

describe('thinSweep', () => {
  it('keeps every point for default and thorough', () => {
    expect(thinSweep([1, 2, 4, 8], false)).toEqual([1, 2, 4, 8]);
    expect(thinSweep([1, 2, 4, 8], false)).toEqual([1, 2, 4, 8]);
  });

  it('keeps every other point for quick, always the first and the last', () => {
    expect(thinSweep(threads.sweep ?? [], true)).toEqual([1, 4, 16, 64, 256, 1024]);
    expect(thinSweep([1, 2, 4, 8], true)).toEqual([1, 4, 8]);
    expect(thinSweep([1, 2], true)).toEqual([1, 2]);
    expect(thinSweep([7], true)).toEqual([7]);
    expect(thinSweep([], true)).toEqual([]);
  });
});

describe('parseSweepValues', () => {
  it('types each point, drops repeats and keeps the order', () => {
    expect(parseSweepValues(threads, ' 8, 1,2 ,8,')).toEqual({ ok: true, values: [8, 1, 2] });
    expect(parseSweepValues(ratio, '0.5, 0.25')).toEqual({ ok: true, values: [0.5, 0.25] });
    expect(parseSweepValues(placement, 'same_core,cross_core')).toEqual({ ok: true, values: ['same_core', 'cross_core'] });
    expect(parseSweepValues(sigmask, 'true, false')).toEqual({ ok: true, values: [true, false] });
  });

  it('names the point that is wrong', () => {
    expect(parseSweepValues(threads, '1, 2048')).toEqual({ ok: false, error: '"2048": threads must be between 1 and 1024' });
    expect(parseSweepValues(threads, '1, two')).toEqual({ ok: false, error: '"two": threads must be a whole number' });
    expect(parseSweepValues(placement, 'moon')).toEqual({
      ok: false,
      error: '"moon": placement must be one of same_core, cross_core, unpinned',
    });
    expect(parseSweepValues(threads, ' , ')).toEqual({ ok: false, error: 'threads: give at least one value, separated by commas' });
  });
});

describe('every bad sweep value is reported', () => {
  it('names each bad point, those with the same fault together, in the order typed', () => {
    expect(parseSweepValues(threads, '0, 1, two, 2048, 4, x')).toEqual({
      ok: false,
      error: '"0", "2048": threads must be between 1 and 1024; "two", "x": threads must be a whole number',
    });
  });

  it('names the first ten and counts the rest', () => {
    const text = Array.from({ length: 25 }, (_, i) => String(2000 + i)).join(', ');
    const parsed = parseSweepValues(threads, text);
    expect(parsed.ok).toBe(false);
    const error = parsed.ok ? '' : parsed.error;
    expect(error.match(/"\d+"/g)).toHaveLength(MAX_NAMED_BAD_VALUES);
    expect(error).toMatch(/^"2000", "2001", .*"2009": threads must be between 1 and 1024; and 15 more bad values$/);
    expect(describeBadValues([...Array.from({ length: 10 }, () => ({ value: 'a', error: 'e' })), { value: 'b', error: 'e' }])).toMatch(/; and 1 more bad value$/);
  });
});

describe('item counting', () => {
  it('gives a swept parameter its points under the profile', () => {
    expect(sweepPoints(procs, { mode: 'default' }, true)).toEqual([1, 4, 8]);
    expect(sweepPoints(procs, { mode: 'custom', text: '2,3' }, true)).toEqual([2, 3]);
    expect(sweepPoints(procs, { mode: 'custom', text: '0' }, false)).toBeNull();
  });

  it('multiplies the swept parameters of one kernel (the cartesian product)', () => {
    const specs = [threads, placement];
    expect(kernelItemCount(specs, {}, false)).toBe(1);
    expect(kernelItemCount(specs, { threads: { mode: 'default' } }, false)).toBe(11);
    expect(kernelItemCount(specs, { threads: { mode: 'default' } }, true)).toBe(6);
    expect(
      kernelItemCount(specs, { threads: { mode: 'default' }, placement: { mode: 'custom', text: 'same_core,unpinned' } }, true),
    ).toBe(12);
    expect(kernelItemCount(specs, { threads: { mode: 'custom', text: 'x' } }, true)).toBeNull();
  });

  it('sums over kernels and multiplies by machines', () => {
    const kernels: { specs: ParamRule[]; sweeps: Record<string, SweepChoice> }[] = [
      { specs: [], sweeps: {} },
      { specs: [procs], sweeps: { procs: { mode: 'default' } } },
    ];
    expect(countItems(kernels, true, 2)).toEqual({ perKernel: [1, 3], perRun: 4, total: 8 });
    expect(countItems(kernels, false, 1)).toEqual({ perKernel: [1, 4], perRun: 5, total: 5 });
    expect(countItems([], false, 3)).toEqual({ perKernel: [], perRun: 0, total: 0 });
    expect(countItems([{ specs: [procs], sweeps: { procs: { mode: 'custom', text: '' } } }], false, 2)).toEqual({
      perKernel: [null],
      perRun: null,
      total: null,
    });
  });
});
