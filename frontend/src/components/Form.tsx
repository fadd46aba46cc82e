// The pieces every form and picker wrote again: a labelled field, a <select> from a list of options, and
// the submit button with its busy words (issue 14: one form-field component).
import type { ReactNode, SelectHTMLAttributes } from 'react';
import type { Option } from './options';

/** A <select> of `options`, in their order; every other prop goes to the element. */
export function Select({ options, ...props }: { options: readonly Option[] } & SelectHTMLAttributes<HTMLSelectElement>) {
  return (
    <select {...props}>
      {options.map((o) => {
        const { value, label } = typeof o === 'string' ? { value: o, label: o } : o;
        return (
          <option key={value} value={value}>
            {label}
          </option>
        );
      })}
    </select>
  );
}

/** A form field: its label, the control whose id the label names (and any hint), then its error if any. */
export function Field({ id, label, error, children }: { id: string; label: ReactNode; error?: string; children: ReactNode }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      {children}
      {error && <div className="field-error">{error}</div>}
    </div>
  );
}

/** A form's actions: the submit button, saying `busy` while `pending`, then anything else (Cancel…). */
export function SubmitActions(props: { label: ReactNode; busy: ReactNode; pending: boolean; disabled?: boolean; children?: ReactNode }) {
  const { label, busy, pending, disabled = false, children } = props;
  return (
    <div className="actions">
      <button type="submit" className="button button-primary" disabled={pending || disabled}>
        {pending ? busy : label}
      </button>
      {children}
    </div>
  );
}
