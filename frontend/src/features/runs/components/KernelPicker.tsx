import type { Kernel, Machine, Profile } from '@/lib/api-types';
import { formatMeasure } from '@/lib/format';
import type { FormValue } from '@/lib/params';
import type { FormErrors } from '@/lib/run-request';
import { kernelItemCount, type SweepChoice } from '@/lib/sweep';
import { ParamInput } from './ParamInput';
import { KernelText } from '@/components/KernelText';
import { seedTooltip } from '@/lib/seeds';

interface Props {
  groups: [string, Kernel[]][];
  selected: Set<string>;
  values: (kernel: Kernel) => Record<string, FormValue>;
  sweeps: (kernel: Kernel) => Record<string, SweepChoice>;
  profile: Profile;
  errors: FormErrors;
  onToggle: (kernelId: string, on: boolean) => void;
  onParam: (kernelId: string, name: string, value: FormValue) => void;
  onSweep: (kernelId: string, name: string, choice: SweepChoice | null) => void;
}

function SeedFigure({ kernel }: { kernel: Kernel }) {
  const s = kernel.seed_reference;
  if (!s) return null;
  return (
    <div className="seed small">
      <abbr title={seedTooltip(s.seed)}>Seed {s.seed}</abbr>: <strong>{formatMeasure(s.value, s.unit)}</strong> on {s.machine}
      {s.note ? (
        <span className="muted">
          {' '}
          — <KernelText text={s.note} />
        </span>
      ) : null}
    </div>
  );
}

/** The kernels every chosen machine has, by family, each with a checkbox; a chosen kernel shows its parameters. */
export function KernelPicker({ groups, selected, values, sweeps, profile, errors, onToggle, onParam, onSweep }: Props) {
  return (
    <div className="kernel-groups">
      {groups.map(([family, kernels]) => (
        <fieldset key={family} className="kernel-family">
          <legend>{family}</legend>
          {kernels.map((k) => {
            const checked = selected.has(k.id);
            const boxId = `kernel-${k.id}`;
            const v = values(k);
            const s = sweeps(k);
            const count = checked ? kernelItemCount(k.params, s, profile) : null;
            return (
              <div key={k.id} className={`kernel${checked ? ' kernel-chosen' : ''}`} data-testid="kernel-option">
                <div className="kernel-head">
                  <input id={boxId} type="checkbox" checked={checked} onChange={(e) => onToggle(k.id, e.target.checked)} />
                  <label htmlFor={boxId}>
                    <span className="strong">{k.title}</span> <code>{k.id}</code> <span className="muted small">{k.unit}</span>
                  </label>
                  {checked && Object.keys(s).length > 0 && (
                    <span className="badge badge-sweep" data-testid="kernel-item-count">
                      {count === null ? 'sweep not valid yet' : `${count} ${count === 1 ? 'item' : 'items'}`}
                    </span>
                  )}
                </div>
                <p className="kernel-desc small">
                  <KernelText text={k.description} />
                </p>
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
                        sweep={s[p.name]}
                        onSweep={(choice) => onSweep(k.id, p.name, choice)}
                        profile={profile}
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

/** Kernels that some chosen machine has and another lacks, and why they cannot be chosen. */
export function MissingKernels({ missing, machines }: { missing: { kernel: Kernel; missingOn: string[] }[]; machines: Map<string, Machine> }) {
  if (missing.length === 0) return null;
  return (
    <details className="missing-kernels small" data-testid="missing-kernels">
      <summary>
        {missing.length} {missing.length === 1 ? 'kernel is' : 'kernels are'} not on every chosen machine
      </summary>
      <ul>
        {missing.map(({ kernel, missingOn }) => (
          <li key={kernel.id}>
            <code>{kernel.id}</code> <span className="muted">— missing on {missingOn.map((id) => machines.get(id)?.name ?? id).join(', ')}</span>
          </li>
        ))}
      </ul>
    </details>
  );
}
