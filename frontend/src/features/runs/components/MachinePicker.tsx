import { OnlineBadge } from '@/components/StatusBadge';
import type { Machine } from '@/lib/api-types';

interface Props {
  machines: Machine[];
  chosen: string[];
  onChange: (ids: string[]) => void;
  invalid?: boolean;
  stale?: boolean;
}

/** Every machine with a checkbox and its online state; several chosen make a batch, one run each. */
export function MachinePicker({ machines, chosen, onChange, invalid, stale = false }: Props) {
  const set = new Set(chosen);
  const toggle = (id: string, on: boolean) =>
    onChange(on ? [...chosen.filter((c) => c !== id), id] : chosen.filter((c) => c !== id));
  return (
    <fieldset className="machine-picker" aria-invalid={invalid ? true : undefined}>
      <legend>Machines</legend>
      {machines.map((m) => {
        const boxId = `machine-${m.id}`;
        return (
          <div key={m.id} className="machine-option" data-testid="machine-option">
            <input id={boxId} type="checkbox" checked={set.has(m.id)} onChange={(e) => toggle(m.id, e.target.checked)} />
            <label htmlFor={boxId}>
              <span className="strong">{m.name}</span> <span className="muted small">({m.hostname})</span>
            </label>
            <OnlineBadge online={m.online} stale={stale} />
          </div>
        );
      })}
    </fieldset>
  );
}
