import { describe, expect, it } from 'vitest';
import {
  chooseScale,
  seriesScale,
  formatBytes,
  formatCacheSize,
  formatDateTime,
  formatDuration,
  formatInteger,
  formatMeasure,
  formatNumber,
  formatParams,
  formatPoint,
  formatPercent,
  formatRelativeTime,
  formatScaled,
  parseTimeUnit,
  parseTimestamp,
  secondsBetween,
} from './format';

describe('formatNumber', () => {
  it('gives three significant digits in the everyday range', () => {
    expect(formatNumber(48.123)).toBe('48.1');
    expect(formatNumber(1.5)).toBe('1.50');
    expect(formatNumber(0.01234)).toBe('0.0123');
    expect(formatNumber(999.4)).toBe('999');
    expect(formatNumber(-2.345)).toBe('-2.35');
    expect(formatNumber(0)).toBe('0');
  });

  it('keeps every integer digit from 1000 on, grouped', () => {
    expect(formatNumber(12345.6)).toBe('12,346');
    expect(formatNumber(999.7)).toBe('1,000');
    expect(formatNumber(4000000)).toBe('4,000,000');
  });

  it('writes tiny and huge values in scientific notation, as a report prints it', () => {
    expect(formatNumber(0.0000123)).toBe('1.23 × 10⁻⁵');
    // The newcomer's counter: not "7.19e-6", not "0.00000719".
    expect(formatNumber(7.19e-6)).toBe('7.19 × 10⁻⁶');
    expect(formatNumber(-4e-12)).toBe('-4.00 × 10⁻¹²');
    expect(formatNumber(0.001)).toBe('0.00100');
    expect(formatNumber(2.5e18)).toBe('2.50 × 10¹⁸');
    expect(formatNumber(1e14)).toBe('100,000,000,000,000');
  });

  it('shows missing values as a dash', () => {
    expect(formatNumber(null)).toBe('—');
    expect(formatNumber(undefined)).toBe('—');
    expect(formatNumber(Number.NaN)).toBe('—');
    expect(formatNumber(Infinity)).toBe('∞');
  });

  it('honours other digit counts', () => {
    expect(formatNumber(3.14159, 5)).toBe('3.1416');
  });
});

describe('formatInteger and formatPercent', () => {
  it('groups integers', () => {
    expect(formatInteger(1234567)).toBe('1,234,567');
    expect(formatInteger(-1000)).toBe('-1,000');
  });

  it('turns fractions into percentages', () => {
    expect(formatPercent(0.01234)).toBe('1.23 %');
    expect(formatPercent(0)).toBe('0 %');
    expect(formatPercent(null)).toBe('—');
  });
});

describe('time unit scaling', () => {
  it('recognises time units with a per-something suffix', () => {
    expect(parseTimeUnit('ns/op')).toEqual({ ns: 1, rest: '/op' });
    expect(parseTimeUnit('us/switch')).toEqual({ ns: 1000, rest: '/switch' });
    expect(parseTimeUnit('ms')).toEqual({ ns: 1e6, rest: '' });
    expect(parseTimeUnit('ops/s')).toBeNull();
    expect(parseTimeUnit('MB/s')).toBeNull();
  });

  it('picks the largest unit keeping the number at least 1', () => {
    expect(chooseScale(48.1, 'ns/op')).toEqual({ factor: 1, unit: 'ns/op' });
    expect(chooseScale(2048, 'ns/op')).toEqual({ factor: 1e-3, unit: 'µs/op' });
    expect(chooseScale(3.5e6, 'ns/op')).toEqual({ factor: 1e-6, unit: 'ms/op' });
    expect(chooseScale(2e9, 'ns/op')).toEqual({ factor: 1e-9, unit: 's/op' });
    expect(chooseScale(0.5, 'us/op')).toEqual({ factor: 1000, unit: 'ns/op' });
    expect(chooseScale(0.2, 'ns/op')).toEqual({ factor: 1, unit: 'ns/op' });
  });

  it('leaves other units alone', () => {
    expect(chooseScale(12345, 'MB/s')).toEqual({ factor: 1, unit: 'MB/s' });
    expect(chooseScale(null, 'ns/op')).toEqual({ factor: 1, unit: 'ns/op' });
  });

  it('formats measurements with their scaled unit', () => {
    expect(formatMeasure(48.123, 'ns/op')).toBe('48.1 ns/op');
    expect(formatMeasure(2048, 'ns/op')).toBe('2.05 µs/op');
    expect(formatMeasure(1_500_000, 'ns/op')).toBe('1.50 ms/op');
    expect(formatMeasure(850, 'MB/s')).toBe('850 MB/s');
    expect(formatMeasure(null, 'ns/op')).toBe('—');
  });

  it('formats a row of values on one scale', () => {
    const scale = chooseScale(2048, 'ns/op');
    expect(formatScaled(1990, scale)).toBe('1.99');
    expect(formatScaled(950, scale)).toBe('0.950');
    expect(formatScaled(undefined, scale)).toBe('—');
  });
});

describe('formatBytes and formatDuration', () => {
  it('uses binary units and reads uint64 strings', () => {
    expect(formatBytes(512)).toBe('512 B');
    expect(formatBytes(17179869184)).toBe('16.0 GiB');
    expect(formatBytes('25769803776')).toBe('24.0 GiB');
    expect(formatBytes(undefined)).toBe('—');
  });

  it('formats durations', () => {
    expect(formatDuration(0.05)).toBe('50.0 ms');
    expect(formatDuration(4.2)).toBe('4.20 s');
    expect(formatDuration(125)).toBe('2 min 5 s');
    expect(formatDuration(120)).toBe('2 min');
    expect(formatDuration(7300)).toBe('2 h 1 min');
    expect(formatDuration(null)).toBe('—');
  });
});

describe('timestamps', () => {
  it('reads zone-less ISO timestamps as UTC', () => {
    expect(parseTimestamp('2026-11-22T02:30:04')?.toISOString()).toBe('2026-11-22T02:30:04.000Z');
    expect(parseTimestamp('2026-11-22T02:30:04.5+00:00')?.toISOString()).toBe('2026-11-22T02:30:04.500Z');
    expect(parseTimestamp('2026-11-22T03:30:04+01:00')?.toISOString()).toBe('2026-11-22T02:30:04.000Z');
    expect(parseTimestamp('2026-11-22T02:30:04Z')?.toISOString()).toBe('2026-11-22T02:30:04.000Z');
    expect(parseTimestamp('garbage')).toBeNull();
    expect(parseTimestamp(null)).toBeNull();
  });

  it('says how long ago', () => {
    const now = new Date('2026-11-22T12:00:00Z');
    expect(formatRelativeTime('2026-11-22T11:59:58Z', now)).toBe('just now');
    expect(formatRelativeTime('2026-11-22T12:00:03Z', now)).toBe('just now');
    expect(formatRelativeTime('2026-11-22T11:59:30Z', now)).toBe('30 s ago');
    expect(formatRelativeTime('2026-11-22T11:55:00Z', now)).toBe('5 min ago');
    expect(formatRelativeTime('2026-11-22T09:00:00Z', now)).toBe('3 h ago');
    expect(formatRelativeTime('2026-11-19T12:00:00Z', now)).toBe('3 d ago');
    expect(formatRelativeTime(null, now)).toBe('never');
  });

  it('formats local date-times and spans', () => {
    expect(formatDateTime('2026-11-22T02:30:04Z')).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}$/);
    expect(formatDateTime(null)).toBe('—');
    expect(secondsBetween('2026-11-22T02:30:04Z', '2026-11-22T02:30:06.5Z')).toBe(2.5);
    expect(secondsBetween('2026-11-22T02:30:04Z', null)).toBeNull();
  });
});

describe('formatParams', () => {
  it('lists name=value pairs', () => {
    expect(formatParams({ threads: 4, placement: 'same_core', pin: true })).toBe(
      'threads=4, placement=same_core, pin=true',
    );
    expect(formatParams({})).toBe('—');
  });
});

describe('seriesScale', () => {
  it('picks one unit for a whole series from its smallest value', () => {
    expect(seriesScale([1420, 514, null, 2600], 'ns/op')).toEqual({ factor: 1, unit: 'ns/op' });
    expect(seriesScale([2_000, 50_000], 'ns/op')).toEqual({ factor: 1e-3, unit: 'µs/op' });
    expect(seriesScale([], 'ns/op')).toEqual({ factor: 1, unit: 'ns/op' });
    expect(seriesScale([0, 3e6], 'ns')).toEqual({ factor: 1e-6, unit: 'ms' });
    expect(seriesScale([900, 4000], 'MB/s')).toEqual({ factor: 1, unit: 'MB/s' });
  });
});

describe('formatCacheSize', () => {
  it('reads sysfs sizes (K = 1024 bytes) into binary units, exactly', () => {
    expect(formatCacheSize('32K')).toBe('32 KiB');
    expect(formatCacheSize('491520K')).toBe('480 MiB');
    expect(formatCacheSize('1024K')).toBe('1 MiB');
    expect(formatCacheSize('1280K')).toBe('1.25 MiB');
    expect(formatCacheSize('36 MiB')).toBe('36 MiB');
    expect(formatCacheSize(49152)).toBe('48 KiB');
  });

  it('keeps what it cannot read', () => {
    expect(formatCacheSize('unknown')).toBe('unknown');
    expect(formatCacheSize('')).toBe('—');
  });
});

describe('formatPoint', () => {
  it('names a point as formatParams does, from its params or else its key', () => {
    expect(formatPoint({ threads: 4, placement: 'same_core' }, 'placement=same_core&threads=4')).toBe('threads=4, placement=same_core');
    expect(formatPoint({}, 'a=1&b=x')).toBe('a=1, b=x');
    expect(formatPoint(undefined, 'a=1&b=x')).toBe(formatParams({ a: '1', b: 'x' }));
  });

  it('calls the point without parameters the defaults', () => {
    expect(formatPoint({}, '')).toBe('(defaults)');
    expect(formatPoint(null, '', '—')).toBe('—');
  });
});
