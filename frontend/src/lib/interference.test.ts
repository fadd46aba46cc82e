import { describe, expect, it } from 'vitest';
import { disturbedLaunchesText, interferenceMark, type Interference } from './interference';

const quiet: Interference = {
  short_samples: 1200,
  disturbed_frac: 0.01,
  throttled_frac: 0,
  steal_frac: 0,
  other_busy_frac: 0.05,
};

describe('interferenceMark', () => {
  it('says nothing when the host took next to nothing, or nothing is known', () => {
    expect(interferenceMark(quiet)).toBeNull();
    expect(interferenceMark(null)).toBeNull();
    expect(interferenceMark(undefined)).toBeNull();
  });

  it('names throttling and disturbed samples, and says the figure stays the primitive', () => {
    const m = interferenceMark({ ...quiet, disturbed_frac: 0.3, throttled_frac: 0.48 });
    expect(m?.label).toBe('throttled 48 % · disturbed 30 % of samples');
    expect(m?.title).toContain('of 1,200 short samples were disturbed');
    expect(m?.title).toContain('not part of the cost');
  });

  it('falls back to the busy host for long samples, and says the figure includes it', () => {
    const m = interferenceMark({ ...quiet, short_samples: null, disturbed_frac: null, other_busy_frac: 0.8 });
    expect(m?.label).toBe('host 80 % busy');
    expect(m?.title).toContain('includes what the host took');
  });
});

describe('disturbedLaunchesText (issue 27)', () => {
  const base: Interference = { short_samples: 400, disturbed_frac: 0.01, throttled_frac: null, steal_frac: 0, other_busy_frac: 0.89 };

  it('says how many launches the host disturbed and why, not just "noisy"', () => {
    const i = { ...base, launches: 3, disturbed_launches: 2, disturbed_why: 'other processes kept 78–89 % of its CPUs busy' };
    expect(disturbedLaunchesText(i)).toBe('2 of 3 launches disturbed: other processes kept 78–89 % of its CPUs busy');
    expect(disturbedLaunchesText({ ...i, launches: 1, disturbed_launches: 1, disturbed_why: null })).toBe('1 of 1 launch disturbed');
  });

  it('says nothing when no launch was disturbed or the result predates the count', () => {
    expect(disturbedLaunchesText({ ...base, launches: 3, disturbed_launches: 0, disturbed_why: null })).toBeNull();
    expect(disturbedLaunchesText(base)).toBeNull();
    expect(disturbedLaunchesText(null)).toBeNull();
  });
});
