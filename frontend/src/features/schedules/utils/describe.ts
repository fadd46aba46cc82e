// Schedules in words: the timing ("every 15 min", "at 03:00 UTC on Mon–Fri"), the time to the next
// firing ("in 4 min 10 s"), and a firing's outcome. Pure.
import type { Firing, Timing } from '../api/schedules';

const UNITS: [number, string][] = [
  [86_400, 'd'],
  [3600, 'h'],
  [60, 'min'],
  [1, 's'],
];

/** 90 -> "1 min 30 s", 7200 -> "2 h", 0 -> "0 s": the two largest units, no zero parts. */
export function describeSeconds(total: number): string {
  let left = Math.max(0, Math.round(total));
  if (left === 0) return '0 s';
  const parts: string[] = [];
  for (const [size, unit] of UNITS) {
    if (left >= size) {
      parts.push(`${Math.floor(left / size)} ${unit}`);
      left %= size;
    }
    if (parts.length === 2) break;
  }
  return parts.join(' ');
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const pad = (n: number) => String(n).padStart(2, '0');
const isNum = (s: string) => /^\d+$/.test(s);

function describeDays(dow: string): string | null {
  if (dow === '*') return null;
  const range = /^(\d)-(\d)$/.exec(dow);
  if (range) return `${DAYS[Number(range[1]) % 7]}–${DAYS[Number(range[2]) % 7]}`;
  if (/^\d(,\d)*$/.test(dow)) return dow.split(',').map((d) => DAYS[Number(d) % 7]).join(', ');
  return null;
}

/** A 5-field cron line in words where it is a common shape; else the line itself ("cron …"). */
export function describeCron(cron: string): string {
  const fields = cron.trim().split(/\s+/);
  if (fields.length !== 5) return `cron ${cron}`;
  const [min = '', hour = '', dom = '', mon = '', dow = ''] = fields;
  const step = /^\*\/(\d+)$/.exec(min);
  if (step && hour === '*' && dom === '*' && mon === '*' && dow === '*') return `every ${step[1]} min`;
  if (min === '*' && hour === '*' && dom === '*' && mon === '*' && dow === '*') return 'every minute';
  if (isNum(min) && hour === '*' && dom === '*' && mon === '*' && dow === '*') return `hourly at :${pad(Number(min))}`;
  if (isNum(min) && isNum(hour) && dom === '*' && mon === '*') {
    const at = `at ${pad(Number(hour))}:${pad(Number(min))} UTC`;
    if (dow === '*') return `daily ${at}`;
    const days = describeDays(dow);
    if (days) return `${at} on ${days}`;
  }
  return `cron ${fields.join(' ')}`;
}

/** The timing in words, with its jitter when it has one. */
export function describeTiming(t: Timing): string {
  const base = t.interval_s != null ? `every ${describeSeconds(t.interval_s)}` : describeCron(t.cron ?? '');
  return t.jitter_s > 0 ? `${base} (+ up to ${describeSeconds(t.jitter_s)} jitter)` : base;
}

/** Time to the next firing: "in 4 min 10 s", "due now" once passed (the next tick fires it), "paused". */
export function countdown(nextFireAt: string | null, now: Date): string {
  if (nextFireAt === null) return 'paused';
  const at = Date.parse(nextFireAt);
  if (Number.isNaN(at)) return '—';
  const s = (at - now.getTime()) / 1000;
  return s <= 0 ? 'due now' : `in ${describeSeconds(Math.ceil(s))}`;
}

/** A firing's outcome in a few words: "2 runs", "1 run, 1 skipped (busy)", "no run: why". */
export function describeFiring(f: Firing | null): string {
  if (f === null) return 'not yet';
  const runs = f.run_ids.length;
  if (runs === 0) {
    if (f.error) return `no run: ${f.error}`;
    const busy = f.skipped.length > 0 && f.skipped.every((s) => s.reason === 'busy');
    return busy ? 'no run: every machine still runs the last firing’s run' : 'no run: every machine skipped';
  }
  const made = `${runs} run${runs === 1 ? '' : 's'}`;
  if (f.skipped.length === 0) return made;
  const reasons = [...new Set(f.skipped.map((s) => (s.reason === 'busy' ? 'busy' : 'refused')))].join(', ');
  return `${made}, ${f.skipped.length} skipped (${reasons})`;
}
