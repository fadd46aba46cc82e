import { Navigate, useSearchParams } from 'react-router';
import { ErrorMessage, Loading } from '@/components/Feedback';
import { useKernels } from '@/features/kernels/api/kernels';
import { currentKernelIds } from '@/features/kernels/utils/catalog';
import { useMachines } from '@/features/machines/api/machines';
import { NoMachines } from '@/features/machines/components/NoMachines';
import { useRun } from '@/features/runs/api/runs';
import { NewRunForm } from '@/features/runs/components/NewRunForm';
import { decodeNewRunQuery, encodeNewRunQuery } from '@/lib/query-state';
import { formFromRequest } from '@/features/runs/utils/run-request';
import { freshness } from '@/lib/freshness';
import { useLimits } from '@/lib/limits';
import { useDocumentTitle } from './title';

export function NewRunPage() {
  useDocumentTitle('New run');
  const [searchParams] = useSearchParams();
  // Read once: the form writes its own changes back to the address, the run to repeat stays.
  const from = decodeNewRunQuery(searchParams).from ?? '';
  const machines = useMachines({ poll: true });
  const kernels = useKernels();
  const limits = useLimits();
  const repeated = useRun(from, { enabled: from !== '' });
  // From the first failed refresh: the pickers' states unknown, the error above the form.
  const { problem: machinesProblem, stale } = freshness(machines);
  const waiting = machines.isPending || kernels.isPending || limits.isPending || (from !== '' && repeated.isPending);
  const repeat = repeated.data?.request ? formFromRequest(repeated.data.request) : undefined;
  // ?kernel= with an old id (a renamed kernel): the same form with its new id.
  const asked = decodeNewRunQuery(searchParams);
  const current = kernels.data ? currentKernelIds(kernels.data, asked.kernels) : asked.kernels;
  if (current.join() !== asked.kernels.join()) return <Navigate replace to={{ search: `?${encodeNewRunQuery({ ...asked, kernels: current })}` }} />;
  return (
    <>
      <h1>New run</h1>
      <p className="lead">
        {repeat ? 'The same kernels, parameters, sweeps and profile as the run repeated: change what you like.' : 'Pick a machine and the kernels to measure on it. One kernel process runs at a time: each item is measured in several launches that take turns round-robin (item 1, item 2, …, then item 1 again), so every item shows running from the start and all finish in the last round.'}
      </p>
      {waiting && <Loading what={from ? 'machines, kernels and the run to repeat' : 'machines and kernels'} />}
      {machinesProblem !== null && (
        <ErrorMessage title={machines.data && stale ? 'Could not refresh the machines: their states are unknown.' : 'Could not load machines:'} error={machinesProblem} />
      )}
      {kernels.isError && <ErrorMessage title="Could not load kernels:" error={kernels.error} />}
      {limits.isError && <ErrorMessage title="Could not load the server's profiles and limits:" error={limits.error} />}
      {repeated.isError && <ErrorMessage title="Could not load the run to repeat:" error={repeated.error} />}
      {!waiting &&
        machines.data &&
        kernels.data &&
        limits.data &&
        (machines.data.length === 0 ? <NoMachines /> : <NewRunForm machines={machines.data} kernels={kernels.data} limits={limits.data} repeat={repeat} stale={stale} />)}
    </>
  );
}

export default NewRunPage;
