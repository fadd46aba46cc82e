import { Fragment } from 'react';
import { useSearchParams } from 'react-router';
import { ConfirmDelete } from '@/components/ConfirmDelete';
import { ErrorMessage } from '@/components/Feedback';
import { DataTable } from '@/components/TableHead';
import { unseen } from '@/components/table-columns';
import { DateTime } from '@/components/Time';
import { useNow } from '@/components/use-now';
import type { Kernel, Machine } from '@/lib/api-types';
import { useDeleteSchedule, useSetPaused, type Schedule } from '../api/schedules';
import { countdown, describeFiring, describeTiming } from '../utils/describe';
import { EditScheduleForm } from './EditScheduleForm';

/** The address parameter naming the schedule being edited. */
export const EDIT_PARAM = 'edit';

function PauseButton({ schedule }: { schedule: Schedule }) {
  const set = useSetPaused();
  const label = schedule.paused ? 'Resume' : 'Pause';
  return (
    <>
      <button
        type="button"
        className="button button-small"
        data-testid="schedule-toggle"
        disabled={set.isPending}
        onClick={() => set.mutate({ id: schedule.id, paused: !schedule.paused })}
      >
        {set.isPending ? `${label}…` : label}
      </button>
      {set.isError && <ErrorMessage title={`Could not ${label.toLowerCase()}:`} error={set.error} />}
    </>
  );
}

function DeleteButton({ schedule }: { schedule: Schedule }) {
  const remove = useDeleteSchedule();
  return (
    <ConfirmDelete
      label="Delete"
      consequence={`Delete the schedule "${schedule.name}"? The runs it made stay; it fires no more.`}
      onDelete={() => remove.mutate(schedule.id)}
      deleting={remove.isPending}
      error={remove.error}
      testId="schedule-delete"
    />
  );
}

/** Which machines a schedule runs on, in a few words. */
function selection(s: Schedule): string {
  if (s.selector !== null) return s.selector ? `labels ${s.selector}` : 'every active machine';
  const n = s.machine_ids?.length ?? 0;
  return n === 1 ? (s.machine_ids?.[0] ?? '') : `${n} machines`;
}

/** The schedules; with the machines and kernels known, each row has an Edit button that opens the
 * schedule form, prefilled, under it (?edit=<id> in the address: one form with the kernel picker on the
 * page at a time, so the New schedule form waits meanwhile). */
export function SchedulesTable(props: { schedules: Schedule[]; machines?: Machine[]; kernels?: Kernel[] }) {
  const { schedules, machines, kernels } = props;
  const now = useNow(1000);
  const [params, setParams] = useSearchParams();
  const editing = params.get(EDIT_PARAM);
  const setEditing = (id: string | null) =>
    setParams(
      (prev) => {
        const next = new URLSearchParams(prev);
        if (id) next.set(EDIT_PARAM, id);
        else next.delete(EDIT_PARAM);
        return next;
      },
      { replace: true },
    );
  if (schedules.length === 0) return <p className="muted">No schedules yet: create one below.</p>;
  return (
    <DataTable columns={['Name', 'Runs', 'On', 'When', 'Next firing', 'Last firing', unseen('Actions')]}>
      {schedules.map((s) => (
        <Fragment key={s.id}>
          <tr data-testid="schedule-row" data-schedule-id={s.id}>
            <td className="strong">{s.name}</td>
            <td>{s.run.items.map((it) => it.kernel).join(', ')}</td>
            <td>{selection(s)}</td>
            <td>{describeTiming(s)}</td>
            <td data-testid="schedule-next">
              {s.next_fire_at ? <span title={new Date(s.next_fire_at).toISOString()}>{countdown(s.next_fire_at, now)}</span> : <span className="muted">paused</span>}
            </td>
            <td data-testid="schedule-last">
              {describeFiring(s.last_firing)}
              {s.last_firing && (
                <>
                  {' '}
                  <span className="muted">
                    (<DateTime value={s.last_firing.fired_at} />)
                  </span>
                </>
              )}
            </td>
            <td>
              <button
                type="button"
                className="button button-small"
                data-testid="schedule-edit"
                aria-expanded={editing === s.id}
                disabled={!machines || !kernels}
                onClick={() => setEditing(editing === s.id ? null : s.id)}
              >
                Edit
              </button>{' '}
              <PauseButton schedule={s} /> <DeleteButton schedule={s} />
            </td>
          </tr>
          {editing === s.id && machines && kernels && (
            <tr data-testid="schedule-edit-row">
              <td colSpan={7}>
                <EditScheduleForm schedule={s} machines={machines} kernels={kernels} onDone={() => setEditing(null)} />
              </td>
            </tr>
          )}
        </Fragment>
      ))}
    </DataTable>
  );
}
