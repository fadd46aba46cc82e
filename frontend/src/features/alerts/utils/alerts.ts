// Pure functions the alerts page and the header badge draw with (tested beside them).

/** "+30.0 %" / "−12.5 %": the step's change in its unit's figure (a ratio after / before). */
export function changeText(ratio: number): string {
  const pct = (ratio - 1) * 100;
  const sign = pct >= 0 ? '+' : '−';
  return `${sign}${Math.abs(pct).toFixed(1)} %`;
}

/** "95 % CI 1.27–1.33" for a ratio's interval. */
export function ciText(low: number, high: number, level = 0.95): string {
  return `${Math.round(level * 100)} % CI ${low.toFixed(2)}–${high.toFixed(2)}`;
}

/** The header badge's text: null (nothing to show) when no alert is open; 99+ past 99. */
export function badgeText(open: number | undefined): string | null {
  if (!open || open <= 0) return null;
  return open > 99 ? '99+' : String(open);
}

/** A fact change in a few words: "governor: powersave → performance". */
export function factText(f: { fact: string; before: unknown; after: unknown }): string {
  const v = (x: unknown) => (x === null || x === undefined ? '—' : typeof x === 'string' ? x : JSON.stringify(x));
  return `${f.fact}: ${v(f.before)} → ${v(f.after)}`;
}

/** Which buttons an alert in this state offers. */
export function actionsFor(state: string): ('ack' | 'resolve')[] {
  if (state === 'open') return ['ack', 'resolve'];
  if (state === 'acknowledged') return ['resolve'];
  return [];
}
