// The Fleet page's address and the API paths it reads, as pure functions (tested beside them).

/** The ranges the page offers, in days back from now; the server reads at most 90. */
export const RANGES = [7, 14, 30, 90] as const;
export const DEFAULT_DAYS = 14;

/** /fleet?days=&kernel=: how far back, and one kernel (or every kernel). */
export interface FleetView {
  days: number;
  kernel: string;
}

export function decodeFleetView(search: string | URLSearchParams): FleetView {
  const q = typeof search === 'string' ? new URLSearchParams(search) : search;
  const days = Number(q.get('days'));
  return { days: (RANGES as readonly number[]).includes(days) ? days : DEFAULT_DAYS, kernel: (q.get('kernel') ?? '').trim() };
}

/** The query string (without "?"); defaults left out, so /fleet is the default view. */
export function encodeFleetView(view: FleetView): string {
  const q = new URLSearchParams();
  if (view.days !== DEFAULT_DAYS) q.set('days', String(view.days));
  if (view.kernel.trim()) q.set('kernel', view.kernel.trim());
  return q.toString();
}

/** GET /fleet-changes for the view: `days` back from `now`, a page after `cursor`. */
export function fleetChangesPath(view: FleetView, now: Date, cursor: string | null = null): string {
  const q = new URLSearchParams({ since: new Date(now.getTime() - view.days * 86_400_000).toISOString(), until: now.toISOString() });
  if (view.kernel) q.set('kernel', view.kernel);
  if (cursor) q.set('cursor', cursor);
  return `/fleet-changes?${q.toString()}`;
}

export function peersPath(view: FleetView): string {
  return view.kernel ? `/peers?kernel=${encodeURIComponent(view.kernel)}` : '/peers';
}

/** "+18.0 %" / "−12.5 %" for a ratio. */
export function percentText(ratio: number): string {
  const pct = (ratio - 1) * 100;
  return `${pct >= 0 ? '+' : '−'}${Math.abs(pct).toFixed(1)} %`;
}

/** A fact's value in a few words (strings as they are, the rest as JSON, none as "—"). */
export function valueText(v: unknown): string {
  if (v === null || v === undefined || v === '') return '—';
  return typeof v === 'string' ? v : JSON.stringify(v);
}
