// What each kernel counter means, in words (kernels/README.md is the source), and the short summary the
// results table shows in place of the full list. Pure functions, tested in counters.test.ts.
import { formatInteger, formatNumber } from '@/lib/format';

interface CounterInfo {
  /** Short label for the table. */
  label: string;
  /** One or two sentences for the tooltip and the opened list. */
  help: string;
}

const INFO: Record<string, CounterInfo> = {
  voluntary_ctxsw_per_op: {
    label: 'voluntary switches/op',
    help: 'Voluntary context switches per op (getrusage): the task gave up the CPU itself, e.g. to wait on a pipe, futex or sleep.',
  },
  involuntary_ctxsw_per_op: {
    label: 'involuntary switches/op',
    help: 'Involuntary context switches per op (getrusage): the scheduler took the CPU away (time slice over, or a yield). Near 0 on a quiet host for kernels that never block.',
  },
  ctxsw_per_op: {
    label: 'switches/op',
    help: 'Context switches per op, voluntary + involuntary, every participating task counted. It checks the op: a ping-pong kernel should make about 1.',
  },
  syscalls_per_op: { label: 'syscalls/op', help: 'System calls per op, known from the code or counted by the kernel.' },
  switches_per_op: {
    label: 'coroutine switches/op',
    help: 'User-space switches (resumes + yields) per op, counted by the kernel itself: exactly 1 when the op is what it claims.',
  },
  cpu_ns_per_op: {
    label: 'CPU ns/op',
    help: "The measuring thread's user + system CPU time per op (median over the repetitions). Stays put when a busy host slows the wall time.",
  },
  cpu_wall_ratio: {
    label: 'CPU/wall',
    help: 'CPU time over wall time of all timed repetitions: about 1.0 on a quiet host; well below 1 means something else used this CPU (a busy host, not a slow one).',
  },
  cpu_share: {
    label: 'CPU share',
    help: "One thread pinned to one CPU that never blocks (sched.yield): its CPU time over the wall time. About 1.0 on a quiet CPU; well below 1 means another task ran there, and its samples count as disturbed.",
  },
  overlap: {
    label: 'overlap',
    help: "The workers' summed run time over the wall time: about N when N threads really ran side by side, about 1 when they took turns.",
  },
  cpu: { label: 'pinned CPU', help: 'The CPU the workers were pinned to; -1 = not pinned (the scheduler placed them).' },
  cpu_main: { label: 'CPU (main)', help: 'The CPU the measuring task was pinned to; -1 = not pinned.' },
  cpu_partner: { label: 'CPU (partner)', help: 'The CPU its partner task was pinned to; the same as the main CPU for same_core, another for cross_core.' },
  cross_core_smt_siblings: {
    label: 'SMT siblings',
    help: 'Cross-core placement only: 1 when the two CPUs are SMT siblings of one physical core (a cheaper hand-off), 0 when they are separate cores.',
  },
  vdso_present: { label: 'vDSO', help: '1 when a vDSO is mapped, so clock reads can be answered in user space without a syscall.' },
  timer_slack_ns: { label: 'timer slack ns', help: "The thread's timer slack (prctl PR_GET_TIMERSLACK): how late the kernel may fire a timer to batch wake-ups; a sleep lasts at least this much longer." },
  ns_per_op: { label: 'ns/call', help: 'Nanoseconds per call: the same measurement as the MB/s figure, per read() or write().' },
  bytes_per_op: { label: 'bytes/op', help: 'Bytes moved per op (the block size).' },
  passes: { label: 'passes', help: 'Passes over the scratch file during the measurement.' },
  mb_per_s: { label: 'MB/s', help: 'Throughput in 10^6 bytes per second, size divided by time per message.' },
  window: { label: 'window', help: 'Datagrams in flight at most (from the receive buffer size), so none is dropped.' },
  acquisitions_per_s: { label: 'acquisitions/s', help: 'Lock acquisitions per second over all contenders: the inverse of the figure.' },
  gomaxprocs: { label: 'GOMAXPROCS', help: 'The Go runtime’s GOMAXPROCS: how many OS threads run goroutines at once.' },
  goroutines_created_per_op: { label: 'goroutines/op', help: 'Goroutines created per op (Go runtime metrics).' },
  mutex_wait_ns_per_op: { label: 'mutex wait ns/op', help: 'Time goroutines spent blocked on sync.Mutex/RWMutex per op (Go runtime metrics).' },
  gc_cycles_per_op: { label: 'GC cycles/op', help: 'Garbage-collection cycles per op (Go runtime metrics): above 0 means the GC ran while timing.' },
  stack_bytes_per_goroutine: { label: 'stack bytes/goroutine', help: 'Goroutine stack memory per goroutine.' },
  heap_bytes_per_goroutine: { label: 'heap bytes/goroutine', help: 'Heap memory per goroutine.' },
  rss_bytes_per_goroutine: { label: 'RSS bytes/goroutine', help: 'Resident memory (RSS) per goroutine, as the OS sees it.' },
  stack_starting_size_bytes: { label: 'starting stack bytes', help: 'The size a new goroutine’s stack starts at.' },
};

/** "resumes_per_op" → "resumes/op": a counter the table has no words for keeps its own name, shorter. */
function fallbackLabel(name: string): string {
  return name.replace(/_per_op$/, '/op').replace(/_per_s$/, '/s').replace(/_/g, ' ');
}

/** A counter's label and explanation; counters nobody described still say what the suffix means. */
export function describeCounter(name: string): CounterInfo & { name: string } {
  const known = INFO[name];
  if (known) return { name, ...known };
  const label = fallbackLabel(name);
  const what = name.replace(/_per_op$/, '').replace(/_/g, ' ');
  const help = name.endsWith('_per_op') ? `${what} per op, counted by the kernel while it measured.` : `Reported by the kernel as "${name}".`;
  return { name, label, help };
}

export interface CounterLine {
  name: string;
  label: string;
  help: string;
  value: string;
}

/**
 * A count per op as people say a rare one: under one in a thousand ops, "1 per 139,000 ops" (the
 * interval to three significant digits) rather than an exponent (7.19 × 10⁻⁶); else formatNumber's.
 * The counter's unit stays per op, so a column still compares at a glance: larger interval, rarer.
 */
export function formatPerOp(value: number): string {
  if (value > 0 && value < 1e-3) return `1 per ${formatInteger(Number((1 / value).toPrecision(3)))} ops`;
  return formatNumber(value);
}

/** The counters of one result as lines, in a stable order: the ones that check the op first. */
export function counterLines(counters: Record<string, number> | null | undefined): CounterLine[] {
  const order = Object.keys(INFO);
  const rank = (n: string) => {
    const i = order.indexOf(n);
    return i < 0 ? order.length : i;
  };
  return Object.entries(counters ?? {})
    .sort(([a], [b]) => rank(a) - rank(b) || a.localeCompare(b))
    .map(([name, value]) => ({ ...describeCounter(name), value: name.endsWith('_per_op') ? formatPerOp(value) : formatNumber(value) }));
}

/**
 * The table's one-line summary: context switches per op (the counter every kernel reports), and the
 * CPU/wall ratio where there is one; "" when neither is there.
 */
export function counterSummary(counters: Record<string, number> | null | undefined): string {
  const c = counters ?? {};
  const parts: string[] = [];
  const ctxsw = c.ctxsw_per_op ?? (c.voluntary_ctxsw_per_op !== undefined || c.involuntary_ctxsw_per_op !== undefined ? (c.voluntary_ctxsw_per_op ?? 0) + (c.involuntary_ctxsw_per_op ?? 0) : undefined);
  if (ctxsw !== undefined) parts.push(ctxsw > 0 && ctxsw < 1e-3 ? `1 switch per ${formatPerOp(ctxsw).slice('1 per '.length)}` : `${formatNumber(ctxsw)} switches/op`);
  if (c.cpu_wall_ratio !== undefined) parts.push(`CPU/wall ${formatNumber(c.cpu_wall_ratio)}`);
  return parts.join(' · ');
}
