import { useState, type ReactNode } from 'react';

/**
 * A read-only text with a Copy button, as a share link and a new token's secret are shown: the clipboard
 * API, or where the browser refuses it (no secure context), the text selected and copied the old way.
 */
export function CopyField(props: { id: string; value: string; label: string; testId: string; size: number; children?: ReactNode }) {
  const { id, value, label, testId, size, children } = props;
  const [copied, setCopied] = useState(false);
  const copy = async () => {
    try {
      await navigator.clipboard.writeText(value);
    } catch {
      const input = document.getElementById(id) as HTMLInputElement | null;
      input?.select();
      document.execCommand('copy');
    }
    setCopied(true);
    setTimeout(() => setCopied(false), 2000);
  };
  return (
    <span className="share-link">
      <input id={id} readOnly value={value} data-testid={testId} aria-label={label} spellCheck={false} onFocus={(e) => e.target.select()} size={size} />
      <button type="button" className="button" onClick={() => void copy()}>
        {copied ? 'Copied' : 'Copy'}
      </button>
      {children}
    </span>
  );
}
