import { SubmitActions } from './Form';

// The Save / Cancel buttons under an inline edit form (a title and note, a machine's name).
export function SaveCancel({ saving, onCancel }: { saving: boolean; onCancel: () => void }) {
  return (
    <SubmitActions label="Save" busy="Saving…" pending={saving}>
      <button type="button" className="button" onClick={onCancel}>
        Cancel
      </button>
    </SubmitActions>
  );
}
