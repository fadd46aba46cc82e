// Number, unit, time and size formatting for the explorer. Pure functions, tested in format.test.ts.

const DASH = '—';

function groupThousands(int: string): string {
  return int.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
}

const SUPERSCRIPT: Record<string, string> = {
  '-': '⁻', '0': '⁰', '1': '¹', '2': '²', '3': '³', '4': '⁴', '5': '⁵', '6': '⁶', '7': '⁷', '8': '⁸', '9': '⁹',
};

/**
 * Scientific notation as a report prints it: 7.19e-6 → "7.19 × 10⁻⁶". Why this form for what falls
 * outside the everyday range (counters such as 7.19e-6 switches/op, tiny CIs): "7.19e-6" is a
 * programmer's notation that newcomers misread, "0.00000719" makes the reader count zeros, and an SI
 * prefix or "per million ops" would change the unit from row to row of one table (µ before a count
 * reads as a unit). This keeps the counter's own unit (switches/op, which the kernel README states
 * expectations in: ~1 for a ping-pong, ~0 for a kernel that never blocks) and its significant digits.
 */
function scientific(abs: number, digits: number): string {
  const [mantissa = '', exp = '0'] = abs.toExponential(digits - 1).split('e');
  const power = String(Number(exp)).replace(/[-0-9]/g, (c) => SUPERSCRIPT[c] ?? c);
  return `${mantissa} × 10${power}`;
}

/**
 * A number to `digits` significant digits without exponent in the everyday range:
 * 48.123 → "48.1", 1.5 → "1.50", 0.01234 → "0.0123", 12345.6 → "12,346" (whole numbers of
 * 1000 and more keep every integer digit, grouped); outside it in scientific notation:
 * 0.0000123 → "1.23 × 10⁻⁵", 2.5e18 → "2.50 × 10¹⁸".
 */
export function formatNumber(value: number | null | undefined, digits = 3): string {
  if (value === null || value === undefined || Number.isNaN(value)) return DASH;
  if (!Number.isFinite(value)) return value > 0 ? '∞' : '−∞';
  if (value === 0) return '0';
  const abs = Math.abs(value);
  const sign = value < 0 ? '-' : '';
  // From 10¹⁵ on, 19 grouped digits say less than an exponent (and toString turns exponential at 10²¹).
  if (abs < 1e-3 || abs >= 1e15) return sign + scientific(abs, digits);
  if (abs >= 10 ** digits) return sign + groupThousands(Math.round(abs).toString());
  const text = abs.toPrecision(digits);
  // toPrecision may still answer in exponent form at the top of the range (999.5 → "1.00e+3").
  if (text.includes('e')) return sign + groupThousands(Math.round(abs).toString());
  return sign + text;
}

/** An integer with grouped thousands: 4000000 → "4,000,000". */
export function formatInteger(value: number | null | undefined): string {
  if (value === null || value === undefined || !Number.isFinite(value)) return DASH;
  const sign = value < 0 ? '-' : '';
  return sign + groupThousands(Math.round(Math.abs(value)).toString());
}

/** A fraction as a percentage: 0.01234 → "1.23 %". */
export function formatPercent(fraction: number | null | undefined, digits = 3): string {
  if (fraction === null || fraction === undefined || Number.isNaN(fraction)) return DASH;
  return `${formatNumber(fraction * 100, digits)} %`;
}

// ------------------------------------------------------------------ time units

const TIME_UNITS = [
  { name: 'ns', ns: 1 },
  { name: 'µs', ns: 1e3 },
  { name: 'ms', ns: 1e6 },
  { name: 's', ns: 1e9 },
] as const;

const TIME_ALIASES: Record<string, number> = { ns: 1, us: 1e3, 'µs': 1e3, 'μs': 1e3, ms: 1e6, s: 1e9 };

/** Splits "ns/op" into its time part in nanoseconds and the rest ("/op"); null when not a time unit. */
export function parseTimeUnit(unit: string): { ns: number; rest: string } | null {
  const m = /^\s*(ns|us|µs|μs|ms|s)(\/.*)?\s*$/.exec(unit);
  if (!m) return null;
  const base = TIME_ALIASES[m[1] ?? ''];
  return base === undefined ? null : { ns: base, rest: m[2] ?? '' };
}

export interface Scale {
  /** Multiply a value in the original unit by this to get it in `unit`. */
  factor: number;
  unit: string;
}

/**
 * The unit in which `reference` (a value in `unit`) reads best: time units (ns/op, µs, ms/op…) move
 * to the largest of ns, µs, ms, s that keeps the number ≥ 1; any other unit is kept as it is.
 */
export function chooseScale(reference: number | null | undefined, unit: string): Scale {
  const time = parseTimeUnit(unit);
  if (!time || reference === null || reference === undefined || !Number.isFinite(reference)) {
    return { factor: 1, unit };
  }
  const ns = Math.abs(reference) * time.ns;
  let best: (typeof TIME_UNITS)[number] = TIME_UNITS[0];
  for (const u of TIME_UNITS) if (ns >= u.ns) best = u;
  return { factor: time.ns / best.ns, unit: best.name + time.rest };
}

/**
 * One scale for a whole series (a kernel's points: a sweep, a table's rows, a chart's axis), chosen from
 * its smallest value so every number reads ≥ 1 and the unit does not change along the series
 * ("514, 1,420 ns/op", not "514 ns/op" then "1.42 µs/op").
 */
export function seriesScale(values: readonly (number | null | undefined)[], unit: string): Scale {
  const finite = values.filter((v): v is number => v !== null && v !== undefined && Number.isFinite(v) && v !== 0).map(Math.abs);
  return chooseScale(finite.length > 0 ? Math.min(...finite) : null, unit);
}

/** A value in `scale`'s unit, without the unit: for table cells whose header names it. */
export function formatScaled(value: number | null | undefined, scale: Scale, digits = 3): string {
  if (value === null || value === undefined) return DASH;
  return formatNumber(value * scale.factor, digits);
}

/** A measurement with its unit, scaled to read well: (2048, "ns/op") → "2.05 µs/op". */
export function formatMeasure(value: number | null | undefined, unit: string, digits = 3): string {
  if (value === null || value === undefined || Number.isNaN(value)) return DASH;
  const scale = chooseScale(value, unit);
  return `${formatScaled(value, scale, digits)} ${scale.unit}`.trim();
}

// ------------------------------------------------------------------ sizes, durations, dates

const BINARY_UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB', 'PiB'];

/** n bytes as a value ≥ 1 (when n is) in the largest binary unit that allows it. */
function binaryScale(n: number): { v: number; unit: string } {
  let v = n;
  let i = 0;
  while (v >= 1024 && i < BINARY_UNITS.length - 1) {
    v /= 1024;
    i += 1;
  }
  return { v, unit: BINARY_UNITS[i]! };
}

/** Bytes in binary units: 17179869184 → "16.0 GiB". Accepts the string form of a uint64. */
export function formatBytes(bytes: number | string | null | undefined): string {
  const n = typeof bytes === 'string' ? Number(bytes) : bytes;
  if (n === null || n === undefined || !Number.isFinite(n) || n < 0) return DASH;
  const { v, unit } = binaryScale(n);
  return unit === 'B' ? `${v} B` : `${formatNumber(v)} ${unit}`;
}

const SIZE_SUFFIX: Record<string, number> = { '': 1, K: 1024, M: 1024 ** 2, G: 1024 ** 3, T: 1024 ** 4 };

/**
 * A CPU cache size as the agent reports it (sysfs `cache/indexN/size`: "32K", "491520K", where K is
 * 1024 bytes) in binary units like the memory beside it: "32 KiB", "480 MiB", "1.25 MiB". Cache sizes
 * are whole numbers of their unit, so they are shown exactly, without "32.0". Text it cannot read stays
 * as it is.
 */
export function formatCacheSize(size: string | number | null | undefined): string {
  if (size === null || size === undefined || size === '') return DASH;
  let bytes: number;
  if (typeof size === 'number') {
    bytes = size;
  } else {
    const m = /^\s*(\d+(?:\.\d+)?)\s*([KMGT]?)(?:i?B)?\s*$/i.exec(size);
    if (!m) return size;
    bytes = Number(m[1]) * (SIZE_SUFFIX[(m[2] ?? '').toUpperCase()] ?? 1);
  }
  if (!Number.isFinite(bytes) || bytes < 0) return String(size);
  const { v, unit } = binaryScale(bytes);
  return `${Number.isInteger(v) ? String(v) : formatNumber(v)} ${unit}`;
}

/** A duration in seconds: 0.05 → "50.0 ms", 4.2 → "4.20 s", 125 → "2 min 5 s", 7300 → "2 h 1 min". */
export function formatDuration(seconds: number | null | undefined): string {
  if (seconds === null || seconds === undefined || !Number.isFinite(seconds) || seconds < 0) return DASH;
  if (seconds < 60) return formatMeasure(seconds, 's');
  const total = Math.round(seconds);
  const h = Math.floor(total / 3600);
  const min = Math.floor((total % 3600) / 60);
  const s = total % 60;
  if (h > 0) return min > 0 ? `${h} h ${min} min` : `${h} h`;
  return s > 0 ? `${min} min ${s} s` : `${min} min`;
}

/**
 * A server timestamp as a Date. ISO 8601 without a zone (SQLite gives naive datetimes) is taken
 * as UTC, which is what the server stores; null for missing or unreadable values.
 */
export function parseTimestamp(value: string | null | undefined): Date | null {
  if (!value) return null;
  const hasZone = /(?:[zZ]|[+-]\d{2}:?\d{2})$/.test(value.trim());
  const iso = hasZone || !/^\d{4}-\d{2}-\d{2}T/.test(value) ? value : `${value}Z`;
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? null : d;
}

/** How long ago, in words: "just now", "12 s ago", "5 min ago", "3 h ago", "2 d ago"; "never" for null. */
export function formatRelativeTime(value: string | null | undefined, now: Date = new Date()): string {
  const d = parseTimestamp(value);
  if (!d) return 'never';
  const s = Math.round((now.getTime() - d.getTime()) / 1000);
  if (s < 5) return 'just now'; // also small clock skews into the future
  if (s < 60) return `${s} s ago`;
  const min = Math.floor(s / 60);
  if (min < 60) return `${min} min ago`;
  const h = Math.floor(min / 60);
  if (h < 48) return `${h} h ago`;
  return `${Math.floor(h / 24)} d ago`;
}

function pad(n: number): string {
  return n.toString().padStart(2, '0');
}

/** A timestamp in the reader's local time, "2026-11-22 03:04:05"; "—" when missing. */
export function formatDateTime(value: string | null | undefined): string {
  const d = parseTimestamp(value);
  if (!d) return DASH;
  return (
    `${d.getFullYear()}-${pad(d.getMonth() + 1)}-${pad(d.getDate())} ` +
    `${pad(d.getHours())}:${pad(d.getMinutes())}:${pad(d.getSeconds())}`
  );
}

/** Seconds between two timestamps, or null when either is missing. */
export function secondsBetween(start: string | null | undefined, end: string | null | undefined): number | null {
  const a = parseTimestamp(start);
  const b = parseTimestamp(end);
  return a && b ? (b.getTime() - a.getTime()) / 1000 : null;
}

/** Kernel parameters as "name=value" pairs: {threads: 4, placement: "same_core"} → "threads=4, placement=same_core". */
export function formatParams(params: Record<string, unknown> | null | undefined): string {
  const entries = Object.entries(params ?? {});
  if (entries.length === 0) return DASH;
  return entries.map(([k, v]) => `${k}=${typeof v === 'string' ? v : JSON.stringify(v)}`).join(', ');
}

/**
 * A parameter point as every page names it, in formatParams' words: from its params, or, where a point
 * came without them, from its canonical key ("a=1&b=x" → "a=1, b=x"); `empty` for the point of no
 * parameters (the kernel's defaults).
 */
export function formatPoint(params: Record<string, unknown> | null | undefined, paramsKey = '', empty = '(defaults)'): string {
  if (params && Object.keys(params).length > 0) return formatParams(params);
  const fromKey = paramsKey
    .split('&')
    .filter(Boolean)
    .map((kv): [string, string] => {
      const i = kv.indexOf('=');
      return i < 0 ? [kv, ''] : [kv.slice(0, i), kv.slice(i + 1)];
    });
  return fromKey.length > 0 ? formatParams(Object.fromEntries(fromKey)) : empty;
}
