import { describe, expect, it } from 'vitest';
import type { Kernel } from '@/lib/api-types';
import { aKernel, aParam, LIMITS } from '@/lib/test-fixtures';
import type { Schedule } from '../api/schedules';
import { EMPTY_SCHEDULE_FORM, formFromSchedule, scheduleBody, type ScheduleForm } from './form';

const threads = aParam({ name: 'threads', type: 'int', default: 1, min: 1, max: 64, sweep: [1, 2, 4, 8] });
const placement = aParam({ name: 'placement', type: 'choice', default: 'same_core', choices: ['same_core', 'cross_core'] });
const pipe: Kernel = aKernel('ctxsw.pipe', { params: [placement, threads], machines: ['m1'] });
const getppid: Kernel = aKernel('syscall.getppid', { family: 'syscall', params: [], machines: ['m1'] });
const CATALOG = [pipe, getppid];

describe('scheduleBody', () => {
  const form: ScheduleForm = {
    ...EMPTY_SCHEDULE_FORM,
    name: ' nightly ',
    kernels: ['syscall.getppid', 'ctxsw.pipe'],
    machineIds: ['m1'],
    intervalMin: '15',
    cron: '',
    jitterS: '30',
  };
  it('builds the POST body, a kernel with nothing typed taking its defaults (params left out)', () => {
    expect(scheduleBody(form, CATALOG, LIMITS)).toEqual({
      name: 'nightly',
      run: {
        items: [
          { kernel: 'syscall.getppid', params: {} },
          { kernel: 'ctxsw.pipe', params: {} },
        ],
        profile: 'quick',
      },
      machine_ids: ['m1'],
      interval_s: 900,
      jitter_s: 30,
    });
    expect(scheduleBody({ ...form, select: 'selector', selector: ' env=prod ', timing: 'cron', cron: '0 3 * * *', jitterS: '' }, CATALOG, LIMITS)).toMatchObject({
      selector: 'env=prod',
      cron: '0 3 * * *',
      jitter_s: 0,
    });
  });
  it('gives each kernel its own values and sweeps, as POST /runs items', () => {
    const typed = { ...form, values: { 'ctxsw.pipe': { placement: 'cross_core' } }, sweeps: { 'ctxsw.pipe': { threads: { mode: 'custom' as const, text: '2, 16' } } } };
    const body = scheduleBody(typed, CATALOG, LIMITS);
    expect(body).toHaveProperty('run.items', [
      { kernel: 'syscall.getppid', params: {} },
      { kernel: 'ctxsw.pipe', params: { placement: 'cross_core' }, sweep: { threads: [2, 16] } },
    ]);
    const defaults = scheduleBody({ ...typed, sweeps: { 'ctxsw.pipe': { threads: { mode: 'default' } } } }, CATALOG, LIMITS);
    expect(defaults).toHaveProperty('run.items.1.sweep', { threads: 'default' });
  });
  it('names a bad value by its kernel and parameter', () => {
    const bad = scheduleBody({ ...form, values: { 'ctxsw.pipe': { threads: '999' } } }, CATALOG, LIMITS);
    expect(bad).toHaveProperty('errors.ctxsw\\.pipe\\.threads');
    expect(bad).toMatchObject({ problem: expect.stringContaining('ctxsw.pipe.threads') as string });
    const sweep = scheduleBody({ ...form, sweeps: { 'ctxsw.pipe': { threads: { mode: 'custom', text: '2, x' } } } }, CATALOG, LIMITS);
    expect(sweep).toHaveProperty('problem');
  });
  it('names what is missing', () => {
    expect(scheduleBody({ ...form, name: ' ' }, CATALOG, LIMITS)).toEqual({ problem: 'Give it a name.' });
    expect(scheduleBody({ ...form, kernels: [] }, CATALOG, LIMITS)).toHaveProperty('problem');
    expect(scheduleBody({ ...form, machineIds: [] }, CATALOG, LIMITS)).toHaveProperty('problem');
    expect(scheduleBody({ ...form, intervalMin: 'x' }, CATALOG, LIMITS)).toHaveProperty('problem');
    expect(scheduleBody({ ...form, jitterS: '1.5' }, CATALOG, LIMITS)).toHaveProperty('problem');
    expect(scheduleBody({ ...form, timing: 'cron', cron: '' }, CATALOG, LIMITS)).toHaveProperty('problem');
  });
});

describe('formFromSchedule', () => {
  const stored: Schedule = {
    id: 's1',
    name: 'nightly',
    run: {
      items: [
        { kernel: 'ctxsw.pipe', params: { placement: 'cross_core' }, sweep: { threads: [1, 2] } },
        { kernel: 'ctxsw.pipe', params: { threads: 4 } },
        { kernel: 'gone.kernel', params: { x: 1 } },
      ],
      profile: 'thorough',
      repetitions: 7,
    },
    machine_ids: null,
    selector: 'env=prod',
    interval_s: null,
    cron: '0 3 * * 1-5',
    jitter_s: 45,
    paused: false,
    next_fire_at: null,
    next_due_at: null,
    created_by: 'admin',
    created_at: '2026-01-01T00:00:00Z',
    updated_at: '2026-01-01T00:00:00Z',
    last_firing: null,
  };
  it('fills the form from the stored schedule, values and sweeps per kernel', () => {
    expect(formFromSchedule(stored)).toEqual({
      name: 'nightly',
      kernels: ['ctxsw.pipe', 'gone.kernel'],
      values: { 'ctxsw.pipe': { placement: 'cross_core' }, 'gone.kernel': { x: '1' } },
      sweeps: { 'ctxsw.pipe': { threads: { mode: 'custom', text: '1, 2' } }, 'gone.kernel': {} },
      profile: 'thorough',
      select: 'selector',
      machineIds: [],
      selector: 'env=prod',
      timing: 'cron',
      intervalMin: '60',
      cron: '0 3 * * 1-5',
      jitterS: '45',
    });
    expect(formFromSchedule({ ...stored, selector: null, machine_ids: ['m1'], cron: null, interval_s: 5400 })).toMatchObject({
      select: 'machines',
      machineIds: ['m1'],
      timing: 'interval',
      intervalMin: '90',
    });
  });
  it('saves back the same run, keeping the overrides and the items of a kernel no agent lists now', () => {
    const body = scheduleBody({ ...formFromSchedule(stored), kernels: ['ctxsw.pipe', 'gone.kernel', 'syscall.getppid'], jitterS: '10' }, CATALOG, LIMITS, stored.run);
    expect(body).toEqual({
      name: 'nightly',
      run: {
        items: [
          { kernel: 'ctxsw.pipe', params: { placement: 'cross_core' }, sweep: { threads: [1, 2] } },
          { kernel: 'gone.kernel', params: { x: 1 } },
          { kernel: 'syscall.getppid', params: {} },
        ],
        profile: 'thorough',
        repetitions: 7,
      },
      selector: 'env=prod',
      cron: '0 3 * * 1-5',
      jitter_s: 10,
    });
  });
});
