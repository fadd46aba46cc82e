import { describe, expect, it } from 'vitest';
import { interferenceMark, type Interference } from './interference';

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
