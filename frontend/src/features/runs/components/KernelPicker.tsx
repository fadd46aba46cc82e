import type { Kernel } from '@/lib/api-types';
import { formatMeasure } from '@/lib/format';
import type { FormErrors, FormValue } from '@/lib/params';
import { ParamInput } from './ParamInput';

interface Props {
  groups: [string, Kernel[]][];
  selected: Set<string>;
  values: (kernel: Kernel) => Record<string, FormValue>;
  errors: FormErrors;
  onToggle: (kernelId: string, on: boolean) => void;
  onParam: (kernelId: string, name: string, value: FormValue) => void;
}

function SeedFigure({ kernel }: { kernel: Kernel }) {
  const s = kernel.seed_reference;
  if (!s) return null;
  return (
    <div className="seed small">
      Seed {s.seed}: <strong>{formatMeasure(s.value, s.unit)}</strong> on {s.machine}
      {s.note ? <span className="muted"> — {s.note}</span> : null}
    </div>
  );
}

/** The machine's kernels by family, each with a checkbox; a chosen kernel shows its parameters. */
export function KernelPicker({ groups, selected, values, errors, onToggle, onParam }: Props) {
  return (
    <div className="kernel-groups">
      {groups.map(([family, kernels]) => (
        <fieldset key={family} className="kernel-family">
          <legend>{family}</legend>
          {kernels.map((k) => {
            const checked = selected.has(k.id);
            const boxId = `kernel-${k.id}`;
            const v = values(k);
            return (
              <div key={k.id} className={`kernel${checked ? ' kernel-chosen' : ''}`} data-testid="kernel-option">
                <div className="kernel-head">
                  <input
                    id={boxId}
                    type="checkbox"
                    checked={checked}
                    onChange={(e) => onToggle(k.id, e.target.checked)}
                  />
                  <label htmlFor={boxId}>
                    <span className="strong">{k.title}</span> <code>{k.id}</code>{' '}
                    <span className="muted small">{k.unit}</span>
                  </label>
                </div>
                <p className="kernel-desc small">{k.description}</p>
                <SeedFigure kernel={k} />
                {checked && k.params.length > 0 && (
                  <div className="params">
                    {k.params.map((p) => (
                      <ParamInput
                        key={p.name}
                        id={`param-${k.id}-${p.name}`}
                        spec={p}
                        value={v[p.name] ?? ''}
                        error={errors[`${k.id}.${p.name}`]}
                        onChange={(value) => onParam(k.id, p.name, value)}
                      />
                    ))}
                  </div>
                )}
                {checked && k.params.length === 0 && <p className="muted small params">No parameters.</p>}
              </div>
            );
          })}
        </fieldset>
      ))}
    </div>
  );
}
