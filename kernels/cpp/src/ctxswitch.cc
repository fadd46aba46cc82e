// ctxswitch.* — the cost of one context switch between two tasks that hand a token back and forth.
//
// ctxswitch.pipe: two tasks ping-pong one byte over two pipes. One round trip is: main writes, blocks
// in read; partner wakes, reads, writes, blocks in read; main wakes. That is 2 context switches and 4
// syscalls (2 write + 2 read); one op = one switch = half a round trip, so the figure includes one
// write and one read per switch.
// ctxswitch.futex: the same ping-pong on one shared futex word, the method of tsuna/contextswitch
// (timectxsw.c, timetctxsw.c) without its sched_yield calls: each side flips the word, FUTEX_WAKEs the
// other and FUTEX_WAITs until it is flipped back. Per switch 1 wake + at most 1 wait syscall (counted).
//
// Both: `mode` process (fork; the child dies with the parent via PR_SET_PDEATHSIG and is reaped on
// every path) or thread (two threads of one process, no address-space switch); `placement` same_core,
// cross_core or unpinned; `policy` other (SCHED_OTHER) or fifo (SCHED_FIFO priority 1 for both, exit 3
// without the privilege). Switches are counted in both tasks with getrusage and reported per op;
// ctxsw_per_op (voluntary + involuntary) is about 1, and a same_core run counting fewer than 0.5 fails
// its self-check. Seed 003 (pipe token between two processes, 10000 round trips timed with rdtsc,
// 2.8 GHz CPU, Linux 2.6.21, ~2010) measured 4283 ns per switch; it meant to run them SCHED_FIFO but
// passed priority 0, which sched_setscheduler rejects (EINVAL), so they ran SCHED_OTHER, unpinned.
#include <fcntl.h>
#include <linux/futex.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "host.h"
#include "pingpong.h"
#include "registry.h"

namespace ctxbench {
namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  bool futex = false;
  bool thread = false;
  bool fifo = false;
  Placement placement;
};

bool IsFifo() {
  return sched_getscheduler(0) == SCHED_FIFO;
}

bool SetPolicy(bool fifo) {
  struct sched_param sp {};
  sp.sched_priority = fifo ? 1 : 0;
  return sched_setscheduler(0, fifo ? SCHED_FIFO : SCHED_OTHER, &sp) == 0;
}

// The partner: pin, check the policy it inherited, announce readiness, echo, record its counts.
template <typename Transport>
void PartnerMain(Transport& t, Shared* shared, const Options& o, int64_t round_trips) {
  const int who = o.thread ? RUSAGE_THREAD : RUSAGE_SELF;
  int64_t syscalls = 0;
  shared->partner_setup_ok = PinSelfTo(o.placement.cpu_b) && IsFifo() == o.fifo;
  if (!t.PartnerSend(syscalls) || !shared->partner_setup_ok) return;  // the ready token
  syscalls = 0;
  SwitchCounts before = SwitchesNow(who);
  for (int64_t i = 0; i < round_trips; ++i)
    if (!t.PartnerRecv(syscalls) || !t.PartnerSend(syscalls)) return;
  SwitchCounts d = SwitchesNow(who) - before;
  shared->partner_voluntary = d.voluntary;
  shared->partner_involuntary = d.involuntary;
  shared->partner_syscalls = syscalls;
  shared->partner_ok = 1;
}

template <typename Transport>
struct ThreadArgs {
  Transport* t;
  Shared* shared;
  const Options* o;
  int64_t round_trips;
};

template <typename Transport>
void* PartnerThread(void* p) {
  auto* a = static_cast<ThreadArgs<Transport>*>(p);
  PartnerMain(*a->t, a->shared, *a->o, a->round_trips);
  return nullptr;
}

// Starts the partner: a thread, or a forked process that dies with this one and keeps its channel
// ends. False when it could not be started.
template <typename Transport>
bool StartPartner(ThreadArgs<Transport>& args, pthread_t* thread, pid_t* child) {
  Transport& t = *args.t;
  const Options& o = *args.o;
  if (o.thread) return pthread_create(thread, nullptr, PartnerThread<Transport>, &args) == 0;
  const pid_t parent = getpid();
  *child = fork();
  if (*child == 0) {
    // Die with the parent (e.g. the agent SIGTERMs it) instead of lingering as an orphan.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    t.KeepPartnerEnds();
    PartnerMain(t, args.shared, o, args.round_trips);
    _exit(args.shared->partner_ok ? 0 : 1);  // _exit: no atexit handlers, no stdio flush in the child
  }
  if (*child <= 0) return false;
  t.KeepMainEnds();
  return true;
}

// Stops and reaps the partner on every path; returns `error`, or else what went wrong with it.
template <typename Transport>
std::string StopPartner(Transport& t, const Options& o, bool started, pthread_t thread, pid_t child,
                        std::string error) {
  if (!error.empty()) t.Abort();
  if (o.thread) {
    if (started) pthread_join(thread, nullptr);
  } else if (started) {
    if (!error.empty()) kill(child, SIGKILL);
    int status = 0;
    while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
    }
    if (error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) error = "the partner process failed";
  }
  return error;
}

// The counters of a finished ping-pong (both tasks' switches per op, syscalls, the CPUs) and its
// self-check.
void ReportSwitches(benchmark::State& state, const Options& o, int64_t round_trips, SwitchCounts mine,
                    SwitchCounts partner, double syscalls_per_op,
                    const std::function<void(const std::string&)>& fail) {
  const double switches = 2.0 * static_cast<double>(round_trips);
  const double voluntary = static_cast<double>(mine.voluntary + partner.voluntary) / switches;
  const double involuntary = static_cast<double>(mine.involuntary + partner.involuntary) / switches;
  state.counters["voluntary_ctxsw_per_op"] = voluntary;
  state.counters["involuntary_ctxsw_per_op"] = involuntary;
  state.counters["ctxsw_per_op"] = voluntary + involuntary;
  state.counters["syscalls_per_op"] = syscalls_per_op;
  state.counters["cpu_main"] = o.placement.cpu_a;
  state.counters["cpu_partner"] = o.placement.cpu_b;
  if (o.placement.name == "cross_core") state.counters["cross_core_smt_siblings"] = o.placement.smt_siblings;

  // Self-check: on one CPU every half round trip must switch to the other task, so both together must
  // count about one switch per op. It is voluntary when the waker then blocks, and involuntary when the
  // woken task preempts the waker first (wakeup preemption; on Linux 6.x SCHED_OTHER about 40 % of
  // them), so the check is on the sum. Short calibration batches are skipped: the start-up handshake
  // dominates them.
  if (o.placement.name == "same_core" && round_trips >= 1000 && voluntary + involuntary < 0.5)
    fail("self-check failed: same_core counted " + std::to_string(voluntary + involuntary) +
         " context switches per switch, expected about 1");
}

template <typename Transport>
void PingPong(benchmark::State& state, const Options& o, const char* id) {
  const int64_t round_trips = state.max_iterations;
  auto fail = [&](const std::string& why) { state.SkipWithError((std::string(id) + ": " + why).c_str()); };

  void* page = mmap(nullptr, sizeof(Shared), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  if (page == MAP_FAILED) return fail("mmap failed");
  Shared* shared = new (page) Shared();
  Transport t;
  if (!t.Open(shared, o.thread)) {
    munmap(page, sizeof(Shared));
    return fail("cannot create the channel");
  }
  if (!PinSelfTo(o.placement.cpu_a) || (o.fifo && !SetPolicy(true))) {
    t.CloseAll();
    RestoreAffinity();
    munmap(page, sizeof(Shared));
    return fail("cannot pin or set the policy of the main task");
  }

  pid_t child = -1;
  pthread_t partner_thread{};
  ThreadArgs<Transport> args{&t, shared, &o, round_trips};
  const bool started = StartPartner(args, &partner_thread, &child);

  const std::function<bool()> partner_alive = [&]() -> bool {
    if (o.thread) return true;  // a thread cannot vanish without taking the process with it
    siginfo_t info{};
    return waitid(P_PID, static_cast<id_t>(child), &info, WEXITED | WNOHANG | WNOWAIT) == 0 && info.si_pid == 0;
  };

  std::string error = started ? "" : "cannot start the partner";
  int64_t syscalls = 0;
  if (error.empty() && (!t.MainRecv(syscalls, partner_alive) || !shared->partner_setup_ok))
    error = "the partner could not pin itself or did not get the same policy";

  SwitchCounts mine;
  const int who = o.thread ? RUSAGE_THREAD : RUSAGE_SELF;
  syscalls = 0;
  while (state.KeepRunningBatch(round_trips)) {  // one batch: exactly round_trips iterations
    if (!error.empty()) continue;
    SwitchCounts before = SwitchesNow(who);
    auto t0 = Clock::now();
    for (int64_t i = 0; i < round_trips; ++i) {
      if (!t.MainSend(syscalls) || !t.MainRecv(syscalls, partner_alive)) {
        error = "the partner stopped answering";
        break;
      }
    }
    auto t1 = Clock::now();
    mine = SwitchesNow(who) - before;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }

  error = StopPartner(t, o, started, partner_thread, child, error);
  t.CloseAll();
  if (o.fifo) SetPolicy(false);
  RestoreAffinity();
  if (error.empty() && !shared->partner_ok) error = "the partner did not finish its round trips";
  const int64_t partner_voluntary = shared->partner_voluntary, partner_involuntary = shared->partner_involuntary,
                partner_syscalls = shared->partner_syscalls;
  shared->~Shared();
  munmap(page, sizeof(Shared));
  if (!error.empty()) return fail(error);

  ReportSwitches(state, o, round_trips, mine, SwitchCounts{partner_voluntary, partner_involuntary},
                 Transport::kFixedSyscallsPerSwitch > 0 ? Transport::kFixedSyscallsPerSwitch
                                                        : static_cast<double>(syscalls + partner_syscalls) /
                                                              (2.0 * static_cast<double>(round_trips)),
                 fail);
}

Options ReadOptions(const Params& params, bool futex, std::string* why) {
  Options o;
  o.futex = futex;
  o.thread = GetString(params, "mode") == "thread";
  o.fifo = GetString(params, "policy") == "fifo";
  *why = ChoosePlacement(GetString(params, "placement"), &o.placement);
  return o;
}

void PipeSwitch(benchmark::State& state, const Params& params) {
  std::string why;
  Options o = ReadOptions(params, false, &why);
  if (!why.empty()) return state.SkipWithError(why.c_str());
  PingPong<PipeTransport>(state, o, "ctxswitch.pipe");
}

void FutexSwitch(benchmark::State& state, const Params& params) {
  std::string why;
  Options o = ReadOptions(params, true, &why);
  if (!why.empty()) return state.SkipWithError(why.c_str());
  PingPong<FutexTransport>(state, o, "ctxswitch.futex");
}

std::string SwitchUnsupported(const Params& params) {
  std::string why;
  Options o = ReadOptions(params, false, &why);
  if (!why.empty()) return why;
  for (int cpu : {o.placement.cpu_a, o.placement.cpu_b}) {
    if (cpu >= 0 && !PinSelfTo(cpu)) {
      std::string msg = "cannot pin to CPU " + std::to_string(cpu) + ": " + std::strerror(errno);
      RestoreAffinity();
      return msg;
    }
  }
  RestoreAffinity();
  if (o.fifo) {
    if (!SetPolicy(true)) {
      int err = errno;
      return std::string("policy fifo needs CAP_SYS_NICE or RLIMIT_RTPRIO >= 1 (sched_setscheduler: ") +
             std::strerror(err) + ")";
    }
    SetPolicy(false);
  }
  return "";
}

std::vector<ParamSpec> SwitchParams() {
  return {
      ChoiceParam("placement", "same_core", {"same_core", "cross_core", "unpinned"},
                  "same_core: both tasks pinned to one CPU; cross_core: pinned to two different CPUs "
                  "(different physical cores when possible); unpinned: the scheduler decides"),
      ChoiceParam("mode", "process", {"process", "thread"},
                  "process: a forked partner (switches change address space); thread: a partner thread"),
      ChoiceParam("policy", "other", {"other", "fifo"},
                  "other: SCHED_OTHER; fifo: SCHED_FIFO priority 1 for both tasks (needs CAP_SYS_NICE)"),
  };
}

KernelRegistrar pipe_switch({
    .spec =
        {
            .id = "ctxswitch.pipe",
            .title = "Context switch: pipe ping-pong",
            .description =
                "Two tasks (processes or threads) pass a one-byte token back and forth over two pipes; each "
                "blocks in read until the other writes. One op is one context switch, i.e. half a round trip: "
                "per op 1 switch, 1 write and 1 read. Both tasks count their switches with getrusage; "
                "ctxsw_per_op (voluntary + involuntary) is about 1 and a same_core run that counts fewer than "
                "0.5 fails its self-check.",
            .params = SwitchParams(),
            .seed_reference =
                Seed("003", 4283, "2.8 GHz CPU, Linux 2.6.21, 2010s",
                     {{"placement", "unpinned"}, {"mode", "process"}, {"policy", "other"}},
                     "pipe token between two processes, 10000 round trips timed with rdtsc (20000 "
                     "switches in 85.7 ms); meant as SCHED_FIFO, but priority 0 makes "
                     "sched_setscheduler fail, so SCHED_OTHER"),
        },
    .body = PipeSwitch,
    .manual_time = true,
    .ops_per_iteration = [](const Params&) { return 2.0; },
    .unsupported = SwitchUnsupported,
});

KernelRegistrar futex_switch({
    .spec =
        {
            .id = "ctxswitch.futex",
            .title = "Context switch: futex ping-pong",
            .description =
                "Two tasks (processes sharing a page, or threads) hand a turn back and forth on one futex word: "
                "flip it, FUTEX_WAKE the other, FUTEX_WAIT until it is flipped back (tsuna/contextswitch's "
                "method without its sched_yield calls). One op is one context switch, half a round trip: 1 "
                "switch, 1 wake and at most 1 wait syscall (syscalls_per_op counts them). Switch counters and "
                "self-check as ctxswitch.pipe.",
            .params = SwitchParams(),
        },
    .body = FutexSwitch,
    .manual_time = true,
    .ops_per_iteration = [](const Params&) { return 2.0; },
    .unsupported = SwitchUnsupported,
});

}  // namespace
}  // namespace ctxbench
