// The schedule form (create and edit) as typed, the form filled from a stored schedule, and the form as
// a POST /schedules or PATCH /schedules/{id} body. Pure.
import type { Schedule, ScheduleCreate } from '../api/schedules';
import type { RunItemRequest, RunSettings } from '@/lib/api-types';

export interface ScheduleForm {
  name: string;
  kernels: string[];
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
  profile: 'quick',
  select: 'machines',
  machineIds: [],
  selector: '',
  timing: 'interval',
  intervalMin: '60',
  cron: '0 3 * * *',
  jitterS: '0',
};

/** A stored schedule as the form shows it for editing (a kernel listed twice is one box). */
export function formFromSchedule(s: Schedule): ScheduleForm {
  return {
    name: s.name,
    kernels: [...new Set(s.run.items.map((it) => it.kernel))],
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

/** The run's items: a kernel the schedule ran before keeps its stored items (params and sweeps); a new
 * one runs with its defaults. */
function runItems(kernels: string[], base: RunSettings | undefined): RunItemRequest[] {
  return kernels.flatMap((kernel) => {
    const kept = (base?.items ?? []).filter((it) => it.kernel === kernel);
    return kept.length > 0 ? kept : [{ kernel, params: {} }];
  });
}

/**
 * The form as a POST /schedules body (also a whole PATCH body: every field given), or the first thing
 * missing (the server checks the rest, and its 422 names the field). `base`, when editing: the stored
 * run, whose other settings (overrides, items' params) are kept.
 */
export function scheduleBody(f: ScheduleForm, base?: RunSettings): ScheduleCreate | { problem: string } {
  if (!f.name.trim()) return { problem: 'Give it a name.' };
  if (f.kernels.length === 0) return { problem: 'Pick at least one kernel.' };
  if (f.select === 'machines' && f.machineIds.length === 0) return { problem: 'Pick at least one machine, or select by labels.' };
  const jitter = f.jitterS.trim() === '' ? 0 : Number(f.jitterS);
  if (!Number.isInteger(jitter) || jitter < 0) return { problem: 'Jitter is a whole number of seconds.' };
  const body: ScheduleCreate = {
    name: f.name.trim(),
    run: { ...base, items: runItems(f.kernels, base), profile: f.profile },
    jitter_s: jitter,
  };
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
