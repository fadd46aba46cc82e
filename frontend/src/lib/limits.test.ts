import { describe, expect, it } from 'vitest';
import { profileHelp, profileNames, profileSettings } from './limits';
import { LIMITS } from './test-fixtures';

describe('served profiles', () => {
  it('offers the profiles the server serves, quickest first', () => {
    expect(profileNames(LIMITS)).toEqual(['quick', 'default', 'thorough']);
    const reordered = { ...LIMITS, profiles: { ...LIMITS.profiles, quick: { ...LIMITS.profiles.quick, repetitions: 1000 } } };
    expect(profileNames(reordered)).toEqual(['default', 'thorough', 'quick']);
  });

  it("reads a profile's settings from the answer, the kernels' min time when it sets none", () => {
    expect(profileSettings(LIMITS, 'thorough')).toEqual({ minTimeS: 0.25, repetitions: 12, launches: 6 });
    const own = { ...LIMITS, profiles: { ...LIMITS.profiles, default: { ...LIMITS.profiles.default, min_time_s: null, launches: 7 } } };
    expect(profileSettings(own, 'default')).toEqual({ minTimeS: 0.2, repetitions: 6, launches: 7 });
    // the kernels' min time is the served one (the kernel contract's), not a copy
    const slower = { ...own, kernel_defaults: { ...own.kernel_defaults, min_time_s: 0.3 } };
    expect(profileSettings(slower, 'default').minTimeS).toBe(0.3);
    // a run of a profile this server no longer has: its default profile's
    expect(profileSettings(own, 'gone')).toEqual(profileSettings(own, 'default'));
  });

  it('says what a profile does, thinning included, from the served table', () => {
    expect(profileHelp(LIMITS, 'quick')).toBe('min time 0.05 s, 6 repetitions over 3 launches, every other point of default sweeps (first and last kept)');
    const notThin = { ...LIMITS, profiles: { ...LIMITS.profiles, quick: { ...LIMITS.profiles.quick, thin_sweeps: false } } };
    expect(profileHelp(notThin, 'quick')).toMatch(/the full default sweeps$/);
  });
});
