// Kernel texts (descriptions, parameter help, seed notes) are written with Markdown's inline code:
// `threads` threads call sched_yield(). These split such a text into plain and code pieces, so the
// page shows <code> rather than the backticks. Only inline code: the texts use nothing else.

export interface TextPiece {
  code: boolean;
  text: string;
}

/** "`a` and `b`" → code "a", text " and ", code "b"; an unmatched backtick stays as it is. */
export function splitInlineCode(text: string): TextPiece[] {
  const out: TextPiece[] = [];
  const re = /`([^`]+)`/g;
  let at = 0;
  for (let m = re.exec(text); m !== null; m = re.exec(text)) {
    if (m.index > at) out.push({ code: false, text: text.slice(at, m.index) });
    out.push({ code: true, text: m[1]! });
    at = m.index + m[0].length;
  }
  if (at < text.length) out.push({ code: false, text: text.slice(at) });
  return out;
}
