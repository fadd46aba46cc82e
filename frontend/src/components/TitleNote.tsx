import { useState, type FormEvent } from 'react';
import { MAX_NOTE, MAX_TITLE, type TitleNotePatch } from '@/lib/api-types';
import { ErrorMessage } from './Feedback';
import { Field } from './Form';
import { SaveCancel } from './SaveCancel';

/**
 * A run's or batch's note, shown under its title, and a form to edit both: the title on one line (at
 * most MAX_TITLE characters), the note free text (MAX_NOTE). Empty clears either. `placeholder` is
 * the title the page makes up when none is given.
 */
export function TitleNote({
  name,
  note,
  placeholder,
  what,
  save,
  saving,
  error,
  editable = true,
}: {
  editable?: boolean;
  name: string | null | undefined;
  note: string | null | undefined;
  placeholder: string;
  what: 'run' | 'batch';
  save: (patch: TitleNotePatch, done: () => void) => void;
  saving: boolean;
  error: unknown;
}) {
  const [editing, setEditing] = useState(false);
  const [title, setTitle] = useState('');
  const [text, setText] = useState('');
  const open = () => {
    setTitle(name ?? '');
    setText(note ?? '');
    setEditing(true);
  };
  const onSubmit = (e: FormEvent) => {
    e.preventDefault();
    save({ name: title.trim() || null, note: text.trim() ? text : null }, () => setEditing(false));
  };
  if (!editing) {
    return (
      <div className="title-note">
        {note ? (
          <p className="note" data-testid={`${what}-note`}>
            {note}
          </p>
        ) : null}
        {editable && (
          <button type="button" className="link-button small" onClick={open} data-testid={`edit-${what}-title`}>
            {name || note ? 'Edit title and note' : 'Add a title and note'}
          </button>
        )}
      </div>
    );
  }
  return (
    <form className="form title-note-form" onSubmit={onSubmit} aria-label={`Title and note of this ${what}`}>
      <Field id={`${what}-title-input`} label="Title">
        <input
          id={`${what}-title-input`}
          value={title}
          maxLength={MAX_TITLE}
          placeholder={placeholder}
          onChange={(e) => setTitle(e.target.value)}
        />
        <div className="muted small">at most {MAX_TITLE} characters; empty: “{placeholder}”</div>
      </Field>
      <Field id={`${what}-note-input`} label="Note">
        <textarea id={`${what}-note-input`} value={text} maxLength={MAX_NOTE} rows={3} onChange={(e) => setText(e.target.value)} />
        <div className="muted small">
          what changed, why it was run ({text.length} / {MAX_NOTE})
        </div>
      </Field>
      {error ? <ErrorMessage title="Could not save:" error={error} /> : null}
      <SaveCancel saving={saving} onCancel={() => setEditing(false)} />
    </form>
  );
}
