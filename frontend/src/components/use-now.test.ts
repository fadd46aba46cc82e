import { describe, expect, it } from 'vitest';
import { formatRelativeTime } from '@/lib/format';
import { clockFor, relativeTickMs } from './use-now';

describe('relative times move on a clock tick (issue 27)', () => {
  const started = Date.parse('2026-11-22T12:00:00Z');
  const at = (s: number) => started + s * 1000;

  it('re-renders each second under a minute, so "started 18 s ago" does not stay for 40 s', () => {
    expect(relativeTickMs(18)).toBe(1000);
    expect(relativeTickMs(61)).toBe(10_000);
    // what each tick shows between t = 24 s and 61 s
    const shown = [24, 25, 40, 59, 61].map((t) => formatRelativeTime('2026-11-22T12:00:00Z', new Date(clockFor(at(t) + 400, started))));
    expect(shown).toEqual(['24 s ago', '25 s ago', '40 s ago', '59 s ago', '1 min ago']);
  });

  it('changes the snapshot only when the words can change', () => {
    expect(clockFor(at(30.2), started)).toBe(at(30));
    expect(clockFor(at(30.9), started)).toBe(at(30));
    expect(clockFor(at(125), started)).toBe(clockFor(at(129), started));
  });
});
