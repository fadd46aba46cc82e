import { useState, type FormEvent, type ReactNode } from 'react';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { Field, Select, SubmitActions } from '@/components/Form';
import { KernelPicker, type FormErrors } from '@/features/runs';
import type { Kernel, Machine, RunSettings } from '@/lib/api-types';
import { useLimits, type Limits } from '@/lib/limits';
import { initialFormValue } from '@/lib/params';
import type { ScheduleCreate } from '../api/schedules';
import { scheduleBody, type ScheduleForm } from '../utils/form';

const PROFILES = [
  { value: 'quick', label: 'quick' },
  { value: 'default', label: 'default' },
  { value: 'thorough', label: 'thorough' },
];

function toggle(list: string[], value: string, on: boolean): string[] {
  return on ? [...list, value] : list.filter((v) => v !== value);
}

export interface ScheduleFormProps {
  /** Prefixes the controls' ids, so a create form and an edit form can share the page. */
  idPrefix: string;
  /** The form's accessible name. */
  title: string;
  initial: ScheduleForm;
  /** Editing: the stored run, whose settings the form has no control for are kept. */
  base?: RunSettings;
  machines: Machine[];
  kernels: Kernel[];
  submit: { label: string; busy: string; pending: boolean };
  error: { title: string; error: unknown } | null;
  /** The body; `done` empties a create form once stored. */
  onSave: (body: ScheduleCreate, done: () => void) => void;
  children?: ReactNode;
}

/** What a schedule runs (kernels, a profile), on which machines (picked, or a label selector resolved at
 * each firing), and when (an interval or a cron line, plus jitter): the create form and the edit form. */
export function ScheduleFormView(props: ScheduleFormProps) {
  const limits = useLimits();
  if (limits.isPending) return <Loading what="the server's limits" />;
  if (limits.isError) return <ErrorMessage title="Could not load the server's limits:" error={limits.error} />;
  return <Filled {...props} limits={limits.data} />;
}

function Filled(props: ScheduleFormProps & { limits: Limits }) {
  const { idPrefix: p, title, initial, base, machines, kernels, submit, error, onSave, children, limits } = props;
  const [form, setForm] = useState<ScheduleForm>(initial);
  const [problem, setProblem] = useState<string | null>(null);
  const [errors, setErrors] = useState<FormErrors>({});
  const set = (patch: Partial<ScheduleForm>) => setForm((f) => ({ ...f, ...patch }));
  const active = machines.filter((m) => m.status === 'active' || form.machineIds.includes(m.id));
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const body = scheduleBody(form, kernels, limits, base);
    if ('problem' in body) {
      setProblem(body.problem);
      setErrors(body.errors ?? {});
      return;
    }
    setProblem(null);
    setErrors({});
    onSave(body, () => setForm(initial));
  };
  return (
    <form className="form" onSubmit={onSubmit} aria-label={title}>
      <div className="row">
        <Field id={`${p}-name`} label="Name">
          <input id={`${p}-name`} value={form.name} onChange={(e) => set({ name: e.target.value })} maxLength={200} placeholder="nightly syscalls" required />
        </Field>
        <Field id={`${p}-profile`} label="Profile">
          <Select id={`${p}-profile`} value={form.profile} onChange={(e) => set({ profile: e.target.value as ScheduleForm['profile'] })} options={PROFILES} />
        </Field>
      </div>
      <KernelsFieldset form={form} setForm={setForm} kernels={kernels} errors={errors} thin={limits.profiles[form.profile]?.thin_sweeps ?? false} />
      <MachinesFieldset p={p} form={form} set={set} active={active} />
      <WhenFieldset p={p} form={form} set={set} />
      <SubmitActions label={submit.label} busy={submit.busy} pending={submit.pending}>
        {children}
      </SubmitActions>
      {problem && (
        <div className="message message-error" role="alert">
          {problem}
        </div>
      )}
      {error && <ErrorMessage title={error.title} error={error.error} />}
    </form>
  );
}

/** Kernels by family, families and kernels in id order. */
function byFamily(kernels: Kernel[]): [string, Kernel[]][] {
  const groups = new Map<string, Kernel[]>();
  for (const k of [...kernels].sort((a, b) => a.id.localeCompare(b.id))) groups.set(k.family, [...(groups.get(k.family) ?? []), k]);
  return [...groups.entries()].sort(([a], [b]) => a.localeCompare(b));
}

/** What each firing runs: the New run form's kernel picker, each chosen kernel with its parameters and
 * sweeps (the server checks them against each selected machine's catalog). */
function KernelsFieldset(props: { form: ScheduleForm; setForm: (f: (prev: ScheduleForm) => ScheduleForm) => void; kernels: Kernel[]; errors: FormErrors; thin: boolean }) {
  const { form, setForm, kernels, errors, thin } = props;
  return (
    <fieldset className="field">
      <legend>Kernels and their parameters</legend>
      {kernels.length === 0 ? (
        <p className="muted">No kernels yet: connect an agent.</p>
      ) : (
        <KernelPicker
          groups={byFamily(kernels)}
          selected={new Set(form.kernels)}
          values={(k) => Object.fromEntries(k.params.map((p) => [p.name, form.values[k.id]?.[p.name] ?? initialFormValue(p)]))}
          sweeps={(k) => form.sweeps[k.id] ?? {}}
          profile={form.profile}
          thin={thin}
          errors={errors}
          onToggle={(id, on) => setForm((f) => ({ ...f, kernels: toggle(f.kernels.filter((k) => k !== id), id, on) }))}
          onParam={(id, name, value) => setForm((f) => ({ ...f, values: { ...f.values, [id]: { ...f.values[id], [name]: value } } }))}
          onSweep={(id, name, choice) =>
            setForm((f) => {
              const { [name]: _, ...rest } = f.sweeps[id] ?? {};
              return { ...f, sweeps: { ...f.sweeps, [id]: choice ? { ...rest, [name]: choice } : rest } };
            })
          }
        />
      )}
    </fieldset>
  );
}

type Part = { p: string; form: ScheduleForm; set: (patch: Partial<ScheduleForm>) => void };

/** Which machines: picked ones, or a label selector resolved at each firing. */
function MachinesFieldset({ p, form, set, active }: Part & { active: Machine[] }) {
  return (
    <fieldset className="field">
      <legend>Machines</legend>
      <label className="checkbox">
        <input type="radio" name={`${p}-select`} checked={form.select === 'machines'} onChange={() => set({ select: 'machines' })} /> these machines
      </label>
      <label className="checkbox">
        <input type="radio" name={`${p}-select`} checked={form.select === 'selector'} onChange={() => set({ select: 'selector' })} /> by labels, at each firing
      </label>
      {form.select === 'machines' ? (
        active.map((m) => (
          <label key={m.id} className="checkbox">
            <input type="checkbox" checked={form.machineIds.includes(m.id)} onChange={(e) => set({ machineIds: toggle(form.machineIds, m.id, e.target.checked) })} /> {m.name || m.id}
          </label>
        ))
      ) : (
        <Field id={`${p}-selector`} label="Label selector (empty: every active machine)">
          <input id={`${p}-selector`} value={form.selector} onChange={(e) => set({ selector: e.target.value })} placeholder="env=prod,!gpu" maxLength={1024} />
        </Field>
      )}
    </fieldset>
  );
}

/** When: every interval or on a cron line, plus jitter. */
function WhenFieldset({ p, form, set }: Part) {
  return (
    <fieldset className="field">
      <legend>When</legend>
      <label className="checkbox">
        <input type="radio" name={`${p}-timing`} checked={form.timing === 'interval'} onChange={() => set({ timing: 'interval' })} /> every
      </label>
      <label className="checkbox">
        <input type="radio" name={`${p}-timing`} checked={form.timing === 'cron'} onChange={() => set({ timing: 'cron' })} /> on a cron line
      </label>
      <div className="row">
        {form.timing === 'interval' ? (
          <Field id={`${p}-interval`} label="Interval (minutes, at least 1)">
            <input id={`${p}-interval`} type="number" min={1} step="any" value={form.intervalMin} onChange={(e) => set({ intervalMin: e.target.value })} />
          </Field>
        ) : (
          <Field id={`${p}-cron`} label="Cron (minute hour day month weekday, UTC)">
            <input id={`${p}-cron`} value={form.cron} onChange={(e) => set({ cron: e.target.value })} maxLength={200} />
          </Field>
        )}
        <Field id={`${p}-jitter`} label="Jitter (seconds)">
          <input id={`${p}-jitter`} type="number" min={0} step={1} value={form.jitterS} onChange={(e) => set({ jitterS: e.target.value })} />
        </Field>
      </div>
    </fieldset>
  );
}
