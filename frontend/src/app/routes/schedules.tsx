import { useQuery } from '@tanstack/react-query';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { kernelsQuery } from '@/features/kernels/api/kernels';
import { machinesQuery } from '@/features/machines/api/machines';
import { useSchedules } from '@/features/schedules/api/schedules';
import { CreateScheduleForm } from '@/features/schedules/components/CreateScheduleForm';
import { SchedulesTable } from '@/features/schedules/components/SchedulesTable';
import { useDocumentTitle } from './title';

/** /schedules: run specs the server fires on an interval or a cron line, with their last outcome. */
export function SchedulesPage() {
  useDocumentTitle('Schedules');
  const schedules = useSchedules();
  const machines = useQuery(machinesQuery());
  const kernels = useQuery(kernelsQuery());
  return (
    <>
      <h1>Schedules</h1>
      <p className="lead">
        The server starts these runs itself, every interval or on a cron line (UTC). A machine whose run from the same schedule is still queued or running
        is skipped for that firing.
      </p>
      <section>
        <h2>Schedules</h2>
        {schedules.isPending && <Loading what="the schedules" />}
        {schedules.isError && <ErrorMessage title="Could not load the schedules:" error={schedules.error} />}
        {schedules.data && <SchedulesTable schedules={schedules.data} machines={machines.data} kernels={kernels.data} />}
      </section>
      <section>
        <h2>New schedule</h2>
        {(machines.isPending || kernels.isPending) && <Loading what="the machines and kernels" />}
        {machines.data && kernels.data && <CreateScheduleForm machines={machines.data} kernels={kernels.data} />}
      </section>
    </>
  );
}

export default SchedulesPage;
