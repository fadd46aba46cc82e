import type { Interference } from '@/lib/api-types';
import { interferenceMark } from '@/lib/interference';

/** "throttled 48 % · disturbed 30 % of samples" beside a figure, with every fact in its tooltip. */
export function InterferenceBadge({ value }: { value: Interference | null | undefined }) {
  const mark = interferenceMark(value);
  if (mark === null) return null;
  return (
    <span className="badge badge-interference" data-testid="result-interference" title={mark.title}>
      {mark.label}
    </span>
  );
}
