import { chipText, labelChips, type Labels } from '../utils/labels';

/** A machine's labels as chips: an admin's (PATCH) stand out from its agent's (--label). */
export function LabelChips({ machine }: { machine: { labels: Labels; admin_labels: Labels; agent_labels: Labels } }) {
  const chips = labelChips(machine);
  if (chips.length === 0) return null;
  return (
    <ul className="label-chips" aria-label="Labels">
      {chips.map((c) => (
        <li
          key={c.key}
          className={c.source === 'admin' ? 'label-chip label-chip-admin' : 'label-chip'}
          title={
            c.source === 'admin'
              ? `set by an admin${c.overrides !== undefined ? ` (its agent says ${chipText({ key: c.key, value: c.overrides })})` : ''}`
              : 'from its agent (--label)'
          }
          data-testid="label-chip"
        >
          {chipText(c)}
        </li>
      ))}
    </ul>
  );
}
