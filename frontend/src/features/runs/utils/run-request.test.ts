import { describe, expect, it } from 'vitest';
import type { Kernel, RunRequest } from '@/lib/api-types';
import { aKernel, aParam, LIMITS } from '@/lib/test-fixtures';
import { buildRunRequest, formErrorsFromServer, formFromRequest } from './run-request';

const threads = aParam({ name: 'threads', type: 'int', default: 1, min: 1, max: 4096, sweep: [1, 2, 4, 8] });
const placement = aParam({
  name: 'placement',
  type: 'choice',
  default: 'same_core',
  choices: ['same_core', 'cross_core', 'unpinned'],
});

const pipe: Kernel = aKernel('ctxswitch.pipe', { title: 'Pipe ping-pong', params: [placement, threads], machines: ['m1'] });
const getppid: Kernel = { ...pipe, id: 'syscall.getppid', family: 'syscall', params: [] };

const base = { profile: 'default' as const, repetitions: '', minTime: '', limits: LIMITS };

describe('buildRunRequest', () => {
  it('builds a single-machine POST /runs body', () => {
    const built = buildRunRequest({
      ...base,
      machineIds: ['m1'],
      items: [
        { kernel: getppid, values: {} },
        { kernel: pipe, values: { placement: 'cross_core', threads: '2' } },
      ],
      repetitions: '5',
      minTime: '0.05',
    });
    expect(built).toEqual({
      ok: true,
      request: {
        machine_id: 'm1',
        items: [
          { kernel: 'syscall.getppid', params: {} },
          { kernel: 'ctxswitch.pipe', params: { placement: 'cross_core', threads: 2 } },
        ],
        repetitions: 5,
        min_time_s: 0.05,
      },
    });
  });

  it('sends machine_ids, the profile and sweeps (default points or typed custom values)', () => {
    const built = buildRunRequest({
      ...base,
      machineIds: ['m1', 'm2', 'm1'],
      profile: 'quick',
      items: [
        {
          kernel: pipe,
          values: { placement: 'cross_core', threads: 'ignored while swept' },
          sweeps: { threads: { mode: 'default' }, placement: { mode: 'custom', text: 'same_core, unpinned' } },
        },
      ],
    });
    expect(built).toEqual({
      ok: true,
      request: {
        machine_ids: ['m1', 'm2'],
        profile: 'quick',
        items: [
          { kernel: 'ctxswitch.pipe', params: {}, sweep: { threads: 'default', placement: ['same_core', 'unpinned'] } },
        ],
      },
    });
  });

  it('leaves the profile, repetitions and min time out when they are the defaults', () => {
    const built = buildRunRequest({ ...base, machineIds: ['m1'], items: [{ kernel: getppid, values: {} }] });
    expect(built.ok && built.request).toEqual({ machine_id: 'm1', items: [{ kernel: 'syscall.getppid', params: {} }] });
  });

  it('reports every problem keyed like the form', () => {
    expect(buildRunRequest({ ...base, machineIds: [], items: [], repetitions: '0', minTime: 'soon' })).toEqual({
      ok: false,
      errors: {
        machine: 'Choose at least one machine.',
        items: 'Choose at least one kernel.',
        repetitions: 'Repetitions must be between 1 and 1000',
        min_time_s: 'Min time must be a number',
      },
    });
    const bad = buildRunRequest({
      ...base,
      machineIds: ['m1'],
      items: [{ kernel: pipe, values: { placement: 'moon', threads: '1' }, sweeps: { threads: { mode: 'custom', text: '1, 9999' } } }],
    });
    expect(bad).toEqual({
      ok: false,
      errors: {
        'ctxswitch.pipe.placement': 'placement must be one of same_core, cross_core, unpinned',
        'ctxswitch.pipe.threads': '"9999": threads must be between 1 and 4096',
      },
    });
    const noDefault = buildRunRequest({
      ...base,
      machineIds: ['m1'],
      items: [{ kernel: pipe, values: {}, sweeps: { placement: { mode: 'default' } } }],
    });
    expect(noDefault).toEqual({ ok: false, errors: { 'ctxswitch.pipe.placement': 'placement has no default sweep' } });
  });

  it('refuses a run of more than 1000 items', () => {
    const many = Array.from({ length: 1001 }, (_, i) => String(i + 1)).join(',');
    const built = buildRunRequest({
      ...base,
      machineIds: ['m1'],
      items: [{ kernel: pipe, values: {}, sweeps: { threads: { mode: 'custom', text: many } } }],
    });
    expect(built.ok).toBe(false);
    expect(!built.ok && built.errors.items).toMatch(/1001 items; at most 1000/);
  });

  it("checks the server's served budgets and profiles, not copies", () => {
    const form = { ...base, machineIds: ['m1', 'm2'], items: [{ kernel: pipe, values: {}, sweeps: { threads: { mode: 'default' as const } } }] };
    // threads' default sweep has 4 points: within a run budget of 4, over one of 3
    expect(buildRunRequest({ ...form, limits: { ...LIMITS, max_items_per_run: 4 } }).ok).toBe(true);
    const over = buildRunRequest({ ...form, limits: { ...LIMITS, max_items_per_run: 3 } });
    expect(!over.ok && over.errors.items).toMatch(/4 items; at most 3 are allowed/);
    // two machines × 4 items over a batch budget of 7
    const batch = buildRunRequest({ ...form, limits: { ...LIMITS, max_batch_items: 7 } });
    expect(!batch.ok && batch.errors.items).toMatch(/8 items in all; at most 7 are allowed in one batch/);
    // a profile that thins default sweeps (as the server says) counts 3 of the 4 points
    const thinning = { ...LIMITS, max_items_per_run: 3, profiles: { ...LIMITS.profiles, default: { ...LIMITS.profiles.default, thin_sweeps: true } } };
    expect(buildRunRequest({ ...form, limits: thinning }).ok).toBe(true);
    // a string parameter within the kernel grammar's 4096 characters but over the served request budget
    const store = aKernel('storage.write', { params: [aParam({ name: 'dir', type: 'string', default: '/tmp' })] });
    const long = buildRunRequest({ ...base, machineIds: ['m1'], items: [{ kernel: store, values: { dir: `/${'d'.repeat(20)}` } }], limits: { ...LIMITS, max_param_string: 16 } });
    expect(long).toEqual({ ok: false, errors: { 'storage.write.dir': 'dir must be at most 16 characters' } });
  });
});

describe('formErrorsFromServer', () => {
  it('puts server field errors beside their controls', () => {
    const request: RunRequest = {
      machine_ids: ['m1', 'm2'],
      items: [
        { kernel: 'syscall.getppid', params: {} },
        { kernel: 'ctxswitch.pipe', params: { placement: 'moon' } },
      ],
    };
    expect(
      formErrorsFromServer(
        [
          { field: 'items[1].params.placement', message: 'bad placement' },
          { field: 'items[1].sweep.threads', message: 'bad sweep' },
          { field: 'repetitions', message: 'too many' },
          { field: 'machine_ids[1]', message: 'unknown machine m2' },
          { field: 'items[0].kernel', message: 'ignored here' },
        ],
        request,
      ),
    ).toEqual({
      'ctxswitch.pipe.placement': 'bad placement',
      'ctxswitch.pipe.threads': 'bad sweep',
      repetitions: 'too many',
      machine: 'unknown machine m2',
    });
  });
});

describe('formFromRequest', () => {
  it('gives back the form that posts the same request (profile, params, sweeps, overrides, launches)', () => {
    const request: RunRequest = {
      machine_id: 'm1',
      profile: 'quick',
      repetitions: 4,
      min_time_s: 0.02,
      launches: 2,
      items: [
        { kernel: 'ctxswitch.pipe', params: { placement: 'cross_core' }, sweep: { threads: [1, 2, 4] } },
        { kernel: 'syscall.getppid', params: {} },
      ],
    };
    const form = formFromRequest(request);
    expect(form.kernels).toEqual(['ctxswitch.pipe', 'syscall.getppid']);
    expect(form.sweeps['ctxswitch.pipe']).toEqual({ threads: { mode: 'custom', text: '1, 2, 4' } });
    const byId = new Map([pipe, getppid].map((k) => [k.id, k]));
    const again = buildRunRequest({
      machineIds: ['m1'],
      items: form.kernels.map((id) => ({ kernel: byId.get(id)!, values: form.values[id] ?? {}, sweeps: form.sweeps[id] })),
      profile: form.profile,
      repetitions: form.repetitions,
      minTime: form.minTime,
      launches: form.launches,
      limits: LIMITS,
    });
    expect(again).toEqual({ ok: true, request });
  });

  it('keeps a default sweep as "default" and a bool as a checkbox value', () => {
    const form = formFromRequest({ items: [{ kernel: 'k', params: { pin: true }, sweep: { threads: 'default' } }] });
    expect(form.profile).toBe('default');
    expect(form.repetitions).toBe('');
    expect(form.values.k).toEqual({ pin: true });
    expect(form.sweeps.k).toEqual({ threads: { mode: 'default' } });
    expect(form.launches).toBeUndefined();
  });
});
