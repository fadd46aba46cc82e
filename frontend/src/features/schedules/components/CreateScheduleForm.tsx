import { useState, type FormEvent } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import { Field, Select, SubmitActions } from '@/components/Form';
import type { Kernel, Machine } from '@/lib/api-types';
import { useCreateSchedule } from '../api/schedules';
import { scheduleBody, type ScheduleForm } from '../utils/describe';

const PROFILES = [
  { value: 'quick', label: 'quick' },
  { value: 'default', label: 'default' },
  { value: 'thorough', label: 'thorough' },
];

const EMPTY: ScheduleForm = {
  name: '',
  kernels: [],
  profile: 'quick',
  select: 'machines',
  machineIds: [],
  selector: '',
  timing: 'interval',
  intervalMin: '60',
  cron: '0 3 * * *',
  jitterS: '0',
};

function toggle(list: string[], value: string, on: boolean): string[] {
  return on ? [...list, value] : list.filter((v) => v !== value);
}

/** A new schedule: what it runs (kernels with their defaults, a profile), on which machines (picked, or
 * a label selector resolved at each firing), and when (an interval or a cron line, plus jitter). */
export function CreateScheduleForm({ machines, kernels }: { machines: Machine[]; kernels: Kernel[] }) {
  const create = useCreateSchedule();
  const [form, setForm] = useState<ScheduleForm>(EMPTY);
  const [problem, setProblem] = useState<string | null>(null);
  const set = (patch: Partial<ScheduleForm>) => setForm((f) => ({ ...f, ...patch }));
  const active = machines.filter((m) => m.status === 'active');
  const submit = (e: FormEvent) => {
    e.preventDefault();
    const body = scheduleBody(form);
    if ('problem' in body) {
      setProblem(body.problem);
      return;
    }
    setProblem(null);
    create.mutate(body, { onSuccess: () => setForm(EMPTY) });
  };
  return (
    <form className="form" onSubmit={submit} aria-label="New schedule">
      <div className="row">
        <Field id="schedule-name" label="Name">
          <input id="schedule-name" value={form.name} onChange={(e) => set({ name: e.target.value })} maxLength={200} placeholder="nightly syscalls" required />
        </Field>
        <Field id="schedule-profile" label="Profile">
          <Select id="schedule-profile" value={form.profile} onChange={(e) => set({ profile: e.target.value as ScheduleForm['profile'] })} options={PROFILES} />
        </Field>
      </div>
      <fieldset className="field">
        <legend>Kernels (their default parameters)</legend>
        {kernels.map((k) => (
          <label key={k.id} className="checkbox">
            <input type="checkbox" checked={form.kernels.includes(k.id)} onChange={(e) => set({ kernels: toggle(form.kernels, k.id, e.target.checked) })} /> {k.id}
          </label>
        ))}
        {kernels.length === 0 && <p className="muted">No kernels yet: connect an agent.</p>}
      </fieldset>
      <MachinesFieldset form={form} set={set} active={active} />
      <WhenFieldset form={form} set={set} />
      <SubmitActions label="Create schedule" busy="Creating…" pending={create.isPending} />
      {problem && (
        <div className="message message-error" role="alert">
          {problem}
        </div>
      )}
      {create.isError && <ErrorMessage title="Could not create the schedule:" error={create.error} />}
    </form>
  );
}

type Part = { form: ScheduleForm; set: (patch: Partial<ScheduleForm>) => void };

/** Which machines: picked ones, or a label selector resolved at each firing. */
function MachinesFieldset({ form, set, active }: Part & { active: Machine[] }) {
  return (
    <fieldset className="field">
      <legend>Machines</legend>
      <label className="checkbox">
        <input type="radio" name="schedule-select" checked={form.select === 'machines'} onChange={() => set({ select: 'machines' })} /> these machines
      </label>
      <label className="checkbox">
        <input type="radio" name="schedule-select" checked={form.select === 'selector'} onChange={() => set({ select: 'selector' })} /> by labels, at each firing
      </label>
      {form.select === 'machines' ? (
        active.map((m) => (
          <label key={m.id} className="checkbox">
            <input type="checkbox" checked={form.machineIds.includes(m.id)} onChange={(e) => set({ machineIds: toggle(form.machineIds, m.id, e.target.checked) })} /> {m.name || m.id}
          </label>
        ))
      ) : (
        <Field id="schedule-selector" label="Label selector (empty: every active machine)">
          <input id="schedule-selector" value={form.selector} onChange={(e) => set({ selector: e.target.value })} placeholder="env=prod,!gpu" maxLength={1024} />
        </Field>
      )}
    </fieldset>
  );
}

/** When: every interval or on a cron line, plus jitter. */
function WhenFieldset({ form, set }: Part) {
  return (
    <fieldset className="field">
      <legend>When</legend>
      <label className="checkbox">
        <input type="radio" name="schedule-timing" checked={form.timing === 'interval'} onChange={() => set({ timing: 'interval' })} /> every
      </label>
      <label className="checkbox">
        <input type="radio" name="schedule-timing" checked={form.timing === 'cron'} onChange={() => set({ timing: 'cron' })} /> on a cron line
      </label>
      <div className="row">
        {form.timing === 'interval' ? (
          <Field id="schedule-interval" label="Interval (minutes, at least 1)">
            <input id="schedule-interval" type="number" min={1} step="any" value={form.intervalMin} onChange={(e) => set({ intervalMin: e.target.value })} />
          </Field>
        ) : (
          <Field id="schedule-cron" label="Cron (minute hour day month weekday, UTC)">
            <input id="schedule-cron" value={form.cron} onChange={(e) => set({ cron: e.target.value })} maxLength={200} />
          </Field>
        )}
        <Field id="schedule-jitter" label="Jitter (seconds)">
          <input id="schedule-jitter" type="number" min={0} step={1} value={form.jitterS} onChange={(e) => set({ jitterS: e.target.value })} />
        </Field>
      </div>
    </fieldset>
  );
}
