import { useSearchParams } from 'react-router';
import type { Kernel, Machine } from '@/lib/api-types';
import { useCreateSchedule } from '../api/schedules';
import { EMPTY_SCHEDULE_FORM } from '../utils/form';
import { ScheduleFormView } from './ScheduleFormView';
import { EDIT_PARAM } from './SchedulesTable';

/** A new schedule: the schedule form, empty, posted to POST /schedules; not while one is being edited. */
export function CreateScheduleForm({ machines, kernels }: { machines: Machine[]; kernels: Kernel[] }) {
  const create = useCreateSchedule();
  const [params] = useSearchParams();
  if (params.get(EDIT_PARAM)) return <p className="muted">Editing a schedule above: save or cancel it first.</p>;
  return (
    <ScheduleFormView
      idPrefix="schedule"
      title="New schedule"
      initial={EMPTY_SCHEDULE_FORM}
      machines={machines}
      kernels={kernels}
      submit={{ label: 'Create schedule', busy: 'Creating…', pending: create.isPending }}
      error={create.isError ? { title: 'Could not create the schedule:', error: create.error } : null}
      onSave={(body, done) => create.mutate(body, { onSuccess: done })}
    />
  );
}
