import { Select } from '@/components/Form';
import { SelectorInput } from '@/components/SelectorInput';
import type { MachinesView } from '../utils/labels';

/** The machines page's toolbar: a label selector (it lives in the URL) and the grouping, by hardware
 * class or by one of `labelKeys`. */
export function MachinesFilter({ view, labelKeys, onChange }: { view: MachinesView; labelKeys: string[]; onChange: (view: MachinesView) => void }) {
  const groups = [
    { value: '', label: 'No grouping' },
    { value: 'class', label: 'Hardware class' },
    ...labelKeys.map((k) => ({ value: `label:${k}`, label: `Label ${k}` })),
  ];
  if (view.group && !groups.some((g) => g.value === view.group)) groups.push({ value: view.group, label: `Label ${view.group.slice('label:'.length)}` });
  return (
    <div className="toolbar machines-filter" role="search" aria-label="Filter machines">
      <SelectorInput id="machines-selector" selector={view.selector} onApply={(selector) => onChange({ ...view, selector })} testId="machines-selector" />
      <label htmlFor="machines-group">Group by</label>
      <Select id="machines-group" value={view.group} options={groups} onChange={(e) => onChange({ ...view, group: e.target.value })} data-testid="machines-group" />
    </div>
  );
}
