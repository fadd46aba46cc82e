import { splitInlineCode } from '@/lib/inline-code';

/** A kernel's text with its `inline code` shown as code. */
export function KernelText({ text }: { text: string | null | undefined }) {
  return (
    <>
      {splitInlineCode(text ?? '').map((p, i) => (p.code ? <code key={i}>{p.text}</code> : <span key={i}>{p.text}</span>))}
    </>
  );
}
