import { TitleNote } from '@/components/TitleNote';
import type { TitleNotePatch } from '@/lib/api-types';

/**
 * A run's or batch's heading: its name, or else the title made from what it ran, and its id; under it
 * (once the record is loaded) its note and the form that edits both.
 */
export function NamedTitle(props: {
  what: 'run' | 'batch';
  id: string;
  record: { name?: string | null; note?: string | null } | undefined;
  made: string;
  patch: { mutate: (p: TitleNotePatch, options: { onSuccess: () => void }) => void; isPending: boolean; error: unknown };
  editable: boolean;
}) {
  const { what, id, record, made, patch, editable } = props;
  return (
    <>
      <h1 className="run-title">
        <span data-testid={`${what}-title`}>{record?.name || made}</span>
        <span className="run-id-line">
          {record?.name ? <span className="muted small">{made} · </span> : null}
          {what} <code className="run-id" data-testid={`${what}-id`}>{id}</code>
        </span>
      </h1>
      {record && (
        <TitleNote
          name={record.name}
          note={record.note}
          placeholder={made}
          what={what}
          save={(p, done) => patch.mutate(p, { onSuccess: done })}
          saving={patch.isPending}
          error={patch.error}
          editable={editable}
        />
      )}
    </>
  );
}
