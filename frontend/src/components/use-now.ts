import { useEffect, useState, useSyncExternalStore } from 'react';

/** The current time, refreshed every `intervalMs`, so relative times ("12 s ago") keep moving. */
export function useNow(intervalMs = 5000): Date {
  const [now, setNow] = useState(() => new Date());
  useEffect(() => {
    const t = setInterval(() => setNow(new Date()), intervalMs);
    return () => clearInterval(t);
  }, [intervalMs]);
  return now;
}

// One clock for every relative time on the page (one timer, however many rows): it ticks each second
// while something listens.
const TICK_MS = 1000;
const listeners = new Set<() => void>();
let current = Date.now();
let timer: ReturnType<typeof setInterval> | undefined;

function subscribe(listener: () => void): () => void {
  listeners.add(listener);
  if (timer === undefined) {
    current = Date.now();
    timer = setInterval(() => {
      current = Date.now();
      listeners.forEach((l) => l());
    }, TICK_MS);
  }
  return () => {
    listeners.delete(listener);
    if (listeners.size === 0 && timer !== undefined) {
      clearInterval(timer);
      timer = undefined;
    }
  };
}

/** How often a relative time of this age changes its words: each second under a minute, else each ten. */
export function relativeTickMs(ageSeconds: number): number {
  return ageSeconds < 60 ? 1000 : 10_000;
}

/** The clock's time rounded down to how often a relative time since `since` (ms) changes its words. */
export function clockFor(at: number, since: number | null): number {
  const every = since === null ? 60_000 : relativeTickMs((at - since) / 1000);
  return Math.floor(at / every) * every;
}

/**
 * The time now for a relative time since `since` (ms; null: none), shared by every caller and re-read on
 * the clock's tick; rounded down so a component re-renders only when its words can change ("3 min ago"
 * need not re-render every second).
 */
export function useClockFor(since: number | null): number {
  const read = () => clockFor(current, since);
  return useSyncExternalStore(subscribe, read, read);
}
