// How long a run takes, while it runs and after: elapsed, each finished item's duration, and an ETA:
// from the launches done and their measured durations once one has ended (launchEta), before that
// from the estimates of the items still to finish (the New run page's estimate, lib/estimate.ts, with
// the launch costs learnt from this machine's earlier runs). Tested in timing.test.ts.
import type { Result, Run } from '@/lib/api-types';
import { estimateRun } from '@/features/runs/utils/estimate';
import { parseTimestamp, secondsBetween } from '@/lib/format';
import { profileSettings, type Limits, type ProfileSettings } from '@/lib/limits';

/**
 * What one item cost: the wall time of all its launches (they are interleaved with the other items'
 * launches, so its first start to its last end would count theirs too); without launches (older
 * results), its start to its end. Null when the result says neither.
 */
export function itemDuration(result: Pick<Result, 'launches' | 'started_at' | 'finished_at'>): number | null {
  const launches = result.launches ?? [];
  if (launches.length > 0 && launches.every((l) => l.wall_s !== null && Number.isFinite(l.wall_s))) {
    return launches.reduce((a, l) => a + (l.wall_s ?? 0), 0);
  }
  const s = secondsBetween(result.started_at, result.finished_at);
  return s !== null && s >= 0 ? s : null;
}

/** The settings the run measures with: its own, else its profile's (as the server serves it). */
export function runSettings(run: Pick<Run, 'profile' | 'repetitions' | 'min_time_s' | 'launches'>, limits: Limits): ProfileSettings {
  const base = profileSettings(limits, run.profile);
  return {
    repetitions: run.repetitions ?? base.repetitions,
    minTimeS: run.min_time_s ?? limits.kernel_defaults.min_time_s,
    launches: run.launches ?? base.launches,
  };
}

export interface RunTiming {
  /** Seconds since it started (to its end once finished); null before it starts. */
  elapsed: number | null;
  /** Seconds still to go while it runs (0: it should be ending); null when not running. */
  eta: number | null;
  /** It runs longer than its items' estimates said: the ETA is "any moment" rather than a figure. */
  overdue: boolean;
  /** The whole run's estimate (all items), for a queued run. */
  estimate: number;
  /** item id → seconds, for the items that finished with a result. */
  durations: Map<string, number>;
}

/**
 * Elapsed, per-item durations and the ETA. The items still to finish are estimated as the New run page
 * does; what the run has already spent on them (elapsed less the finished items' own time) comes off,
 * and the estimate is scaled by how the finished items compared with theirs (within ½× to 3×).
 */
type LaunchProgress = Pick<Run['progress'], 'launches_done' | 'launches_planned' | 'launches_wall_s' | 'launch_at'>;

/**
 * The ETA from the launches themselves (issue 27), once one has ended: the launches still to run
 * (the one running included) × the mean measured launch, less the time since the last launch started or
 * ended. It keeps counting down between the server's updates, so a page re-rendered every second shows a
 * moving figure. Null before a launch has been measured (the estimate then says) or without launch
 * counts (runs from before them).
 */
export function launchEta(p: Partial<LaunchProgress> | undefined, now: Date): { eta: number; overdue: boolean } | null {
  const done = p?.launches_done ?? 0;
  const planned = p?.launches_planned ?? 0;
  const wall = p?.launches_wall_s ?? 0;
  if (done <= 0 || planned <= 0 || !(wall > 0)) return null;
  const left = Math.max(0, planned - done);
  const last = parseTimestamp(p?.launch_at);
  const since = last ? Math.max(0, (now.getTime() - last.getTime()) / 1000) : 0;
  const remaining = left * (wall / done) - since;
  return { eta: Math.max(0, remaining), overdue: left > 0 && remaining <= 0 };
}

/**
 * A batch's ETA: its runs go on side by side (one per machine), so the batch ends with the last of them:
 * the largest launchEta over its running runs. `running`: runs with a measured ETA; `waiting`: runs
 * queued behind others on their machine (not in the figure). Null when no run is left to finish.
 */
export function batchEta(
  runs: readonly Pick<Run, 'status' | 'progress'>[],
  now: Date,
): { eta: number; overdue: boolean; running: number; waiting: number } | null {
  const open = runs.filter((r) => r.status === 'running' || r.status === 'queued');
  if (open.length === 0) return null;
  const measured = open.flatMap((r) => (r.status === 'running' ? [launchEta(r.progress, now)] : [])).filter((e) => e !== null);
  const eta = Math.max(0, ...measured.map((e) => e.eta));
  return {
    eta,
    overdue: measured.length > 0 && eta === 0 && measured.some((e) => e.overdue),
    running: measured.length,
    waiting: open.filter((r) => r.status === 'queued').length,
  };
}

export function runTiming(
  run: Pick<Run, 'status' | 'started_at' | 'finished_at' | 'items' | 'profile' | 'repetitions' | 'min_time_s' | 'launches'> & {
    progress?: Partial<LaunchProgress>;
  },
  results: readonly Result[],
  overheads: ReadonlyMap<string, number>,
  now: Date,
  limits: Limits,
): RunTiming {
  const settings = runSettings(run, limits);
  const perKernel = new Map<string, number>();
  const estimateOf = (kernel: string) => {
    let s = perKernel.get(kernel);
    if (s === undefined) {
      s = estimateRun([{ kernel, items: 1 }], settings, overheads).seconds;
      perKernel.set(kernel, s);
    }
    return s;
  };
  const byItem = new Map(results.map((r) => [r.item_id, r]));
  const durations = new Map<string, number>();
  let spent = 0; // on finished items
  let actual = 0; // of finished items with a duration, and their estimates
  let expected = 0;
  let left = 0; // the estimates of the items still to finish
  for (const item of run.items) {
    const result = byItem.get(item.id);
    const d = result ? itemDuration(result) : null;
    if (item.state === 'queued' || item.state === 'running') {
      left += estimateOf(item.kernel);
    } else if (d !== null) {
      durations.set(item.id, d);
      spent += d;
      actual += d;
      expected += estimateOf(item.kernel);
    } else {
      spent += estimateOf(item.kernel); // failed or cancelled without a result: assume it took its estimate
    }
  }
  const estimate = run.items.reduce((a, it) => a + estimateOf(it.kernel), 0);
  const start = parseTimestamp(run.started_at);
  const end = parseTimestamp(run.finished_at);
  const elapsed = start ? Math.max(0, ((end ?? now).getTime() - start.getTime()) / 1000) : null;
  if (run.status !== 'running' || elapsed === null) {
    return { elapsed, eta: null, overdue: false, estimate, durations };
  }
  const measured = launchEta(run.progress, now);
  if (measured) return { elapsed, ...measured, estimate, durations };
  const scale = expected > 0 ? Math.min(3, Math.max(0.5, actual / expected)) : 1;
  const onTheRest = Math.max(0, elapsed - spent);
  const remaining = left * scale - onTheRest;
  return { elapsed, eta: Math.max(0, remaining), overdue: left > 0 && remaining <= 0, estimate, durations };
}

/** "about 40 s left", "about 3 min left"; "any moment now" once overdue. */
export function formatEta(eta: number, overdue: boolean): string {
  if (overdue) return 'any moment now (longer than estimated)';
  if (eta < 3) return 'a few seconds left';
  if (eta < 10) return `about ${Math.round(eta)} s left`;
  if (eta < 55) return `about ${Math.max(5, Math.round(eta / 5) * 5)} s left`;
  const minutes = Math.round(eta / 60);
  if (minutes < 60) return `about ${minutes} min left`;
  const h = Math.floor(minutes / 60);
  return `about ${h} h ${minutes % 60} min left`;
}
