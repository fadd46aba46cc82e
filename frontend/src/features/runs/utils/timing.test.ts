import { describe, expect, it } from 'vitest';
import type { Result, Run, RunItem } from '@/lib/api-types';
import { aLaunch, aResult, aRunItem, LIMITS, progress } from '@/lib/test-fixtures';
import { batchEta, formatEta, itemDuration, launchEta, runSettings, runTiming } from './timing';

const item = (id: string, state: RunItem['state'], kernel = 'k'): RunItem =>
  aRunItem({ id, index: Number(id.slice(1)), kernel, state, result_id: state === 'succeeded' ? `r-${id}` : null });

const result = (itemId: string, walls: number[]): Result =>
  aResult({ id: `r-${itemId}`, item_id: itemId, n: 6, samples: [], launches: walls.map((w, index) => aLaunch({ index, wall_s: w, samples: 2 })) });

// 3 launches × (learnt 1 s + 2 reps × 0.5 s) = 6 s per item
const settings = { profile: 'default' as const, repetitions: 6, min_time_s: 0.5, launches: 3 };
const learnt = new Map([['k', 1]]);
const START = '2026-11-23T10:00:00Z';
const at = (s: number) => new Date(Date.parse(START) + s * 1000);

const run = (items: RunItem[], extra: Partial<Run> = {}) =>
  ({ status: 'running', started_at: START, finished_at: null, items, ...settings, ...extra }) as unknown as Run;

describe('itemDuration', () => {
  it("adds its launches' wall time (interleaved with other items'), else takes start to end", () => {
    expect(itemDuration({ launches: [aLaunch({ index: 0, wall_s: 1.5, samples: 2 }), aLaunch({ index: 1, wall_s: 2, samples: 2 })], started_at: null, finished_at: null })).toBeCloseTo(3.5);
    expect(itemDuration({ launches: null, started_at: START, finished_at: '2026-11-23T10:00:04Z' })).toBe(4);
    expect(itemDuration({ launches: [aLaunch({ index: 0, wall_s: null, samples: 2 })], started_at: null, finished_at: null })).toBeNull();
  });
});

describe('runSettings', () => {
  it("uses the run's own settings, else its profile's, and the kernels' default min time", () => {
    expect(runSettings({ profile: 'thorough', repetitions: null, min_time_s: null, launches: null }, LIMITS)).toEqual({
      repetitions: 12,
      minTimeS: 0.2,
      launches: 6,
    });
    // the kernels' default min time is the served one (GET /limits `kernel_defaults`)
    const slower = { ...LIMITS, kernel_defaults: { ...LIMITS.kernel_defaults, min_time_s: 0.3 } };
    expect(runSettings({ profile: 'thorough', repetitions: null, min_time_s: null, launches: null }, slower).minTimeS).toBe(0.3);
  });
});

describe('runTiming', () => {
  it('takes what the run spent on the items still to go off their estimates', () => {
    const t = runTiming(run([item('i0', 'running'), item('i1', 'queued'), item('i2', 'queued')]), [], learnt, at(4), LIMITS);
    expect(t.elapsed).toBe(4);
    expect(t.estimate).toBeCloseTo(18);
    expect(t.eta).toBeCloseTo(14);
    expect(t.overdue).toBe(false);
  });

  it("gives finished items their own duration and scales the rest by how they compared", () => {
    // i0 took 9 s where 6 were estimated: the remaining 6 s estimate becomes 9 s, 10 - 9 = 1 s spent on it
    const t = runTiming(run([item('i0', 'succeeded'), item('i1', 'running')]), [result('i0', [3, 3, 3])], learnt, at(10), LIMITS);
    expect(t.durations.get('i0')).toBeCloseTo(9);
    expect(t.eta).toBeCloseTo(8);
  });

  it('says overdue when the items left should have finished by now', () => {
    const t = runTiming(run([item('i0', 'running')]), [], learnt, at(60), LIMITS);
    expect(t.eta).toBe(0);
    expect(t.overdue).toBe(true);
    expect(formatEta(t.eta!, t.overdue)).toMatch(/any moment/);
  });

  it('has no ETA once finished (the elapsed time is its duration) nor before it starts', () => {
    const done = runTiming(
      run([item('i0', 'succeeded')], { status: 'succeeded', finished_at: '2026-11-23T10:01:05Z' }),
      [result('i0', [2, 2, 2])],
      learnt,
      at(600),
      LIMITS,
    );
    expect(done.eta).toBeNull();
    expect(done.elapsed).toBe(65);
    const queued = runTiming(run([item('i0', 'queued')], { status: 'queued', started_at: null }), [], learnt, at(5), LIMITS);
    expect(queued.eta).toBeNull();
    expect(queued.elapsed).toBeNull();
    expect(queued.estimate).toBeCloseTo(6);
  });
});

describe('formatEta', () => {
  it('rounds as an estimate should', () => {
    expect(formatEta(42, false)).toBe('about 40 s left');
    expect(formatEta(1, false)).toBe('a few seconds left');
    expect(formatEta(190, false)).toBe('about 3 min left');
    expect(formatEta(3 * 3600 + 600, false)).toBe('about 3 h 10 min left');
  });
});

describe('launchEta (issue 27)', () => {
  // 21 launches planned; launches take 1 s each.
  const p = (done: number, lastAt: number) => ({ launches_done: done, launches_planned: 21, launches_wall_s: done * 1, launch_at: at(lastAt).toISOString() });

  it('counts down between updates and moves with each launch', () => {
    // the case: "about 5 s left" at 2, 4 and 6 s elapsed; now a figure that moves every second
    expect(launchEta(p(2, 2), at(2))!.eta).toBeCloseTo(19);
    expect(launchEta(p(2, 2), at(2.5))!.eta).toBeCloseTo(18.5);
    expect(launchEta(p(4, 4), at(4))!.eta).toBeCloseTo(17);
    expect(launchEta(p(6, 6), at(6))!.eta).toBeCloseTo(15);
    expect(launchEta(p(20, 20), at(20.4))).toEqual({ eta: expect.closeTo(0.6), overdue: false });
    // the last launch runs longer than the mean: any moment now
    expect(launchEta(p(20, 20), at(22))).toEqual({ eta: 0, overdue: true });
  });

  it('says nothing before a launch was measured or without launch counts', () => {
    expect(launchEta(p(0, 0), at(1))).toBeNull();
    expect(launchEta({ launches_done: 3, launches_planned: 0, launches_wall_s: 0, launch_at: null }, at(1))).toBeNull();
    expect(launchEta(undefined, at(1))).toBeNull();
  });

  it("is the running run's ETA once measured, and formats short ones to the second", () => {
    const t = runTiming({ ...run([item('i0', 'running'), item('i1', 'running')]), progress: p(4, 8) }, [], learnt, at(9), LIMITS);
    expect(t.eta).toBeCloseTo(16);
    expect(formatEta(4.2, false)).toBe('about 4 s left');
    expect(formatEta(17, false)).toBe('about 15 s left');
  });
});

describe('batchEta (issue 27: the batch page had none)', () => {
  const prog = (done: number, planned: number, wall: number, lastAt: number) =>
    progress(3, 0, 0, 3, { launches_done: done, launches_planned: planned, launches_wall_s: wall, launch_at: at(lastAt).toISOString() });

  it('ends with the slowest machine, counting down on the clock', () => {
    const runs = [
      { status: 'running' as const, progress: prog(3, 9, 3, 3) }, // 6 launches of 1 s left
      { status: 'running' as const, progress: prog(3, 9, 6, 6) }, // 6 launches of 2 s left
      { status: 'succeeded' as const, progress: prog(9, 9, 9, 9) },
      { status: 'queued' as const, progress: progress(3, 0) },
    ];
    expect(batchEta(runs, at(6))).toEqual({ eta: 12, overdue: false, running: 2, waiting: 1 });
    expect(batchEta(runs, at(8))!.eta).toBeCloseTo(10);
  });

  it('has none once every run finished, and waits for a first launch', () => {
    expect(batchEta([{ status: 'succeeded', progress: prog(9, 9, 9, 9) }], at(10))).toBeNull();
    expect(batchEta([{ status: 'running', progress: progress(3, 0, 0, 3, { launches_planned: 9 }) }], at(1))).toEqual({ eta: 0, overdue: false, running: 0, waiting: 0 });
  });
});
