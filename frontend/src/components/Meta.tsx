import type { ReactNode } from 'react';

/** One entry of a description list (<dl className="meta">…): its term, and its value with the value's test id, tooltip and class. */
export function Meta(props: { term: ReactNode; testId?: string; title?: string; className?: string; children: ReactNode }) {
  const { term, testId, title, className, children } = props;
  return (
    <div>
      <dt>{term}</dt>
      <dd data-testid={testId} title={title} className={className}>
        {children}
      </dd>
    </div>
  );
}
