import { Link } from 'react-router';
import { kernelPath } from '@/lib/query-state';

/** A kernel id that opens its catalog entry, wherever a table names a kernel. */
export function KernelLink({ id }: { id: string }) {
  return (
    <Link to={kernelPath(id)} className="kernel-link" data-testid="kernel-link" title="What this kernel measures">
      <code>{id}</code>
    </Link>
  );
}
