// ctxswitch.* — the cost of one context switch between two tasks that hand a token back and forth.
//
// ctxswitch.pipe: two processes (fork) ping-pong one byte over two pipes. One round trip is: parent
// writes, blocks in read; child wakes, reads, writes, blocks in read; parent wakes. That is 2 context
// switches and 4 syscalls (2 write + 2 read); one op = one switch = half a round trip, so the figure
// includes two syscalls' worth of pipe work per switch. Switches are counted in both processes with
// getrusage (the child sends its counts back over the pipe), and a same-core run whose voluntary
// switches do not add up fails its self-check. Seed 003 (lmbench-style pipe token passing between two
// SCHED_FIFO processes, 10000 round trips timed with rdtsc, 2.8 GHz CPU, Linux 2.6.21, ~2010) measured
// 4283 ns per switch; the seed did not pin the processes.
#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstring>
#include <string>

#include "host.h"
#include "registry.h"

namespace ctxbench {
namespace {

using Clock = std::chrono::steady_clock;

// What the partner sends back after its share of the ping-pong.
struct PartnerReport {
  int64_t voluntary = 0;
  int64_t involuntary = 0;
  int32_t ok = 0;  // 1: it pinned itself and completed every round trip
};

// Two pipes: to the partner and back.
struct PipePair {
  int to_partner[2] = {-1, -1};
  int to_main[2] = {-1, -1};
  bool Open() { return pipe2(to_partner, O_CLOEXEC) == 0 && pipe2(to_main, O_CLOEXEC) == 0; }
  void Close() {
    for (int* fd : {&to_partner[0], &to_partner[1], &to_main[0], &to_main[1]})
      if (*fd >= 0) close(*fd), *fd = -1;
  }
};

// The partner's side: announce readiness, echo `round_trips` tokens, report its switch counts.
PartnerReport PartnerLoop(int in_fd, int out_fd, int64_t round_trips, int cpu, int rusage_who) {
  PartnerReport report;
  bool pinned = PinSelfTo(cpu);
  char token = pinned ? 'r' : 'x';
  if (!WriteFull(out_fd, &token, 1) || !pinned) return report;
  SwitchCounts before = SwitchesNow(rusage_who);
  for (int64_t i = 0; i < round_trips; ++i) {
    if (!ReadFull(in_fd, &token, 1) || !WriteFull(out_fd, &token, 1)) return report;
  }
  SwitchCounts d = SwitchesNow(rusage_who) - before;
  report.voluntary = d.voluntary;
  report.involuntary = d.involuntary;
  report.ok = 1;
  return report;
}

void PipeProcesses(benchmark::State& state, const Params& params) {
  Placement placement;
  std::string why = ChoosePlacement(GetString(params, "placement"), &placement);
  if (!why.empty()) return state.SkipWithError(why.c_str());
  const int64_t round_trips = state.max_iterations;

  PipePair pipes;
  if (!pipes.Open()) return state.SkipWithError("pipe2 failed");
  if (!PinSelfTo(placement.cpu_a)) {
    pipes.Close();
    return state.SkipWithError("cannot pin the parent process");
  }
  const pid_t parent = getpid();
  const pid_t child = fork();
  if (child < 0) {
    pipes.Close();
    RestoreAffinity();
    return state.SkipWithError("fork failed");
  }
  if (child == 0) {
    // Die with the parent (e.g. the agent SIGTERMs it) instead of lingering as an orphan.
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(1);
    close(pipes.to_partner[1]);
    close(pipes.to_main[0]);
    PartnerReport r = PartnerLoop(pipes.to_partner[0], pipes.to_main[1], round_trips, placement.cpu_b, RUSAGE_SELF);
    WriteFull(pipes.to_main[1], &r, sizeof r);
    _exit(r.ok ? 0 : 1);  // _exit: no atexit handlers, no stdio flush in the child
  }
  close(pipes.to_partner[0]), pipes.to_partner[0] = -1;
  close(pipes.to_main[1]), pipes.to_main[1] = -1;
  const int out_fd = pipes.to_partner[1], in_fd = pipes.to_main[0];

  std::string error;
  char token = 0;
  if (!ReadFull(in_fd, &token, 1) || token != 'r') error = "the child process could not pin itself or start";

  SwitchCounts mine;
  while (state.KeepRunningBatch(round_trips)) {  // one batch: exactly round_trips iterations
    if (!error.empty()) continue;
    SwitchCounts before = SwitchesNow(RUSAGE_SELF);
    auto t0 = Clock::now();
    for (int64_t i = 0; i < round_trips; ++i) {
      if (!WriteFull(out_fd, &token, 1) || !ReadFull(in_fd, &token, 1)) {
        error = "the child process stopped answering";
        break;
      }
    }
    auto t1 = Clock::now();
    mine = SwitchesNow(RUSAGE_SELF) - before;
    state.SetIterationTime(std::chrono::duration<double>(t1 - t0).count());
  }

  PartnerReport theirs;
  if (error.empty() && (!ReadFull(in_fd, &theirs, sizeof theirs) || !theirs.ok))
    error = "the child process did not report its switch counts";
  if (!error.empty()) kill(child, SIGKILL);
  pipes.Close();
  int status = 0;
  while (waitpid(child, &status, 0) < 0 && errno == EINTR) {
  }
  RestoreAffinity();
  if (error.empty() && !(WIFEXITED(status) && WEXITSTATUS(status) == 0)) error = "the child process failed";
  if (!error.empty()) return state.SkipWithError(("ctxswitch.pipe: " + error).c_str());

  const double switches = 2.0 * static_cast<double>(round_trips);
  const double voluntary = static_cast<double>(mine.voluntary + theirs.voluntary) / switches;
  const double involuntary = static_cast<double>(mine.involuntary + theirs.involuntary) / switches;
  state.counters["voluntary_ctxsw_per_op"] = voluntary;
  state.counters["involuntary_ctxsw_per_op"] = involuntary;
  state.counters["ctxsw_per_op"] = voluntary + involuntary;
  state.counters["syscalls_per_op"] = 2;
  state.counters["cpu_parent"] = placement.cpu_a;
  state.counters["cpu_child"] = placement.cpu_b;
  if (placement.name == "cross_core") state.counters["cross_core_smt_siblings"] = placement.smt_siblings;

  // Self-check: on one CPU every half round trip must switch to the other process, so both processes
  // together must count about one switch per op. The switch is voluntary when the writer then blocks in
  // read, and involuntary when the woken reader preempts the writer first (wakeup preemption; on Linux
  // 6.x about 40 % of them), so the check is on the sum. Far fewer means the op is not what this kernel
  // claims. Short calibration batches are skipped: the start-up handshake dominates them.
  if (placement.name == "same_core" && round_trips >= 1000 && voluntary + involuntary < 0.5) {
    std::string msg = "ctxswitch.pipe: self-check failed: same_core counted " +
                      std::to_string(voluntary + involuntary) + " context switches per switch, expected about 1";
    state.SkipWithError(msg.c_str());
  }
}

std::string PipeUnsupported(const Params& params) {
  Placement placement;
  std::string why = ChoosePlacement(GetString(params, "placement"), &placement);
  if (!why.empty()) return why;
  for (int cpu : {placement.cpu_a, placement.cpu_b}) {
    if (cpu >= 0 && !PinSelfTo(cpu)) {
      std::string msg = "cannot pin to CPU " + std::to_string(cpu) + ": " + std::strerror(errno);
      RestoreAffinity();
      return msg;
    }
  }
  RestoreAffinity();
  return "";
}

ParamSpec PlacementParam() {
  return ChoiceParam("placement", "same_core", {"same_core", "cross_core", "unpinned"},
                     "same_core: both tasks pinned to one CPU; cross_core: pinned to two different CPUs "
                     "(different physical cores when possible); unpinned: the scheduler decides");
}

KernelRegistrar pipe_switch({
    .spec =
        {
            .id = "ctxswitch.pipe",
            .title = "Context switch: pipe ping-pong between two processes",
            .family = "ctxswitch",
            .unit = "ns/op",
            .description =
                "Two processes (fork) pass a one-byte token back and forth over two pipes; each blocks in "
                "read until the other writes. One op is one context switch, i.e. half a round trip: per op "
                "1 switch, 1 write and 1 read. Voluntary and involuntary switches of both processes are "
                "counted with getrusage and reported per op; ctxsw_per_op (voluntary + involuntary) is about 1 "
                "and a same_core run that counts fewer than 0.5 fails its self-check.",
            .params = {PlacementParam()},
            .seed_reference =
                SeedReference{
                    .seed = "003",
                    .value = 4283,
                    .unit = "ns/op",
                    .machine = "2.8 GHz CPU, Linux 2.6.21, 2010s",
                    .params = {},
                    .note = "two SCHED_FIFO processes, pipe token, 10000 round trips timed with rdtsc, not "
                            "pinned (20000 switches in 85.7 ms)",
                },
        },
    .body = PipeProcesses,
    .manual_time = true,
    .ops_per_iteration = [](const Params&) { return 2.0; },
    .unsupported = PipeUnsupported,
});

}  // namespace
}  // namespace ctxbench
