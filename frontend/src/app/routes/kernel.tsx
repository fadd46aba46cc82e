import { Link, Navigate, useParams } from 'react-router';
import { EmptyState, ErrorMessage, Loading } from '@/components/Feedback';
import { useKernels } from '@/features/kernels/api/kernels';
import { KernelCard } from '@/features/kernels/components/KernelCard';
import { LatestRanking } from '@/features/kernels/components/LatestRanking';
import { Seeds } from '@/features/kernels/components/Seeds';
import { findKernel } from '@/features/kernels/utils/catalog';
import { useMachines } from '@/features/machines/api/machines';
import { useDocumentTitle } from './title';
import { paths } from '../paths';

/** One kernel's catalog entry at /kernels/<id>, where the run and compare tables link a kernel's name. */
export function KernelPage() {
  const { id = '' } = useParams();
  useDocumentTitle(id);
  const kernels = useKernels();
  const machines = useMachines();
  if (kernels.isPending) return <Loading what="the kernel" />;
  if (kernels.isError) return <ErrorMessage title="Could not load kernels:" error={kernels.error} />;
  const kernel = findKernel(kernels.data, id);
  if (!kernel) {
    return (
      <EmptyState title="Kernel not found">
        <p>
          No connected agent lists a kernel <code>{id}</code>. See <Link to={paths.kernels}>all kernels</Link>.
        </p>
      </EmptyState>
    );
  }
  // An old id (a link from before the kernel was renamed): the page of its new id.
  if (kernel.id !== id) return <Navigate replace to={`/kernels/${encodeURIComponent(kernel.id)}`} />;
  const usesSeed = kernel.seed_reference !== null && kernel.seed_reference !== undefined;
  return (
    <>
      <h1>
        <code>{kernel.id}</code> <span className="muted">{kernel.title !== kernel.id ? kernel.title : ''}</span>
      </h1>
      <p className="lead">
        {kernel.family} family · <Link to={`${paths.kernels}?family=${encodeURIComponent(kernel.family)}`}>its other kernels</Link> · <Link to={paths.kernels}>all kernels</Link>
      </p>
      <KernelCard kernel={kernel} machineIds={(machines.data ?? []).map((m) => m.id)} />
      <h2>Latest on every machine</h2>
      <LatestRanking kernelId={kernel.id} />
      {usesSeed && <Seeds />}
    </>
  );
}

export default KernelPage;
