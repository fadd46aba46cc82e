// The kernels page: search over the catalog and its URL state (?q=&family=).
import type { Kernel } from '@/lib/api-types';
import type { ParamRule } from '@/lib/params';

export interface KernelsQuery {
  q: string;
  family: string | null;
}

export function decodeKernelsQuery(search: string | URLSearchParams): KernelsQuery {
  const p = typeof search === 'string' ? new URLSearchParams(search) : search;
  return { q: p.get('q')?.trim() ?? '', family: p.get('family')?.trim() || null };
}

export function encodeKernelsQuery(q: Partial<KernelsQuery>): string {
  const p = new URLSearchParams();
  if (q.q) p.set('q', q.q);
  if (q.family) p.set('family', q.family);
  return p.toString();
}

/** The kernel an id names: its own, or one of its old ids (a renamed kernel's `aliases`). */
export function findKernel(kernels: Kernel[], id: string): Kernel | undefined {
  return kernels.find((k) => k.id === id) ?? kernels.find((k) => k.aliases?.includes(id));
}

/** Each id as the catalog names it now (an old id becomes its kernel's new one); others unchanged. */
export function currentKernelIds(kernels: Kernel[], ids: string[]): string[] {
  const renamed = new Map(kernels.flatMap((k) => (k.aliases ?? []).map((a) => [a, k.id] as const)));
  return [...new Set(ids.map((id) => renamed.get(id) ?? id))];
}

/** Kernels whose id, title, description or parameter names contain every word of the search. */
export function searchKernels(kernels: Kernel[], query: KernelsQuery): Kernel[] {
  const words = query.q.toLowerCase().split(/\s+/).filter(Boolean);
  return kernels.filter((k) => {
    if (query.family && k.family !== query.family) return false;
    const hay = [k.id, k.title, k.description, k.family, k.unit, ...k.params.map((p) => p.name)].join(' ').toLowerCase();
    return words.every((w) => hay.includes(w));
  });
}

/** A parameter's range or choices in words: "1…4096", "same_core | cross_core". */
export function paramRange(p: ParamRule): string {
  if (p.choices && p.choices.length) return p.choices.join(' | ');
  if (p.min !== null && p.min !== undefined && p.max !== null && p.max !== undefined) return `${p.min}…${p.max}`;
  if (p.min !== null && p.min !== undefined) return `≥ ${p.min}`;
  if (p.max !== null && p.max !== undefined) return `≤ ${p.max}`;
  return '';
}

// "e.g. Linux", "vs. Go": a full stop after these does not end the sentence.
const ABBREVIATION = /\b(?:e\.g|i\.e|vs|etc|cf|approx|resp)\.$/i;

/**
 * A description's first sentence, for a list where the full paragraph would be too much: up to the
 * first ".", "!" or "?" followed by a space and a capital, a digit, a backquote or a bracket (so
 * "0.5 s", "e.g. this" and "syscall.getppid" do not end it). The whole text when it is one sentence.
 */
export function firstSentence(text: string): string {
  const t = text.trim();
  const end = /[.!?](?=\s+[A-Z0-9`(])/g;
  for (let m = end.exec(t); m !== null; m = end.exec(t)) {
    const upTo = t.slice(0, m.index + 1);
    if (!ABBREVIATION.test(upTo)) return upTo;
  }
  return t;
}
