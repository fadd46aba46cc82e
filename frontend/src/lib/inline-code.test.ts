import { describe, expect, it } from 'vitest';
import { splitInlineCode } from './inline-code';

describe('splitInlineCode', () => {
  it('turns backticked words into code pieces', () => {
    expect(splitInlineCode('`threads` threads call `sched_yield()`.')).toEqual([
      { code: true, text: 'threads' },
      { code: false, text: ' threads call ' },
      { code: true, text: 'sched_yield()' },
      { code: false, text: '.' },
    ]);
  });
  it('leaves plain text, empty pairs and a lone backtick alone', () => {
    expect(splitInlineCode('no code here')).toEqual([{ code: false, text: 'no code here' }]);
    expect(splitInlineCode('a `` b')).toEqual([{ code: false, text: 'a `` b' }]);
    expect(splitInlineCode('one ` tick')).toEqual([{ code: false, text: 'one ` tick' }]);
    expect(splitInlineCode('')).toEqual([]);
  });
});
