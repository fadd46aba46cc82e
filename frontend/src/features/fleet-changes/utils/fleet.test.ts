import { describe, expect, it } from 'vitest';
import { decodeFleetView, encodeFleetView, fleetChangesPath, peersPath, percentText, valueText } from './fleet';

describe('the Fleet page address', () => {
  it('round-trips a view and leaves the defaults out', () => {
    expect(encodeFleetView({ days: 14, kernel: '' })).toBe('');
    const qs = encodeFleetView({ days: 30, kernel: 'syscall.getppid' });
    expect(qs).toBe('days=30&kernel=syscall.getppid');
    expect(decodeFleetView(qs)).toEqual({ days: 30, kernel: 'syscall.getppid' });
  });

  it('reads a range it does not offer as the default', () => {
    expect(decodeFleetView('days=1000').days).toBe(14);
    expect(decodeFleetView('days=x&kernel=%20').kernel).toBe('');
  });
});

describe('the API paths', () => {
  const now = new Date('2026-11-27T12:00:00Z');
  it('asks for `days` back from now, a kernel and a cursor', () => {
    const path = fleetChangesPath({ days: 7, kernel: 'ctxsw.pipe' }, now, 'abc');
    const q = new URLSearchParams(path.split('?')[1]);
    expect(path.startsWith('/fleet-changes?')).toBe(true);
    expect(q.get('since')).toBe('2026-11-20T12:00:00.000Z');
    expect(q.get('until')).toBe('2026-11-27T12:00:00.000Z');
    expect(q.get('kernel')).toBe('ctxsw.pipe');
    expect(q.get('cursor')).toBe('abc');
    expect(new URLSearchParams(fleetChangesPath({ days: 14, kernel: '' }, now).split('?')[1]).has('kernel')).toBe(false);
  });

  it('filters peers by kernel only when one is chosen', () => {
    expect(peersPath({ days: 14, kernel: '' })).toBe('/peers');
    expect(peersPath({ days: 14, kernel: 'a.b c' })).toBe('/peers?kernel=a.b%20c');
  });
});

describe('words', () => {
  it('says a ratio as a signed percentage and a value plainly', () => {
    expect(percentText(1.18)).toBe('+18.0 %');
    expect(percentText(0.875)).toBe('−12.5 %');
    expect(valueText('6.8.0')).toBe('6.8.0');
    expect(valueText(null)).toBe('—');
    expect(valueText({ a: 1 })).toBe('{"a":1}');
  });
});
