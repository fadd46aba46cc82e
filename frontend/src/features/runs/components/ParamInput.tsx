import type { ParamSpec, Profile } from '@/lib/api-types';
import type { FormValue } from '@/lib/params';
import { canSweep, hasDefaultSweep, thinSweep, type SweepChoice } from '@/lib/sweep';
import { KernelText } from '@/components/KernelText';
import { Select } from '@/components/Form';

interface Props {
  id: string;
  spec: ParamSpec;
  value: FormValue;
  error?: string;
  onChange: (value: FormValue) => void;
  /** Set when the parameter is swept; absent for a single value. */
  sweep?: SweepChoice;
  /** Switches between a single value (null) and a sweep; without it the parameter takes one value only. */
  onSweep?: (choice: SweepChoice | null) => void;
  profile?: Profile;
  /** The profile thins default sweeps (its `thin_sweeps`, GET /limits). */
  thin?: boolean;
}

type Mode = 'value' | 'default' | 'custom';

function ValueControl({ spec, value, onChange, common }: Pick<Props, 'spec' | 'value' | 'onChange'> & { common: Record<string, unknown> }) {
  switch (spec.type) {
    case 'choice':
      return (
        <Select {...common} value={String(value)} onChange={(e) => onChange(e.target.value)} options={spec.choices ?? []} />
      );
    case 'bool':
      return <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />;
    case 'int':
    case 'float':
      return (
        <input
          {...common}
          type="number"
          inputMode={spec.type === 'int' ? 'numeric' : 'decimal'}
          step={spec.type === 'int' ? 1 : 'any'}
          min={spec.min ?? undefined}
          max={spec.max ?? undefined}
          value={String(value)}
          onChange={(e) => onChange(e.target.value)}
        />
      );
    default:
      return <input {...common} type="text" value={String(value)} onChange={(e) => onChange(e.target.value)} />;
  }
}

/** What custom sweep points may be, as the placeholder of their text box. */
function customHint(spec: ParamSpec): string {
  if (spec.type === 'choice') return (spec.choices ?? []).join(', ');
  if (spec.type === 'bool') return 'false, true';
  if (hasDefaultSweep(spec)) return (spec.sweep ?? []).slice(0, 4).join(', ');
  return spec.type === 'int' ? '1, 2, 4' : '0.5, 1';
}

/** A default sweep's points (thinned by the profile when it says so), in place of the value control. */
function DefaultSweepPoints({ id, spec, profile, thin }: { id: string; spec: ParamSpec; profile: Profile; thin: boolean }) {
  const points = thinSweep(spec.sweep ?? [], thin);
  return (
    <div className="sweep-points small" id={id} data-testid="sweep-points">
      {points.map(String).join(', ')}{' '}
      <span className="muted">
        ({points.length} {points.length === 1 ? 'point' : 'points'}
        {points.length < (spec.sweep?.length ?? 0) ? `; ${profile} keeps every other of ${spec.sweep?.length}` : ''})
      </span>
    </div>
  );
}

/** One value, or a sweep over the default points (when the parameter has some) or over custom values. */
function SweepModeSelect({ spec, mode, onMode }: { spec: ParamSpec; mode: Mode; onMode: (m: Mode) => void }) {
  return (
    <select className="sweep-mode" aria-label={`${spec.name}: value or sweep`} value={mode} onChange={(e) => onMode(e.target.value as Mode)}>
      <option value="value">one value</option>
      {hasDefaultSweep(spec) && <option value="default">sweep: default points</option>}
      <option value="custom">sweep: custom values</option>
    </select>
  );
}

/** One kernel parameter as the control its type calls for, or as a sweep over several points. */
export function ParamInput({ id, spec, value, error, onChange, sweep, onSweep, profile = 'default', thin = false }: Props) {
  const describedBy = [spec.help ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = {
    id,
    name: spec.name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy || undefined,
  } as const;
  const mode: Mode = sweep ? sweep.mode : 'value';
  const sweepable = onSweep !== undefined && canSweep(spec);

  const onMode = (next: Mode) => {
    if (!onSweep) return;
    if (next === 'value') onSweep(null);
    else if (next === 'default') onSweep({ mode: 'default' });
    else onSweep({ mode: 'custom', text: sweep?.mode === 'custom' ? sweep.text : '' });
  };

  let control;
  if (sweep?.mode === 'default') {
    control = <DefaultSweepPoints id={id} spec={spec} profile={profile} thin={thin} />;
  } else if (sweep?.mode === 'custom') {
    control = (
      <input
        {...common}
        type="text"
        placeholder={customHint(spec)}
        value={sweep.text}
        onChange={(e) => onSweep?.({ mode: 'custom', text: e.target.value })}
      />
    );
  } else {
    control = <ValueControl spec={spec} value={value} onChange={onChange} common={common} />;
  }

  const range =
    (spec.type === 'int' || spec.type === 'float') && (spec.min != null || spec.max != null)
      ? ` (${spec.min ?? '…'}–${spec.max ?? '…'})`
      : '';
  return (
    <div className={`field${spec.type === 'bool' && mode === 'value' ? ' field-inline' : ''}`}>
      <label htmlFor={id}>
        {spec.name}
        <span className="muted small">{range}</span>
      </label>
      {sweepable && (
        <SweepModeSelect spec={spec} mode={mode} onMode={onMode} />
      )}
      {control}
      {sweep?.mode === 'custom' && <div className="muted small">comma-separated, e.g. {customHint(spec)}</div>}
      {spec.help && (
        <div id={`${id}-help`} className="muted small">
          <KernelText text={spec.help} />
        </div>
      )}
      {error && (
        <div id={`${id}-error`} className="field-error">
          {error}
        </div>
      )}
    </div>
  );
}
