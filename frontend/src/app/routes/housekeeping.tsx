import type { ComponentProps, ReactNode } from 'react';
import { useNavigate } from 'react-router';
import { ConfirmDelete } from '@/components/ConfirmDelete';

/** A page's delete section: the confirming button for `remove`, then off to `then` (replacing the page). */
export function Housekeeping({
  remove,
  then,
  children,
  ...confirm
}: Omit<ComponentProps<typeof ConfirmDelete>, 'onDelete' | 'deleting' | 'error'> & {
  remove: { mutate: (v: undefined, options: { onSuccess: () => void }) => void; isPending: boolean; error: unknown };
  then: string;
  children?: ReactNode;
}) {
  const navigate = useNavigate();
  return (
    <div className="housekeeping">
      <ConfirmDelete
        {...confirm}
        onDelete={() => remove.mutate(undefined, { onSuccess: () => void navigate(then, { replace: true }) })}
        deleting={remove.isPending}
        error={remove.error}
      />
      {children}
    </div>
  );
}
