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
#include "registry.h"
#include "reporter.h"

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
#ifdef CTXBENCH_BENCHMARK_VERSION
constexpr const char* kHarnessVersion = CTXBENCH_BENCHMARK_VERSION;  // from CMake's find_package(benchmark)
#else
constexpr const char* kHarnessVersion = "unknown";
#endif

const char* kUsage =
    "usage: ctxbench-kernels-cpp --list | --run ID [--param NAME=VALUE]... [--repetitions N] "
    "[--min-time SECONDS]";

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
  int repetitions = kDefaultRepetitions;
  double min_time = kDefaultMinTime;
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

double ParseMinTime(const std::string& text) {
  char* end = nullptr;
  errno = 0;
  double v = text.empty() ? NAN : std::strtod(text.c_str(), &end);
  if (text.empty() || end != text.c_str() + text.size() || !std::isfinite(v) || errno == ERANGE ||
      text.find_first_of("xXnNiI \t") != std::string::npos)
    Fail(kExitBadArgs, "--min-time: '" + text + "' is not a number of seconds");
  if (v <= 0 || v > kMaxMinTime)
    Fail(kExitBadArgs, "--min-time: " + text + " must be > 0 and <= " + std::to_string(static_cast<int>(kMaxMinTime)) + " seconds");
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

// Runs the kernel's one benchmark under Google Benchmark and returns its repetitions; a kernel error
// or a missing repetition ends the process (Fail).
std::vector<benchmark::BenchmarkReporter::Run> Measure(const Kernel& kernel, const Params& params,
                                                       const RunArgs& args) {
  auto* bm = benchmark::RegisterBenchmark(kernel.spec.id.c_str(), [&kernel, &params](benchmark::State& state) {
    SwitchCounts before = SwitchesNow(RUSAGE_SELF);
    kernel.body(state, params);
    if (state.error_occurred()) return;
    // Kernels that fork or run threads count their own switches; the rest get this process's.
    if (!state.counters.count("voluntary_ctxsw_per_op")) {
      SwitchCounts d = SwitchesNow(RUSAGE_SELF) - before;
      double n = static_cast<double>(state.iterations());
      state.counters["voluntary_ctxsw_per_op"] = n > 0 ? static_cast<double>(d.voluntary) / n : 0.0;
      state.counters["involuntary_ctxsw_per_op"] = n > 0 ? static_cast<double>(d.involuntary) / n : 0.0;
    }
  });
  bm->Repetitions(args.repetitions)
      ->ReportAggregatesOnly(false)
      ->MinTime(args.min_time)
      // Google Benchmark's own warm-up: untimed runs before the first repetition.
      ->MinWarmUpTime(std::min(0.5 * args.min_time, 0.1))
      ->Unit(benchmark::kNanosecond);
  if (kernel.manual_time) bm->UseManualTime();
  else bm->UseRealTime();

  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, ".");  // the one benchmark registered above
  benchmark::Shutdown();
  if (!reporter.error().empty()) {
    // Kernels flag "this host cannot do it" (e.g. too many threads) with an "unsupported: " prefix.
    const std::string prefix = "unsupported: ";
    const std::string& error = reporter.error();
    if (error.rfind(prefix, 0) == 0) Fail(kExitUnsupported, kernel.spec.id + ": " + error.substr(prefix.size()));
    Fail(kExitFailed, kernel.spec.id + ": " + error);
  }
  const auto& reps = reporter.repetitions();
  if (static_cast<int>(reps.size()) != args.repetitions)
    Fail(kExitFailed, kernel.spec.id + ": expected " + std::to_string(args.repetitions) + " repetitions, got " +
                          std::to_string(reps.size()));

  return reps;
}

// The repetitions summed up: a sample and an op count each, counters weighted by iterations.
struct Summary {
  std::vector<double> samples;
  std::vector<int64_t> iterations;
  std::map<std::string, std::pair<double, double>> counter_sums;  // name -> (sum value*iters, sum iters)
  std::vector<double> cpu_ns;                                     // cpu_bound kernels: per repetition
  double cpu_total = 0, wall_total = 0;
};

Summary Summarise(const Kernel& kernel, const Params& params,
                  const std::vector<benchmark::BenchmarkReporter::Run>& reps, double ops) {
  const bool mb_per_s = kernel.spec.unit == "MB/s";
  const double bytes_per_op = mb_per_s && kernel.bytes_per_op ? kernel.bytes_per_op(params) : 0.0;
  if (mb_per_s && !(bytes_per_op > 0)) Fail(kExitFailed, kernel.spec.id + ": unit MB/s without bytes per op");
  Summary s;
  for (const auto& run : reps) {
    double iters = static_cast<double>(run.iterations);
    double ns_per_op = run.real_accumulated_time * 1e9 / iters / ops;
    if (!std::isfinite(ns_per_op) || ns_per_op <= 0)
      Fail(kExitFailed, kernel.spec.id + ": a repetition measured no time (" + FormatDouble(ns_per_op) + ")");
    // MB/s kernels: 10^6 bytes per second, with ns/op kept as a counter (same time, same ops).
    s.samples.push_back(mb_per_s ? bytes_per_op / ns_per_op * 1e3 : ns_per_op);
    s.iterations.push_back(static_cast<int64_t>(std::llround(iters * ops)));
    for (const auto& [name, counter] : run.counters) {
      s.counter_sums[name].first += counter.value * iters;
      s.counter_sums[name].second += iters;
    }
    if (mb_per_s) {
      s.counter_sums["ns_per_op"].first += ns_per_op * iters;
      s.counter_sums["ns_per_op"].second += iters;
    }
    if (kernel.cpu_bound) {
      // Google Benchmark's cpu time is the measuring thread's (CLOCK_THREAD_CPUTIME_ID) over the same
      // timed iterations as the wall time.
      s.cpu_ns.push_back(run.cpu_accumulated_time * 1e9 / iters / ops);
      s.cpu_total += run.cpu_accumulated_time;
      s.wall_total += run.real_accumulated_time;
    }
  }

  return s;
}

// The result JSON ($defs/run) of a summary.
std::string ResultJson(const Kernel& kernel, const Params& params, const RunArgs& args, Summary& s) {
  JsonWriter w;
  w.BeginObject();
  w.Key("kernel").String(kernel.spec.id);
  w.Key("params").BeginObject();
  for (const ParamSpec& p : kernel.spec.params) {
    w.Key(p.name);
    WriteParamValue(w, params.at(p.name));
  }
  w.EndObject();
  w.Key("unit").String(kernel.spec.unit);
  w.Key("samples").BeginArray();
  for (double v : s.samples) w.Double(v);
  w.EndArray();
  w.Key("iterations").BeginArray();
  for (int64_t i : s.iterations) w.Int(i);
  w.EndArray();
  // Counters: mean over repetitions, weighted by each repetition's iterations.
  w.Key("counters").BeginObject();
  for (const auto& [name, sums] : s.counter_sums) {
    double v = sums.second > 0 ? sums.first / sums.second : 0.0;
    if (!std::isfinite(v)) Fail(kExitFailed, kernel.spec.id + ": counter " + name + " is not finite");
    w.Key(name).Double(v);
  }
  if (kernel.cpu_bound && !s.cpu_ns.empty() && s.wall_total > 0) {
    std::sort(s.cpu_ns.begin(), s.cpu_ns.end());
    size_t n = s.cpu_ns.size();
    double median = n % 2 ? s.cpu_ns[n / 2] : 0.5 * (s.cpu_ns[n / 2 - 1] + s.cpu_ns[n / 2]);
    w.Key("cpu_ns_per_op").Double(median);
    w.Key("cpu_wall_ratio").Double(s.cpu_total / s.wall_total);
  }
  w.EndObject();
  w.Key("harness").BeginObject();
  w.Key("name").String("google-benchmark");
  w.Key("version").String(kHarnessVersion);
  w.Key("min_time_s").Double(args.min_time);
  w.EndObject();
  w.EndObject();
  return w.str() + "\n";
}

// Runs the kernel under Google Benchmark and returns the result JSON.
std::string RunKernel(const Kernel& kernel, const Params& params, const RunArgs& args) {
  double ops = kernel.ops_per_iteration ? kernel.ops_per_iteration(params) : 1.0;
  Summary s = Summarise(kernel, params, Measure(kernel, params, args), ops);
  return ResultJson(kernel, params, args, s);
}

// The command line, read (bad arguments end the process with exit 2).
struct CommandLine {
  bool help = false, list = false, run = false, saw_reps = false, saw_min_time = false;
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
      c.args.repetitions = ParseRepetitions(take_value());
    } else if (flag == "--min-time") {
      if (c.saw_min_time) Fail(kExitBadArgs, "--min-time given twice");
      c.saw_min_time = true;
      c.args.min_time = ParseMinTime(take_value());
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
    if (!c.args.params.empty() || c.saw_reps || c.saw_min_time) Fail(kExitBadArgs, "--list takes no other flags");
    WriteStdout(STDOUT_FILENO, ListJson());
    return 0;
  }
  if (!c.run) Fail(kExitBadArgs, std::string("nothing to do; ") + kUsage);

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
  std::string json = RunKernel(*kernel, params, c.args);
  WriteStdout(result_fd, json);
  return 0;
}

}  // namespace
}  // namespace ctxbench

int main(int argc, char** argv) {
  try {
    return ctxbench::Main(argc, argv);
  } catch (const std::exception& e) {
    ctxbench::Fail(1, std::string("internal error: ") + e.what());
  }
}
