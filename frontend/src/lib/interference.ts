// What the host took away while a result was measured (REST `interference`, the same on results and
// compare cells): facts shown beside the figure, which stays the primitive's cost.
import type { Interference } from '@/lib/api-types';
import { formatPercent } from '@/lib/format';

export type { Interference };

// Below these the host took nothing worth a mark (a tick's worth of preemption, a stray daemon).
const MARK_DISTURBED = 0.05;
const MARK_THROTTLED = 0.01;
const MARK_BUSY = 0.2;

export interface InterferenceMark {
  /** Short words for a badge: "throttled 48 %", "disturbed 30 % of samples". */
  label: string;
  /** Every fact, and what it means for the figure. */
  title: string;
}

/** The badge of a result's interference, or null when the host took (next to) nothing. */
export function interferenceMark(i: Interference | null | undefined): InterferenceMark | null {
  if (!i) return null;
  const parts: string[] = [];
  if ((i.throttled_frac ?? 0) >= MARK_THROTTLED) parts.push(`throttled ${formatPercent(i.throttled_frac, 2)}`);
  if (i.disturbed_frac !== null && i.disturbed_frac >= MARK_DISTURBED)
    parts.push(`disturbed ${formatPercent(i.disturbed_frac, 2)} of samples`);
  else if (i.short_samples === null && (i.other_busy_frac ?? 0) >= MARK_BUSY)
    parts.push(`host ${formatPercent(i.other_busy_frac, 2)} busy`);
  if (parts.length === 0) return null;
  const facts = [
    i.short_samples !== null
      ? `${formatPercent(i.disturbed_frac, 2)} of ${i.short_samples.toLocaleString('en-US')} short samples were disturbed (switched out or short of CPU).`
      : 'Long samples: how much of them the host took is not known per sample.',
    i.throttled_frac !== null ? `The CPU quota throttled ${formatPercent(i.throttled_frac, 2)} of the time.` : null,
    i.other_busy_frac !== null ? `Other processes kept up to ${formatPercent(i.other_busy_frac, 2)} of its CPUs busy.` : null,
    i.steal_frac ? `Steal: up to ${formatPercent(i.steal_frac, 2)}.` : null,
    i.short_samples !== null
      ? 'The figure is a low percentile of samples shorter than a scheduler slice, so this is what the host took away, not part of the cost.'
      : 'With long samples the figure includes what the host took.',
  ];
  return { label: parts.join(' · '), title: facts.filter(Boolean).join(' ') };
}

/**
 * How many of a result's launches the host disturbed, and why, in words (issue 27): "2 of 3 launches
 * disturbed: other processes kept 78–89 % of its CPUs busy". Null when none was, or for results stored
 * before the server counted them.
 */
export function disturbedLaunchesText(i: Interference | null | undefined): string | null {
  const n = i?.disturbed_launches ?? 0;
  const of = i?.launches ?? 0;
  if (!i || n <= 0 || of <= 0) return null;
  const what = `${n} of ${of} ${of === 1 ? 'launch' : 'launches'} disturbed`;
  return i.disturbed_why ? `${what}: ${i.disturbed_why}` : what;
}
