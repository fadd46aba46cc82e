import type { ParamSpec } from '@/lib/api-types';
import type { FormValue } from '@/lib/params';

interface Props {
  id: string;
  spec: ParamSpec;
  value: FormValue;
  error?: string;
  onChange: (value: FormValue) => void;
}

/** One kernel parameter as the control its type calls for. */
export function ParamInput({ id, spec, value, error, onChange }: Props) {
  const describedBy = [spec.help ? `${id}-help` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
  const common = {
    id,
    name: spec.name,
    'aria-invalid': error ? true : undefined,
    'aria-describedby': describedBy || undefined,
  } as const;

  let control;
  switch (spec.type) {
    case 'choice':
      control = (
        <select {...common} value={String(value)} onChange={(e) => onChange(e.target.value)}>
          {(spec.choices ?? []).map((c) => (
            <option key={c} value={c}>
              {c}
            </option>
          ))}
        </select>
      );
      break;
    case 'bool':
      control = <input {...common} type="checkbox" checked={value === true} onChange={(e) => onChange(e.target.checked)} />;
      break;
    case 'int':
    case 'float':
      control = (
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
      break;
    default:
      control = <input {...common} type="text" value={String(value)} onChange={(e) => onChange(e.target.value)} />;
  }

  const range =
    (spec.type === 'int' || spec.type === 'float') && (spec.min != null || spec.max != null)
      ? ` (${spec.min ?? '…'}–${spec.max ?? '…'})`
      : '';
  return (
    <div className={`field${spec.type === 'bool' ? ' field-inline' : ''}`}>
      <label htmlFor={id}>
        {spec.name}
        <span className="muted small">{range}</span>
      </label>
      {control}
      {spec.help && (
        <div id={`${id}-help`} className="muted small">
          {spec.help}
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
