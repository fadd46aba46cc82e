// The server's run profiles and request budgets, as GET /limits serves them from the tables it enforces,
// and the kernels' own defaults from the kernel contract (server/.../limits/router.py): the explorer keeps
// no copy. Pages that need them wait for them like
// any other data (they never change while the server runs, so they are read once).
import { queryOptions, useQuery } from '@tanstack/react-query';
import { apiGet } from './api-client';
import type { components } from './api/schema';
import type { Profile } from './api-types';

export type ProfileLimits = components['schemas']['ProfileOut'];
export type Limits = Omit<components['schemas']['LimitsOut'], 'profiles' | 'default_profile'> & {
  profiles: Record<Profile, ProfileLimits>;
  default_profile: Profile;
};

export const limitsQuery = () =>
  queryOptions({
    queryKey: ['limits'],
    queryFn: ({ signal }) => apiGet<Limits>('/limits', signal),
    staleTime: Infinity,
  });

export function useLimits() {
  return useQuery(limitsQuery());
}

/** The profiles in the order a form offers them: the served ones, quickest first. */
export function profileNames(limits: Limits): Profile[] {
  const order = (p: ProfileLimits) => p.repetitions * (p.min_time_s ?? 0) * p.launches;
  return (Object.keys(limits.profiles) as Profile[]).sort((a, b) => order(limits.profiles[a]) - order(limits.profiles[b]));
}

/** What each profile sets, as the New run form shows it. */
export interface ProfileSettings {
  /** Seconds each repetition runs for. */
  minTimeS: number;
  /** Repetitions in all, shared over the launches. */
  repetitions: number;
  /** Kernel processes per item. */
  launches: number;
}

/**
 * A served profile's settings (the server's default profile's for an unknown name); its min time, when it
 * sets none, the kernels' own (`kernel_defaults`, from the kernel contract).
 */
export function profileSettings(limits: Limits, profile: string): ProfileSettings {
  const p = limits.profiles[profile as Profile] ?? limits.profiles[limits.default_profile];
  return { minTimeS: p.min_time_s ?? limits.kernel_defaults.min_time_s, repetitions: p.repetitions, launches: p.launches };
}

/** A profile in words for the form: its settings and what it does to default sweeps. */
export function profileHelp(limits: Limits, profile: Profile): string {
  const p = limits.profiles[profile];
  const s = profileSettings(limits, profile);
  const sweeps = p.thin_sweeps ? 'every other point of default sweeps (first and last kept)' : 'the full default sweeps';
  return `min time ${s.minTimeS} s, ${s.repetitions} repetitions over ${s.launches} launches, ${sweeps}`;
}
