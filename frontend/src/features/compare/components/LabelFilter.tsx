import { ErrorMessage } from '@/components/Feedback';
import { SelectorInput } from '@/components/SelectorInput';
import type { CompareView } from '@/lib/compare-query';

/** Which machines match the view's selector, as the server answers GET /machines?selector= (the
 * machines page's filter); null ids: not known yet. */
export type LabelMatch = { ids: ReadonlySet<string> | null; error: unknown };

/** The machine picker's label selector (it lives in the URL, ?selector=) and how many machines match. */
export function LabelFilter(props: { view: CompareView; onView: (p: Partial<CompareView>) => void; match: LabelMatch | null; total: number }) {
  const { view, onView, match, total } = props;
  return (
    <div className="label-filter" role="search" aria-label="Filter machines by labels">
      <div className="field-inline">
        <SelectorInput id="cmp-selector" selector={view.selector} onApply={(selector) => onView({ selector })} testId="compare-selector" small />
      </div>
      {view.selector && match?.ids && (
        <p className="muted small" data-testid="compare-selector-count">
          {match.ids.size} of {total} machines match <code>{view.selector}</code>
        </p>
      )}
      {view.selector && match?.error != null && <ErrorMessage title="Cannot filter by these labels:" error={match.error} />}
    </div>
  );
}
