import { useState } from 'react';

/** What a label selector may say, shown as the box's hint wherever one is typed. */
export const SELECTOR_HINT = 'Comma-separated, all must hold: key=value, key!=value, key (has it), !key (has it not)';

/** A label selector's box (`k=v`, `k!=v`, `k`, `!k`, comma-separated, all must hold) with its Filter and
 * Clear buttons: what is typed is applied (trimmed) on Enter, Filter or leaving the box, and only when it
 * differs from `selector`, the applied one, which lives in the URL; a new `selector` (Back, a link)
 * replaces what is typed. The machines page and Compare's machine picker share it. */
export function SelectorInput(props: { id: string; selector: string; onApply: (selector: string) => void; testId: string; small?: boolean }) {
  const { id, selector, onApply, testId, small } = props;
  const [text, setText] = useState(selector);
  const [shown, setShown] = useState(selector);
  if (shown !== selector) {
    setShown(selector);
    setText(selector);
  }
  const apply = (next: string) => {
    if (next.trim() !== selector) onApply(next.trim());
  };
  return (
    <>
      <label htmlFor={id}>Labels</label>
      <input
        id={id}
        className="selector-input"
        value={text}
        placeholder="env=prod,rack,!canary"
        title={SELECTOR_HINT}
        onChange={(e) => setText(e.target.value)}
        onBlur={() => apply(text)}
        onKeyDown={(e) => {
          if (e.key !== 'Enter') return;
          e.preventDefault();
          apply(text);
        }}
        data-testid={testId}
      />
      <button type="button" className={small ? 'button button-small' : 'button'} onClick={() => apply(text)}>
        Filter
      </button>
      {selector && (
        <button
          type="button"
          className={small ? 'link-button small' : 'button'}
          onClick={() => {
            setText('');
            onApply('');
          }}
        >
          Clear
        </button>
      )}
    </>
  );
}
