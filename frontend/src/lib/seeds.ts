// The seeds: five published write-ups (2014–2019, in Chinese) of exactly the measurements ctxbench
// makes, whose figures the kernels quote as `seed_reference` ("Seed 000: 49.5 ns/op on a Pentium
// G2030…"). The texts are kept beside the project (shared/seeds/); their titles here are translated,
// and only the translation is shown (a browser without CJK fonts would draw the originals as boxes).

export interface Seed {
  id: string;
  /** The write-up's title, translated into English. */
  title: string;
  /** What it measured, and where. */
  what: string;
}

export const SEEDS: readonly Seed[] = [
  {
    id: '000',
    title: 'Efficiency tests',
    what: 'Function calls, system calls, setjmp/longjmp, swapcontext, thread and process creation and Python loops, on a Pentium G2030 3.0 GHz, Linux 3.16, October 2014.',
  },
  {
    id: '001',
    title: 'Context switch tests: the process part',
    what: 'fork and process context-switch costs timed with time(1), on the same Pentium G2030, October 2014 (Shell’s Home blog).',
  },
  {
    id: '002',
    title: 'libcopp (v2) vs goroutine performance test',
    what: 'Creating and switching C++ coroutines (libcopp) against Go goroutines, on the author’s home Windows machine.',
  },
  {
    id: '003',
    title: 'The switching costs of processes, threads and coroutines',
    what: 'A token passed back and forth over pipes between two processes, two threads and two coroutines, per switch.',
  },
  {
    id: '004',
    title: 'A summary of the performance of common backend system calls',
    what: 'Storage reads and writes, locks between processes, IPC and everyday system calls per second, on an Intel Xeon 2.13 GHz with 64 GB.',
  },
];

export const SEED_EXPLAINER =
  'A seed is one of five published write-ups (2014–2019, in Chinese; titles translated here) that measured these primitives by hand on their authors’ machines; ' +
  'ctxbench measures the same things on yours. A kernel’s seed figure is what that write-up found, on its hardware: a point of reference, not a target.';

/** The seed in words, for a tooltip: "Seed 000: a published write-up, “Efficiency tests”. Function calls…". */
export function seedTooltip(id: string): string {
  const seed = SEEDS.find((s) => s.id === id);
  return seed ? `Seed ${id}: a published write-up, “${seed.title}”. ${seed.what}` : `Seed ${id}: one of the published write-ups the kernels quote.`;
}
