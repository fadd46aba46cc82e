import type { Kernel, Machine } from '@/lib/api-types';
import { useUpdateSchedule, type Schedule } from '../api/schedules';
import { formFromSchedule } from '../utils/form';
import { ScheduleFormView } from './ScheduleFormView';

/** A stored schedule in the schedule form, prefilled; Save sends it with PATCH /schedules/{id}. */
export function EditScheduleForm(props: { schedule: Schedule; machines: Machine[]; kernels: Kernel[]; onDone: () => void }) {
  const { schedule, machines, kernels, onDone } = props;
  const update = useUpdateSchedule();
  return (
    <ScheduleFormView
      idPrefix={`edit-${schedule.id}`}
      title={`Edit schedule ${schedule.name}`}
      initial={formFromSchedule(schedule)}
      base={schedule.run}
      machines={machines}
      kernels={kernels}
      submit={{ label: 'Save schedule', busy: 'Saving…', pending: update.isPending }}
      error={update.isError ? { title: 'Could not save the schedule:', error: update.error } : null}
      onSave={(body) => update.mutate({ id: schedule.id, body }, { onSuccess: onDone })}
    >
      <button type="button" className="button" onClick={onDone}>
        Cancel
      </button>
    </ScheduleFormView>
  );
}
