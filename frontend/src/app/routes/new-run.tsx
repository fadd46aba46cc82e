import { ErrorMessage, Loading } from '@/components/Feedback';
import { useKernels } from '@/features/kernels/api/kernels';
import { useMachines } from '@/features/machines/api/machines';
import { NoMachines } from '@/features/machines/components/NoMachines';
import { NewRunForm } from '@/features/runs/components/NewRunForm';
import { useDocumentTitle } from './title';

export function NewRunPage() {
  useDocumentTitle('New run');
  const machines = useMachines({ poll: true });
  const kernels = useKernels();
  return (
    <>
      <h1>New run</h1>
      <p className="lead">Pick a machine and the kernels to measure on it. Kernels run one at a time.</p>
      {(machines.isPending || kernels.isPending) && <Loading what="machines and kernels" />}
      {machines.isError && <ErrorMessage title="Could not load machines:" error={machines.error} />}
      {kernels.isError && <ErrorMessage title="Could not load kernels:" error={kernels.error} />}
      {machines.data && kernels.data && (machines.data.length === 0 ? <NoMachines /> : <NewRunForm machines={machines.data} kernels={kernels.data} />)}
    </>
  );
}

export default NewRunPage;
