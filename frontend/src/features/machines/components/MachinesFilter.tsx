import { useState, type FormEvent } from 'react';
import { Select } from '@/components/Form';
import type { MachinesView } from '../utils/labels';

/** The machines page's toolbar: a label selector (applied on Enter or Filter; it lives in the URL) and
 * the grouping, by hardware class or by one of `labelKeys`. */
export function MachinesFilter({ view, labelKeys, onChange }: { view: MachinesView; labelKeys: string[]; onChange: (view: MachinesView) => void }) {
  // What is being typed; the URL's selector (a link, Back) starts it afresh through the key below.
  const [text, setText] = useState(view.selector);
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    onChange({ ...view, selector: text.trim() });
  };
  const groups = [
    { value: '', label: 'No grouping' },
    { value: 'class', label: 'Hardware class' },
    ...labelKeys.map((k) => ({ value: `label:${k}`, label: `Label ${k}` })),
  ];
  if (view.group && !groups.some((g) => g.value === view.group)) groups.push({ value: view.group, label: `Label ${view.group.slice('label:'.length)}` });
  return (
    <form className="toolbar machines-filter" onSubmit={onSubmit} role="search" aria-label="Filter machines">
      <label htmlFor="machines-selector">Labels</label>
      <input
        id="machines-selector"
        className="selector-input"
        value={text}
        placeholder="env=prod,rack,!canary"
        title="Comma-separated, all must hold: key=value, key!=value, key (has it), !key (has it not)"
        onChange={(e) => setText(e.target.value)}
        data-testid="machines-selector"
      />
      <button type="submit" className="button">
        Filter
      </button>
      {view.selector && (
        <button
          type="button"
          className="button"
          onClick={() => {
            setText('');
            onChange({ ...view, selector: '' });
          }}
        >
          Clear
        </button>
      )}
      <label htmlFor="machines-group">Group by</label>
      <Select id="machines-group" value={view.group} options={groups} onChange={(e) => onChange({ ...view, group: e.target.value })} data-testid="machines-group" />
    </form>
  );
}
