import { describe, expect, it } from 'vitest';
import type { Firing } from '../api/schedules';
import { countdown, describeCron, describeFiring, describeSeconds, describeTiming } from './describe';

describe('describeSeconds', () => {
  it('keeps the two largest units', () => {
    expect(describeSeconds(0)).toBe('0 s');
    expect(describeSeconds(45)).toBe('45 s');
    expect(describeSeconds(90)).toBe('1 min 30 s');
    expect(describeSeconds(3600)).toBe('1 h');
    expect(describeSeconds(86_400 + 3600 + 61)).toBe('1 d 1 h');
  });
});

describe('describeCron', () => {
  it.each([
    ['*/15 * * * *', 'every 15 min'],
    ['* * * * *', 'every minute'],
    ['5 * * * *', 'hourly at :05'],
    ['0 3 * * *', 'daily at 03:00 UTC'],
    ['30 9 * * 1-5', 'at 09:30 UTC on Mon–Fri'],
    ['0 6 * * 0,6', 'at 06:00 UTC on Sun, Sat'],
    ['0 0 1 * *', 'cron 0 0 1 * *'],
    ['bad', 'cron bad'],
  ])('%s -> %s', (line, words) => {
    expect(describeCron(line)).toBe(words);
  });
});

describe('describeTiming', () => {
  it('says the interval or the cron line, and the jitter', () => {
    expect(describeTiming({ interval_s: 3600, cron: null, jitter_s: 0 })).toBe('every 1 h');
    expect(describeTiming({ interval_s: null, cron: '0 3 * * *', jitter_s: 300 })).toBe('daily at 03:00 UTC (+ up to 5 min jitter)');
  });
});

describe('countdown', () => {
  const now = new Date('2026-11-27T10:00:00Z');
  it('counts down to the next firing', () => {
    expect(countdown('2026-11-27T10:04:10Z', now)).toBe('in 4 min 10 s');
    expect(countdown('2026-11-27T10:00:00.400Z', now)).toBe('in 1 s');
    expect(countdown('2026-11-27T09:59:59Z', now)).toBe('due now');
    expect(countdown(null, now)).toBe('paused');
    expect(countdown('nonsense', now)).toBe('—');
  });
});

describe('describeFiring', () => {
  const f = (run_ids: string[], skipped: Firing['skipped'] = [], error: string | null = null): Firing => ({
    id: 'f',
    due_at: '2026-11-27T10:00:00Z',
    fired_at: '2026-11-27T10:00:01Z',
    run_ids,
    skipped,
    error,
  });
  it('says what a firing made', () => {
    expect(describeFiring(null)).toBe('not yet');
    expect(describeFiring(f(['a', 'b']))).toBe('2 runs');
    expect(describeFiring(f(['a'], [{ machine_id: 'm', reason: 'busy' }]))).toBe('1 run, 1 skipped (busy)');
    expect(describeFiring(f([], [], 'no machine to run on'))).toBe('no run: no machine to run on');
    expect(describeFiring(f([], [{ machine_id: 'm', reason: 'busy' }]))).toBe('no run: every machine still runs the last firing’s run');
  });
});
