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

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

/** Whether `text` has `word` as a whole word (a plural "s"/"es" allowed: "lock" finds "locks"). */
function hasWord(text: string, word: string): boolean {
  return new RegExp(`(?:^|[^a-z0-9])${escapeRegExp(word)}(?:e?s)?(?![a-z0-9])`).test(text);
}

/**
 * How well one search word names a kernel, 0 when it does not: the id first (the id itself, its
 * start, one of its words, the start of one), then the title and family, then the description and
 * parameters; a match inside another word only after all of those. So "lock" puts lock.* first,
 * then kernels that say "lock" or "locks", and channel.pingpong (whose description says "blocks")
 * and syscall.clock_gettime last.
 */
function wordScore(k: Kernel, word: string): number {
  const id = k.id.toLowerCase();
  const idWords = id.split(/[^a-z0-9]+/).filter(Boolean);
  const title = k.title.toLowerCase();
  const description = k.description.toLowerCase();
  const family = k.family.toLowerCase();
  const other = [k.unit, ...k.params.map((p) => p.name)].join(' ').toLowerCase();
  if (id === word) return 100;
  if (id.startsWith(word)) return 90;
  if (idWords.includes(word)) return 80;
  if (idWords.some((w) => w.startsWith(word))) return 70;
  if (family === word || hasWord(title, word)) return 50;
  if (hasWord(description, word)) return 30;
  if (hasWord(other, word)) return 20;
  // Only inside another word ("lock" in clock_gettime, "blocks"): kept, but after every whole word.
  if (id.includes(word)) return 15;
  if (title.includes(word) || family.includes(word)) return 12;
  if (description.includes(word) || other.includes(word)) return 10;
  return 0;
}

/** A kernel's relevance to a search: the sum over its words, 0 when some word matches nothing. */
export function searchScore(k: Kernel, q: string): number {
  const words = q.toLowerCase().split(/\s+/).filter(Boolean);
  let total = 0;
  for (const w of words) {
    const s = wordScore(k, w);
    if (s === 0) return 0;
    total += s;
  }
  return total;
}

/**
 * Kernels whose id, title, description, family, unit or parameter names hold every word of the
 * search, best match first (see wordScore; ties by id); without a search, all of them in their order.
 */
export function searchKernels(kernels: Kernel[], query: KernelsQuery): Kernel[] {
  const inFamily = kernels.filter((k) => !query.family || k.family === query.family);
  if (!query.q.trim()) return inFamily;
  return inFamily
    .map((k) => ({ k, score: searchScore(k, query.q) }))
    .filter((x) => x.score > 0)
    .sort((a, b) => b.score - a.score || a.k.id.localeCompare(b.k.id))
    .map((x) => x.k);
}

/**
 * Kernels grouped by family for a page that lists them so: with a search, the family of the best
 * match first and each family's kernels best first (the order of `found`); without, families and
 * kernels by name.
 */
export function familyGroups(found: Kernel[], searching: boolean): [string, Kernel[]][] {
  const groups = new Map<string, Kernel[]>();
  const ordered = searching ? found : [...found].sort((a, b) => a.family.localeCompare(b.family) || a.id.localeCompare(b.id));
  for (const k of ordered) {
    const g = groups.get(k.family);
    if (g) g.push(k);
    else groups.set(k.family, [k]);
  }
  return [...groups];
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
