import { describe, expect, it } from 'vitest';
import type { Schedule } from '../api/schedules';
import { formFromSchedule, scheduleBody, type ScheduleForm } from './form';

describe('scheduleBody', () => {
  const form: ScheduleForm = {
    name: ' nightly ',
    kernels: ['syscall.getppid', 'ctxsw.pipe'],
    profile: 'quick',
    select: 'machines',
    machineIds: ['m1'],
    selector: '',
    timing: 'interval',
    intervalMin: '15',
    cron: '',
    jitterS: '30',
  };
  it('builds the POST body', () => {
    expect(scheduleBody(form)).toEqual({
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
    expect(scheduleBody({ ...form, select: 'selector', selector: ' env=prod ', timing: 'cron', cron: '0 3 * * *', jitterS: '' })).toMatchObject({
      selector: 'env=prod',
      cron: '0 3 * * *',
      jitter_s: 0,
    });
  });
  it('names what is missing', () => {
    expect(scheduleBody({ ...form, name: ' ' })).toEqual({ problem: 'Give it a name.' });
    expect(scheduleBody({ ...form, kernels: [] })).toHaveProperty('problem');
    expect(scheduleBody({ ...form, machineIds: [] })).toHaveProperty('problem');
    expect(scheduleBody({ ...form, intervalMin: 'x' })).toHaveProperty('problem');
    expect(scheduleBody({ ...form, jitterS: '1.5' })).toHaveProperty('problem');
    expect(scheduleBody({ ...form, timing: 'cron', cron: '' })).toHaveProperty('problem');
  });
});

describe('formFromSchedule', () => {
  const stored: Schedule = {
    id: 's1',
    name: 'nightly',
    run: {
      items: [
        { kernel: 'ctxsw.pipe', params: { threads: 2 }, sweep: { size: [1, 2] } },
        { kernel: 'ctxsw.pipe', params: { threads: 4 } },
        { kernel: 'syscall.getppid', params: {} },
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
  it('fills the form from the stored schedule', () => {
    expect(formFromSchedule(stored)).toEqual({
      name: 'nightly',
      kernels: ['ctxsw.pipe', 'syscall.getppid'],
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
  it('saves back what it was given, keeping the stored items and overrides of kept kernels', () => {
    const f = formFromSchedule(stored);
    const body = scheduleBody({ ...f, kernels: ['ctxsw.pipe', 'mem.copy'], jitterS: '10' }, stored.run);
    expect(body).toEqual({
      name: 'nightly',
      run: {
        items: [stored.run.items[0], stored.run.items[1], { kernel: 'mem.copy', params: {} }],
        profile: 'thorough',
        repetitions: 7,
      },
      selector: 'env=prod',
      cron: '0 3 * * 1-5',
      jitter_s: 10,
    });
  });
});
