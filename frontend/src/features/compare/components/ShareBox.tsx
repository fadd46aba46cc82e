import { CopyField } from '@/components/CopyField';
import { ErrorMessage } from '@/components/Feedback';
import { viewToShare, type CompareView } from '@/lib/compare-query';
import { useCreateShare } from '../api/compare';

/** "Share": freezes this comparison on the server and shows its permanent link with a copy button. */
export function ShareBox({ view }: { view: CompareView }) {
  const share = useCreateShare();
  const link = share.data ? new URL(share.data.url, window.location.origin).toString() : null;
  return (
    <div className="share">
      <button
        type="button"
        className="button button-primary"
        onClick={() => share.mutate(viewToShare(view))}
        disabled={share.isPending}
        title="Freeze these numbers under a permanent link"
      >
        {share.isPending ? 'Sharing…' : 'Share'}
      </button>
      {link && (
        <CopyField id="share-link" value={link} testId="share-link" label="Share link" size={48}>
          <a href={share.data!.url} target="_blank" rel="noreferrer">
            open
          </a>
        </CopyField>
      )}
      {share.isError && <ErrorMessage title="Could not share:" error={share.error} />}
    </div>
  );
}
