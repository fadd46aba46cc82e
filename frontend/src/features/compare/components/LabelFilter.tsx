import { useState, type FormEvent } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import type { CompareView } from '@/lib/compare-query';

/** Which machines match the view's selector, as the server answers GET /machines?selector= (the
 * machines page's filter); null ids: not known yet. */
export type LabelMatch = { ids: ReadonlySet<string> | null; error: unknown };

/** The machine picker's label selector (`k=v`, `k!=v`, `k`, `!k`, comma-separated, all must hold),
 * applied on Enter, Filter or leaving the box; it lives in the URL (?selector=). */
export function LabelFilter(props: { view: CompareView; onView: (p: Partial<CompareView>) => void; match: LabelMatch | null; total: number }) {
  const { view, onView, match, total } = props;
  const [text, setText] = useState(view.selector);
  // The address's selector (Back, a link) shows in the box.
  const [shown, setShown] = useState(view.selector);
  if (shown !== view.selector) {
    setShown(view.selector);
    setText(view.selector);
  }
  const apply = (e?: FormEvent) => {
    e?.preventDefault();
    if (text.trim() !== view.selector) onView({ selector: text.trim() });
  };
  return (
    <div className="label-filter" role="search" aria-label="Filter machines by labels">
      <div className="field-inline">
        <label htmlFor="cmp-selector">Labels</label>
        <input
          id="cmp-selector"
          className="selector-input"
          value={text}
          placeholder="env=prod,rack,!canary"
          title="Comma-separated, all must hold: key=value, key!=value, key (has it), !key (has it not)"
          onChange={(e) => setText(e.target.value)}
          onBlur={() => apply()}
          onKeyDown={(e) => e.key === 'Enter' && apply(e)}
          data-testid="compare-selector"
        />
        <button type="button" className="button button-small" onClick={() => apply()}>
          Filter
        </button>
        {view.selector && (
          <button type="button" className="link-button small" onClick={() => onView({ selector: '' })}>
            Clear
          </button>
        )}
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
