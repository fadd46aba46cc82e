import { useState, type FormEvent } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import { Field } from '@/components/Form';
import { MAX_MACHINE_NAME, type Machine } from '@/lib/api-types';
import { useRenameMachine } from '../api/machine';
import { SaveCancel } from '@/components/SaveCancel';

/** "Rename": a display name for the machine (its id stays); empty gives the agent's own name back. */
export function RenameMachine({ machine }: { machine: Machine }) {
  const rename = useRenameMachine(machine.id);
  const [editing, setEditing] = useState(false);
  const [name, setName] = useState('');
  const agentName = machine.agent_name || machine.hostname || machine.id;
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    rename.mutate(name.trim() || null, { onSuccess: () => setEditing(false) });
  };
  if (!editing) {
    return (
      <button
        type="button"
        className="button"
        data-testid="rename-machine"
        onClick={() => {
          rename.reset();
          setName(machine.display_name ?? machine.name);
          setEditing(true);
        }}
      >
        Rename
      </button>
    );
  }
  return (
    <form className="form rename-form" onSubmit={onSubmit} aria-label="Rename this machine">
      <Field id="machine-name-input" label="Display name">
        <input id="machine-name-input" value={name} maxLength={MAX_MACHINE_NAME} placeholder={agentName} onChange={(e) => setName(e.target.value)} autoFocus />
        <div className="muted small">
          at most {MAX_MACHINE_NAME} characters; the id stays <code>{machine.id}</code>; empty: its agent&apos;s name, “{agentName}”
        </div>
      </Field>
      {rename.isError && <ErrorMessage title="Could not rename:" error={rename.error} />}
      <SaveCancel saving={rename.isPending} onCancel={() => setEditing(false)} />
    </form>
  );
}
