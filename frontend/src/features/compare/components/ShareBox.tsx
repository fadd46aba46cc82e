import { useState } from 'react';
import { ErrorMessage } from '@/components/Feedback';
import { viewToShare, type CompareView } from '@/lib/compare-query';
import { useCreateShare } from '../api/compare';

/** "Share": freezes this comparison on the server and shows its permanent link with a copy button. */
export function ShareBox({ view }: { view: CompareView }) {
  const share = useCreateShare();
  const [copied, setCopied] = useState(false);
  const link = share.data ? new URL(share.data.url, window.location.origin).toString() : null;
  const copy = async () => {
    if (!link) return;
    try {
      await navigator.clipboard.writeText(link);
    } catch {
      const input = document.getElementById('share-link') as HTMLInputElement | null;
      input?.select();
      document.execCommand('copy');
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
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
        <span className="share-link">
          <input id="share-link" readOnly value={link} data-testid="share-link" aria-label="Share link" onFocus={(e) => e.target.select()} size={48} />
          <button type="button" className="button" onClick={() => void copy()}>
            {copied ? 'Copied' : 'Copy'}
          </button>
          <a href={share.data!.url} target="_blank" rel="noreferrer">
            open
          </a>
        </span>
      )}
      {share.isError && <ErrorMessage title="Could not share:" error={share.error} />}
    </div>
  );
}
