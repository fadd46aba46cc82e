import { useState } from 'react';
import { ErrorMessage } from './Feedback';

/**
 * A delete button that asks once more in place: what goes with it, and (`typeToConfirm`) the name to
 * type before the button arms, for what cannot be had back (a machine with all its results). A
 * refusal (409: still running, still online) shows the server's sentence.
 */
export function ConfirmDelete({
  label,
  consequence,
  typeToConfirm,
  onDelete,
  deleting,
  error,
  disabledReason,
  testId,
}: {
  label: string;
  consequence: string;
  typeToConfirm?: string;
  onDelete: () => void;
  deleting: boolean;
  error: unknown;
  disabledReason?: string | null;
  testId: string;
}) {
  const [asking, setAsking] = useState(false);
  const [typed, setTyped] = useState('');
  const armed = typeToConfirm === undefined || typed.trim() === typeToConfirm.trim();
  if (!asking) {
    return (
      <>
        <button
          type="button"
          className="button button-danger-outline"
          disabled={!!disabledReason}
          title={disabledReason ?? undefined}
          onClick={() => {
            setTyped('');
            setAsking(true);
          }}
          data-testid={testId}
        >
          {label}
        </button>
        {error ? <ErrorMessage title="Could not delete:" error={error} /> : null}
      </>
    );
  }
  return (
    <span className="confirm" role="group" aria-label={`${label}?`} data-testid={`${testId}-confirm`}>
      <span>{consequence}</span>{' '}
      {typeToConfirm !== undefined && (
        <label className="confirm-type">
          Type <strong>{typeToConfirm}</strong> to confirm:{' '}
          <input value={typed} onChange={(e) => setTyped(e.target.value)} aria-label={`Type ${typeToConfirm} to confirm`} autoFocus />
        </label>
      )}{' '}
      <button
        type="button"
        className="button button-small button-danger"
        disabled={!armed || deleting}
        onClick={() => {
          setAsking(false);
          onDelete();
        }}
      >
        {deleting ? 'Deleting…' : `Yes, ${label.toLowerCase()}`}
      </button>{' '}
      <button type="button" className="button button-small" onClick={() => setAsking(false)}>
        Keep it
      </button>
    </span>
  );
}
