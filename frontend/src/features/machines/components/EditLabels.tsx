import { useState, type FormEvent } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import { Field } from '@/components/Form';
import { SaveCancel } from '@/components/SaveCancel';
import type { Machine } from '@/lib/api-types';
import { useSetLabels } from '../api/machine';
import { labelsPatch, labelsText, parseLabelsText } from '../utils/labels';

/** "Edit labels" (admins): the admin's labels, one key=value a line, saved as a merge patch. Its agent's
 * labels (--label) are shown beside them; an admin's label on the same key wins. */
export function EditLabels({ machine }: { machine: Machine }) {
  const save = useSetLabels(machine.id);
  const [editing, setEditing] = useState(false);
  const [text, setText] = useState('');
  const [error, setError] = useState<string>();
  const agent = labelsText(machine.agent_labels);
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    const parsed = parseLabelsText(text);
    if ('error' in parsed) {
      setError(parsed.error);
      return;
    }
    setError(undefined);
    const patch = labelsPatch(machine.admin_labels, parsed.labels);
    if (Object.keys(patch).length === 0) setEditing(false);
    else save.mutate(patch, { onSuccess: () => setEditing(false) });
  };
  if (!editing) {
    return (
      <button
        type="button"
        className="button"
        data-testid="edit-labels"
        onClick={() => {
          save.reset();
          setError(undefined);
          setText(labelsText(machine.admin_labels));
          setEditing(true);
        }}
      >
        Edit labels
      </button>
    );
  }
  return (
    <form className="form labels-form" onSubmit={onSubmit} aria-label="Edit this machine's labels">
      <Field id="machine-labels-input" label="Labels (admin)" error={error}>
        <textarea
          id="machine-labels-input"
          rows={Math.max(3, text.split('\n').length + 1)}
          value={text}
          placeholder={'env=prod\nrack=r7'}
          onChange={(e) => setText(e.target.value)}
          autoFocus
          data-testid="labels-input"
        />
        <div className="muted small">
          one <code>key=value</code> a line (the value may be empty); keys and values: letters, digits, <code>- _ . /</code>, at most 63. They
          override its agent&apos;s on the same key{agent ? <>; its agent says: <code>{agent.replaceAll('\n', ', ')}</code></> : null}.
        </div>
      </Field>
      {save.isError && <ErrorMessage title="Could not save the labels:" error={save.error} />}
      <SaveCancel saving={save.isPending} onCancel={() => setEditing(false)} />
    </form>
  );
}
