// ctxbench-kernels-cpp: the kernel CLI of DESIGN 3.1.
//
//   ctxbench-kernels-cpp --list
//   ctxbench-kernels-cpp --run ID [--param NAME=VALUE]... [--repetitions N] [--min-time SECONDS]
//
// stdout carries exactly one JSON document; anything Google Benchmark might print is kept off it.
// Exit 0 ok, 1 the kernel failed (its self-check included), 2 bad arguments, 3 cannot run on this host;
// every non-zero exit writes exactly one line to stderr.
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <exception>
#include <map>
#include <string>
#include <vector>

#include "host.h"
#include "json.h"
#include "list_json.h"
#include "measure.h"
#include "registry.h"

namespace ctxbench {
namespace {

constexpr int kExitFailed = 1;
constexpr int kExitBadArgs = 2;
constexpr int kExitUnsupported = 3;
// The defaults and limits every kernel executable shares (kernels/contract/README.md "Defaults and limits").
constexpr int kDefaultRepetitions = 5;
constexpr int kMaxRepetitions = 1000;
constexpr double kDefaultMinTime = 0.2;
constexpr double kMaxMinTime = 60;
constexpr double kMaxSampleTime = 1;
#ifdef CTXBENCH_BENCHMARK_VERSION
constexpr const char* kHarnessVersion = CTXBENCH_BENCHMARK_VERSION;  // from CMake's find_package(benchmark)
#else
constexpr const char* kHarnessVersion = "unknown";
#endif

const char* kUsage =
    "usage: ctxbench-kernels-cpp --list | --run ID [--param NAME=VALUE]... [--repetitions N] "
    "[--min-time SECONDS] [--sample-time SECONDS]";

// Writes one line to stderr (control characters flattened so it stays one line) and exits.
[[noreturn]] void Fail(int code, std::string message) {
  for (char& c : message)
    if (static_cast<unsigned char>(c) < 0x20 || c == 0x7f) c = '?';
  message = "ctxbench-kernels-cpp: " + message + "\n";
  (void)!write(STDERR_FILENO, message.data(), message.size());
  _exit(code);
}

void WriteStdout(int fd, const std::string& text) {
  if (!WriteFull(fd, text.data(), text.size())) Fail(kExitFailed, "cannot write the result to stdout");
}

struct RunArgs {
  std::string kernel_id;
  std::vector<std::pair<std::string, std::string>> params;  // NAME, VALUE as given
  MeasureArgs measure{kDefaultRepetitions, kDefaultMinTime, 0};
};

int ParseRepetitions(const std::string& text) {
  bool digits = !text.empty() && text.size() <= 9;
  for (char c : text) digits = digits && c >= '0' && c <= '9';
  if (!digits) Fail(kExitBadArgs, "--repetitions: '" + text + "' is not a whole number");
  int n = std::atoi(text.c_str());
  if (n < 1 || n > kMaxRepetitions)
    Fail(kExitBadArgs, "--repetitions: " + text + " is out of range [1, " + std::to_string(kMaxRepetitions) + "]");
  return n;
}

// A positive number of seconds at most `max` for `flag`.
double ParseSeconds(const std::string& flag, const std::string& text, double max) {
  char* end = nullptr;
  errno = 0;
  double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || errno == ERANGE ||
      text.find_first_of("xXnNiI \t") != std::string::npos)
    Fail(kExitBadArgs, flag + ": '" + text + "' is not a number of seconds");
  if (v <= 0 || v > max)
    Fail(kExitBadArgs, flag + ": " + text + " must be > 0 and <= " + FormatDouble(max) + " seconds");
  return v;
}

// Typed params for `kernel`: every spec'd param, given values parsed and checked, defaults filled in.
Params ResolveParams(const Kernel& kernel, const std::vector<std::pair<std::string, std::string>>& given) {
  Params params;
  for (const auto& [name, text] : given) {
    const ParamSpec* spec = nullptr;
    for (const ParamSpec& p : kernel.spec.params)
      if (p.name == name) spec = &p;
    if (!spec) {
      std::string known;
      for (const ParamSpec& p : kernel.spec.params) known += (known.empty() ? "" : ", ") + p.name;
      Fail(kExitBadArgs, "unknown parameter '" + name + "' for kernel " + kernel.spec.id + " (it takes: " +
                             (known.empty() ? "none" : known) + ")");
    }
    if (params.count(name)) Fail(kExitBadArgs, "parameter '" + name + "' given twice");
    std::string why;
    std::optional<ParamValue> v = spec->Parse(text, &why);
    if (!v) Fail(kExitBadArgs, why);
    params[name] = *v;
  }
  for (const ParamSpec& p : kernel.spec.params)
    if (!params.count(p.name)) params[p.name] = p.default_value;
  return params;
}

// The command line, read (bad arguments end the process with exit 2).
struct CommandLine {
  bool help = false, list = false, run = false, saw_reps = false, saw_min_time = false, saw_sample_time = false;
  RunArgs args;
};

CommandLine ParseCommandLine(const std::vector<std::string>& a) {
  CommandLine c;
  for (size_t i = 0; i < a.size(); ++i) {
    std::string flag = a[i], value;
    bool inline_value = false;
    if (flag.rfind("--", 0) == 0) {
      size_t eq = flag.find('=');
      if (eq != std::string::npos) {
        value = flag.substr(eq + 1);
        flag = flag.substr(0, eq);
        inline_value = true;
      }
    }
    auto take_value = [&]() -> std::string {
      if (inline_value) return value;
      if (i + 1 >= a.size()) Fail(kExitBadArgs, flag + " needs a value");
      return a[++i];
    };
    if (flag == "--list") {
      if (inline_value) Fail(kExitBadArgs, "--list takes no value");
      c.list = true;
    } else if (flag == "--help" || flag == "-h") {
      c.help = true;
      return c;
    } else if (flag == "--run") {
      if (c.run) Fail(kExitBadArgs, "--run given twice");
      c.run = true;
      c.args.kernel_id = take_value();
    } else if (flag == "--param") {
      std::string nv = take_value();
      size_t eq = nv.find('=');
      if (eq == std::string::npos || eq == 0) Fail(kExitBadArgs, "--param: '" + nv + "' is not NAME=VALUE");
      c.args.params.emplace_back(nv.substr(0, eq), nv.substr(eq + 1));
    } else if (flag == "--repetitions") {
      if (c.saw_reps) Fail(kExitBadArgs, "--repetitions given twice");
      c.saw_reps = true;
      c.args.measure.repetitions = ParseRepetitions(take_value());
    } else if (flag == "--min-time") {
      if (c.saw_min_time) Fail(kExitBadArgs, "--min-time given twice");
      c.saw_min_time = true;
      c.args.measure.min_time = ParseSeconds("--min-time", take_value(), kMaxMinTime);
    } else if (flag == "--sample-time") {
      if (c.saw_sample_time) Fail(kExitBadArgs, "--sample-time given twice");
      c.saw_sample_time = true;
      c.args.measure.sample_time = ParseSeconds("--sample-time", take_value(), kMaxSampleTime);
    } else {
      Fail(kExitBadArgs, "unknown argument '" + a[i] + "'; " + kUsage);
    }
  }
  return c;
}

// Points stdout at /dev/null, so whatever the harness or a kernel prints cannot mix with the result,
// and returns a descriptor of the real stdout for the result alone.
int TakeStdout() {
  fflush(stdout);
  int result_fd = dup(STDOUT_FILENO);
  int devnull = open("/dev/null", O_WRONLY | O_CLOEXEC);
  if (result_fd < 0 || devnull < 0 || dup2(devnull, STDOUT_FILENO) < 0)
    Fail(kExitFailed, std::string("cannot set up stdout: ") + std::strerror(errno));
  fcntl(result_fd, F_SETFD, FD_CLOEXEC);
  close(devnull);

  return result_fd;
}

// Google Benchmark reads its flags' defaults from BENCHMARK_* environment variables; pin the ones
// that could change what is measured or reported so only our arguments decide.
void InitBenchmark() {
  std::vector<std::string> gb_args = {"ctxbench-kernels-cpp",
                                      "--benchmark_filter=.",
                                      "--benchmark_enable_random_interleaving=false",
                                      "--benchmark_report_aggregates_only=false",
                                      "--benchmark_display_aggregates_only=false",
                                      "--benchmark_perf_counters=",
                                      "--benchmark_out=",
                                      "--benchmark_counters_tabular=false",
                                      "--v=0"};
  std::vector<char*> gb_argv;
  for (auto& s : gb_args) gb_argv.push_back(s.data());
  int gb_argc = static_cast<int>(gb_argv.size());
  benchmark::Initialize(&gb_argc, gb_argv.data());

}

int Main(int argc, char** argv) {
  AllowedCpus();  // remember the affinity we started with, before any kernel pins itself
  std::vector<std::string> a(argv + 1, argv + argc);
  if (a.empty()) Fail(kExitBadArgs, std::string("no arguments; ") + kUsage);
  CommandLine c = ParseCommandLine(a);
  if (c.help) {
    std::string text = std::string(kUsage) + "\n";
    (void)!write(STDOUT_FILENO, text.data(), text.size());
    return 0;
  }
  if (c.list && c.run) Fail(kExitBadArgs, "--list and --run cannot be combined");
  if (c.list) {
    if (!c.args.params.empty() || c.saw_reps || c.saw_min_time || c.saw_sample_time) Fail(kExitBadArgs, "--list takes no other flags");
    WriteStdout(STDOUT_FILENO, ListJson());
    return 0;
  }
  if (!c.run) Fail(kExitBadArgs, std::string("nothing to do; ") + kUsage);
  if (c.args.measure.sample_time > c.args.measure.min_time)
    Fail(kExitBadArgs, "--sample-time: " + FormatDouble(c.args.measure.sample_time) + " s is longer than --min-time (" +
                           FormatDouble(c.args.measure.min_time) + " s): a short sample is a part of a repetition");

  const Kernel* kernel = FindKernel(c.args.kernel_id);
  if (!kernel) Fail(kExitBadArgs, "unknown kernel id '" + c.args.kernel_id + "' (see --list)");
  Params params = ResolveParams(*kernel, c.args.params);
  if (kernel->invalid) {
    std::string why = kernel->invalid(params);
    if (!why.empty()) Fail(kExitBadArgs, kernel->spec.id + ": " + why);
  }
  if (kernel->unsupported) {
    std::string why = kernel->unsupported(params);
    if (!why.empty()) Fail(kExitUnsupported, kernel->spec.id + ": " + why);
  }

  int result_fd = TakeStdout();
  InitBenchmark();
  std::string json;
  try {
    json = MeasureKernel(*kernel, params, c.args.measure, kHarnessVersion);
  } catch (const MeasureError& e) {
    Fail(e.unsupported ? kExitUnsupported : kExitFailed, e.message);
  }
  WriteStdout(result_fd, json);
  return 0;
}

}  // namespace
}  // namespace ctxbench

namespace {

// Every launch measures with its stack at the same offset within a page. Linux places a process's stack
// top at a random offset inside a page (and argv and the environment move it further), and the ops of
// the fastest kernels cost 4, 5 or 6 cycles depending on where their frames fall (docs/fidelity.md
// "Short samples": 4K aliasing between the stack and the loop's other addresses): without this, a
// run's figure depended on which layouts its launches drew. Heap, mmap and code bases move by whole
// pages, so the stack's offset is the part of the layout that changes from launch to launch.
constexpr uintptr_t kStackPageOffset = 0x800;

int MainAtFixedStackOffset(int argc, char** argv) {
  try {
    return ctxbench::Main(argc, argv);
  } catch (const std::exception& e) {
    ctxbench::Fail(1, std::string("internal error: ") + e.what());
  }
}

}  // namespace

int main(int argc, char** argv) {
  const auto sp = reinterpret_cast<uintptr_t>(__builtin_frame_address(0));
  const size_t pad = ((sp - kStackPageOffset) & 0xfff) + 1;  // 1 ... 4096 bytes down to the offset
  volatile char* below = static_cast<char*>(__builtin_alloca(pad));
  below[0] = 0;  // keep the allocation
  return MainAtFixedStackOffset(argc, argv);
}
