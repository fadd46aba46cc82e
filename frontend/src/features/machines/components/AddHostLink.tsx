import { Link } from 'react-router';
import { paths } from '@/app/paths';

/** "Add a host" (to the Add hosts page) and what it does, where the machines page suggests a next step. */
export function AddHostLink({ primary = false, children }: { primary?: boolean; children: string }) {
  return (
    <>
      <Link className={primary ? 'button button-primary' : 'button'} to={paths.hosts} data-testid="add-first-host">
        Add a host
      </Link>{' '}
      <span className="muted">{children}</span>
    </>
  );
}
