// The schedule form (create and edit) as typed, the form filled from a stored schedule, and the form as
// a POST /schedules or PATCH /schedules/{id} body: each chosen kernel with its parameter values and
// sweeps, built by the New run form's own request builder. Pure.
import { buildRunRequest, formFromRequest, type FormErrors } from '@/features/runs';
import type { Kernel, RunItemRequest, RunSettings } from '@/lib/api-types';
import type { Limits } from '@/lib/limits';
import type { FormValue } from '@/lib/params';
import type { SweepChoice } from '@/lib/sweep';
import type { Schedule, ScheduleCreate } from '../api/schedules';

export interface ScheduleForm {
  name: string;
  kernels: string[];
  /** Per kernel id: the values typed for its parameters (the others take their defaults). */
  values: Record<string, Record<string, FormValue>>;
  /** Per kernel id: its swept parameters. */
  sweeps: Record<string, Record<string, SweepChoice>>;
  profile: NonNullable<RunSettings['profile']>;
  select: 'machines' | 'selector';
  machineIds: string[];
  selector: string;
  timing: 'interval' | 'cron';
  intervalMin: string;
  cron: string;
  jitterS: string;
}

export const EMPTY_SCHEDULE_FORM: ScheduleForm = {
  name: '',
  kernels: [],
  values: {},
  sweeps: {},
  profile: 'quick',
  select: 'machines',
  machineIds: [],
  selector: '',
  timing: 'interval',
  intervalMin: '60',
  cron: '0 3 * * *',
  jitterS: '0',
};

/** A stored schedule as the form shows it for editing: its kernels with their values and sweeps (a
 * kernel listed twice shows its first item, as "Run again" does). */
export function formFromSchedule(s: Schedule): ScheduleForm {
  const run = formFromRequest(s.run);
  return {
    name: s.name,
    kernels: run.kernels,
    values: run.values,
    sweeps: run.sweeps,
    profile: s.run.profile ?? 'default',
    select: s.selector !== null ? 'selector' : 'machines',
    machineIds: s.machine_ids ?? [],
    selector: s.selector ?? '',
    timing: s.interval_s != null ? 'interval' : 'cron',
    intervalMin: s.interval_s != null ? String(s.interval_s / 60) : EMPTY_SCHEDULE_FORM.intervalMin,
    cron: s.cron ?? EMPTY_SCHEDULE_FORM.cron,
    jitterS: String(s.jitter_s),
  };
}

export type Refused = { problem: string; errors?: FormErrors };

/**
 * The run's items: each chosen kernel with its values and sweeps, checked by the New run form's builder
 * against the catalog and the server's budgets (errors keyed "<kernel>.<param>", as its picker shows
 * them). A kernel no agent lists now keeps its stored items (or runs with its defaults).
 */
function runItems(f: ScheduleForm, catalog: Kernel[], limits: Limits, base: RunSettings | undefined): RunItemRequest[] | Refused {
  const byId = new Map(catalog.map((k) => [k.id, k]));
  const known = f.kernels.flatMap((id) => {
    const kernel = byId.get(id);
    return kernel ? [{ kernel, values: f.values[id] ?? {}, sweeps: f.sweeps[id] ?? {} }] : [];
  });
  // One machine stands for the selection: the budgets per batch are the server's to check at each firing.
  const built = buildRunRequest({ machineIds: ['schedule'], items: known, profile: f.profile, repetitions: '', minTime: '', limits });
  if (!built.ok) {
    const first = Object.entries(built.errors)[0];
    return { problem: first ? `${first[0]}: ${first[1]}` : 'Check the kernels.', errors: built.errors };
  }
  const items = new Map(built.request.items.map((it) => [it.kernel, it]));
  return f.kernels.flatMap((id) => {
    const item = items.get(id);
    if (item) return [item];
    const kept = (base?.items ?? []).filter((it) => it.kernel === id);
    return kept.length > 0 ? kept : [{ kernel: id, params: {} }];
  });
}

/**
 * The form as a POST /schedules body (also a whole PATCH body: every field given), or the first thing
 * wrong (the server checks the rest against the selected machines, and its 422 names the field).
 * `base`, when editing: the stored run, whose overrides (repetitions, min time, launches) are kept.
 */
export function scheduleBody(f: ScheduleForm, catalog: Kernel[], limits: Limits, base?: RunSettings): ScheduleCreate | Refused {
  if (!f.name.trim()) return { problem: 'Give it a name.' };
  if (f.kernels.length === 0) return { problem: 'Pick at least one kernel.' };
  if (f.select === 'machines' && f.machineIds.length === 0) return { problem: 'Pick at least one machine, or select by labels.' };
  const jitter = f.jitterS.trim() === '' ? 0 : Number(f.jitterS);
  if (!Number.isInteger(jitter) || jitter < 0) return { problem: 'Jitter is a whole number of seconds.' };
  const items = runItems(f, catalog, limits, base);
  if ('problem' in items) return items;
  const body: ScheduleCreate = { name: f.name.trim(), run: { ...base, items, profile: f.profile }, jitter_s: jitter };
  if (f.select === 'machines') body.machine_ids = f.machineIds;
  else body.selector = f.selector.trim();
  if (f.timing === 'interval') {
    const minutes = Number(f.intervalMin);
    if (!(minutes > 0)) return { problem: 'The interval is a number of minutes.' };
    body.interval_s = Math.round(minutes * 60);
  } else {
    if (!f.cron.trim()) return { problem: 'Give a cron line (5 fields, UTC).' };
    body.cron = f.cron.trim();
  }
  return body;
}
