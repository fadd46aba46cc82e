import { describe, expect, it } from 'vitest';
import { profileSettings } from '@/lib/limits';
import { LIMITS } from '@/lib/test-fixtures';
import { effectiveSettings, estimateRun, formatEstimate, guessLaunchCost, learnLaunchOverheads, repsPerLaunch } from './estimate';

describe('effectiveSettings', () => {
  it("takes the profile's settings unless the form overrides them with valid values", () => {
    expect(effectiveSettings(profileSettings(LIMITS, 'default'), '', '')).toEqual({ minTimeS: 0.1, repetitions: 6, launches: 3 });
    expect(effectiveSettings(profileSettings(LIMITS, 'thorough'), '', '')).toEqual({ minTimeS: 0.25, repetitions: 12, launches: 6 });
    expect(effectiveSettings(profileSettings(LIMITS, 'quick'), '9', '0.2', 1)).toEqual({ minTimeS: 0.2, repetitions: 9, launches: 1 });
    expect(effectiveSettings(profileSettings(LIMITS, 'quick'), 'x', '-1')).toEqual({ minTimeS: 0.05, repetitions: 6, launches: 3 });
  });
});

describe('repsPerLaunch', () => {
  it("shares the repetitions out as the agent does: rounded up, at least 2 unless fewer were asked", () => {
    expect(repsPerLaunch(6, 3)).toBe(2);
    expect(repsPerLaunch(15, 5)).toBe(3);
    expect(repsPerLaunch(7, 3)).toBe(3);
    expect(repsPerLaunch(3, 3)).toBe(2);
    expect(repsPerLaunch(1, 3)).toBe(1);
  });
});

describe('estimateRun', () => {
  it('is items × launches × (launch cost + repetitions per launch × min time)', () => {
    const s = { minTimeS: 0.1, repetitions: 6, launches: 3 };
    // 4 items × 3 launches × ((0.3 + 2 × 0.1) + 2 × 0.1) = 8.4 s
    expect(guessLaunchCost(0.1)).toBeCloseTo(0.5);
    expect(estimateRun([{ kernel: 'a', items: 1 }, { kernel: 'b', items: 3 }], s).seconds).toBeCloseTo(4 * 3 * (0.5 + 0.2));
    expect(estimateRun([], s)).toEqual({ seconds: 0, learnt: 0 });
  });

  it("uses a kernel's learnt launch cost where earlier results give one", () => {
    const s = { minTimeS: 0.5, repetitions: 15, launches: 5 };
    const e = estimateRun([{ kernel: 'call.py_loop', items: 2 }, { kernel: 'a', items: 1 }], s, new Map([['call.py_loop', 2]]));
    expect(e.learnt).toBe(1);
    expect(e.seconds).toBeCloseTo(2 * 5 * (2 + 3 * 0.5) + 1 * 5 * (guessLaunchCost(0.5) + 3 * 0.5));
  });
});

describe('learnLaunchOverheads', () => {
  it('is wall time less samples × min time per planned launch, re-measurements counted in, the median over results', () => {
    const launches = (...walls: number[]) => walls.map((wall_s) => ({ wall_s, samples: 2 }));
    const learnt = learnLaunchOverheads([
      // (1.3 + 1.5 + 1.1 − 3 × 2 × 0.5) / 3 = 0.3
      { kernel: 'k', minTimeS: 0.5, launches: launches(1.3, 1.5, 1.1) },
      { kernel: 'k', minTimeS: 0.5, launches: launches(1.5, 1.5, 1.5) },
      { kernel: 'k', minTimeS: 0.5, launches: launches(1.1, 1.1, 1.1) },
      { kernel: 'old', minTimeS: 0.5, launches: null },
      { kernel: 'lost', minTimeS: 0.5, launches: [{ wall_s: null, samples: 2 }] },
      // A disturbed launch measured again: its wall time is a cost of the three planned ones.
      { kernel: 'busy', minTimeS: 0.2, launches: [...launches(0.8, 0.8, 0.8), { wall_s: 0.9, samples: 2, remeasured: true }] },
      { kernel: 'm', minTimeS: 0.1, launches: launches(0.1) },
    ]);
    expect(learnt.get('k')).toBeCloseTo(0.3);
    expect(learnt.has('old')).toBe(false);
    expect(learnt.has('lost')).toBe(false);
    expect(learnt.get('busy')).toBeCloseTo((0.8 * 3 + 0.9 - 3 * 2 * 0.2) / 3);
    // Never below zero.
    expect(learnt.get('m')).toBe(0);
  });
});

describe('formatEstimate', () => {
  it('rounds as an estimate should', () => {
    expect(formatEstimate(0.4)).toBe('about 5 s');
    expect(formatEstimate(23)).toBe('about 25 s');
    expect(formatEstimate(100)).toBe('about 2 min');
    expect(formatEstimate(59 * 60)).toBe('about 59 min');
    expect(formatEstimate(80 * 60 + 20)).toBe('about 1 h 20 min');
    expect(formatEstimate(2 * 3600 + 100)).toBe('about 2 h');
  });
});
