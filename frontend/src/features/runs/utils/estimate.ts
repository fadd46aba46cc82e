// How long a run will take, before it starts: each item runs in `launches` kernel processes, each
// taking its share of the repetitions, each repetition at least `min_time_s`, plus what a launch costs
// beyond its repetitions (process start, the harness's calibration). Earlier results of the same kernel
// on the same machine record each launch's wall time, which gives that cost better than a guess.
import type { ProfileSettings } from '@/lib/limits';

/**
 * A launch's cost beyond its repetitions when no earlier result says: a process start, then the
 * harness's calibration and per-repetition overhead, about two min times (measured on the dev VM:
 * getppid's launches cost 0.45 s beyond 2 × 0.2 s, lock.go_mutex's 0.7–1.3 s, Go's testing.Benchmark
 * calibrating each repetition anew).
 */
export const LAUNCH_START_S = 0.3;
export const CALIBRATION_MIN_TIMES = 2;

export function guessLaunchCost(minTimeS: number): number {
  return LAUNCH_START_S + CALIBRATION_MIN_TIMES * minTimeS;
}

/** The agent gives each launch at least this many repetitions (or all of them when fewer were asked). */
export const MIN_REPS_PER_LAUNCH = 2;

/** The settings a run will get: the profile's (`base`, from lib/limits.ts), with the form's valid overrides. */
export function effectiveSettings(base: ProfileSettings, repetitions: string, minTime: string, launches?: number): ProfileSettings {
  const reps = Number(repetitions);
  const min = Number(minTime);
  return {
    repetitions: repetitions.trim() !== '' && Number.isInteger(reps) && reps >= 1 ? reps : base.repetitions,
    minTimeS: minTime.trim() !== '' && Number.isFinite(min) && min > 0 ? min : base.minTimeS,
    launches: launches !== undefined && launches >= 1 ? launches : base.launches,
  };
}

/** Repetitions each launch takes (the agent's plan): the total shared out, rounded up, at least 2. */
export function repsPerLaunch(repetitions: number, launches: number): number {
  return Math.max(Math.ceil(repetitions / launches), Math.min(repetitions, MIN_REPS_PER_LAUNCH));
}

/** One earlier result as the estimate reads it: the kernel, its run's min time, its launches. */
export interface PastResult {
  kernel: string;
  minTimeS: number | null;
  launches?: { wall_s: number | null; samples: number; remeasured?: boolean }[] | null;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};

/**
 * Each kernel's cost of a planned launch beyond its repetitions, learnt from earlier results: per
 * result, all its launches' wall time (re-measurements of disturbed launches included, as a busy host
 * will need them again) less the planned launches' samples × min time, over the planned launches (never
 * below 0); the median over the kernel's results. Kernels with no such result are left out (the guess
 * applies).
 */
export function learnLaunchOverheads(results: readonly PastResult[]): Map<string, number> {
  const byKernel = new Map<string, number[]>();
  for (const r of results) {
    if (r.minTimeS === null || !r.launches) continue;
    const planned = r.launches.filter((l) => !l.remeasured);
    if (planned.length === 0 || r.launches.some((l) => l.wall_s === null || !Number.isFinite(l.wall_s))) continue;
    const wall = r.launches.reduce((a, l) => a + (l.wall_s ?? 0), 0);
    const measuring = planned.reduce((a, l) => a + l.samples, 0) * r.minTimeS;
    byKernel.set(r.kernel, [...(byKernel.get(r.kernel) ?? []), Math.max(0, (wall - measuring) / planned.length)]);
  }
  return new Map([...byKernel].map(([kernel, xs]) => [kernel, median(xs)]));
}

export interface RunEstimate {
  /** Seconds one machine's run takes (a batch's runs go on side by side). */
  seconds: number;
  /** Kernels whose launch cost came from earlier results on this machine. */
  learnt: number;
}

/**
 * Seconds a run takes: for every item, launches × (launch cost + repetitions per launch × min time).
 * The launch cost is the kernel's learnt one when known, else guessLaunchCost.
 */
export function estimateRun(
  kernels: readonly { kernel: string; items: number }[],
  settings: ProfileSettings,
  overheads: ReadonlyMap<string, number> = new Map(),
): RunEstimate {
  const perLaunchReps = repsPerLaunch(settings.repetitions, settings.launches);
  let seconds = 0;
  let learnt = 0;
  for (const { kernel, items } of kernels) {
    const known = overheads.get(kernel);
    if (known !== undefined) learnt += 1;
    const launchCost = known ?? guessLaunchCost(settings.minTimeS);
    seconds += items * settings.launches * (launchCost + perLaunchReps * settings.minTimeS);
  }
  return { seconds, learnt };
}

/** An estimate in words, rounded as an estimate should be: "about 10 s", "about 2 min", "about 1 h 20 min". */
export function formatEstimate(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds < 0) return 'unknown';
  if (seconds < 55) return `about ${Math.max(5, Math.round(seconds / 5) * 5)} s`;
  const minutes = Math.round(seconds / 60);
  if (minutes < 60) return `about ${minutes} min`;
  const rounded = Math.round(seconds / 600) * 10; // to 10 minutes
  const h = Math.floor(rounded / 60);
  const min = rounded % 60;
  return min > 0 ? `about ${h} h ${min} min` : `about ${h} h`;
}
