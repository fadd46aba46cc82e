#include "measure.h"

#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <utility>

#include "host.h"
#include "json.h"
#include "list_json.h"
#include "reporter.h"

namespace ctxbench {
namespace {

using Run = benchmark::BenchmarkReporter::Run;

// Google Benchmark's own ceiling on iterations of one run.
constexpr double kMaxIterations = 1e9;
// Contract bounds on a block and on the short samples of one process.
constexpr int kMaxPerBlock = 1000;
constexpr int kMaxShortSamples = 100000;
// A cpu_bound kernel's sample is disturbed when its thread got less CPU time than this share of the wall.
constexpr double kMinCpuShare = 0.9;
constexpr double kEstimatorQuantile = 0.05;  // "p5"
// Each calibration probe times at least this long (or the whole --min-time when shorter), so the time per
// iteration it gives averages over many ops.
constexpr double kProbeTime = 0.002;
// Calibration probes of the short-sample plan; the least disturbed of them sizes the samples.
constexpr int kProbes = 3;
// A first probe whose one iteration lasts this many sample times (and set-ups) needs no other probe.
constexpr double kLongIterationSamples = 2;

// What one call of the benchmark body cost beside its timed part, recorded by the wrapper.
struct BodyCall {
  double wall_s;
  int64_t involuntary;  // involuntary context switches of this process during the call
};

struct BenchConfig {
  int repetitions;
  double min_time;     // used when iterations == 0 (Google Benchmark calibrates)
  int64_t iterations;  // > 0: every repetition runs exactly this many
  double warm_up;      // seconds of untimed warm-up before the first repetition
};

// Registers the kernel as the one benchmark, runs it, and returns its repetitions; `calls` gets one entry
// per call of the body (calibration and warm-up calls included, in order).
std::vector<Run> RunBench(const Kernel& kernel, const Params& params, const BenchConfig& config,
                          std::vector<BodyCall>* calls) {
  benchmark::ClearRegisteredBenchmarks();
  auto* bm = benchmark::RegisterBenchmark(kernel.spec.id.c_str(), [&kernel, &params, calls](benchmark::State& state) {
    const auto start = std::chrono::steady_clock::now();
    SwitchCounts before = SwitchesNow(RUSAGE_SELF);
    kernel.body(state, params);
    SwitchCounts d = SwitchesNow(RUSAGE_SELF) - before;
    calls->push_back({std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(), d.involuntary});
    if (state.error_occurred()) return;
    // Kernels that fork or run threads count their own switches; the rest get this process's.
    if (!state.counters.count("voluntary_ctxsw_per_op")) {
      double n = static_cast<double>(state.iterations());
      state.counters["voluntary_ctxsw_per_op"] = n > 0 ? static_cast<double>(d.voluntary) / n : 0.0;
      state.counters["involuntary_ctxsw_per_op"] = n > 0 ? static_cast<double>(d.involuntary) / n : 0.0;
    }
  });
  bm->Repetitions(config.repetitions)->ReportAggregatesOnly(false)->Unit(benchmark::kNanosecond);
  if (config.iterations > 0) bm->Iterations(config.iterations);
  else bm->MinTime(config.min_time);
  if (config.warm_up > 0) bm->MinWarmUpTime(config.warm_up);
  if (kernel.manual_time) bm->UseManualTime();
  else bm->UseRealTime();

  CollectingReporter reporter;
  benchmark::RunSpecifiedBenchmarks(&reporter, ".");  // the one benchmark registered above
  if (!reporter.error().empty()) {
    // Kernels flag "this host cannot do it" (e.g. too many threads) with an "unsupported: " prefix.
    const std::string prefix = "unsupported: ";
    const std::string& error = reporter.error();
    if (error.rfind(prefix, 0) == 0) throw MeasureError{true, kernel.spec.id + ": " + error.substr(prefix.size())};
    throw MeasureError{false, kernel.spec.id + ": " + error};
  }
  const auto& reps = reporter.repetitions();
  if (static_cast<int>(reps.size()) != config.repetitions)
    throw MeasureError{false, kernel.spec.id + ": expected " + std::to_string(config.repetitions) +
                                  " repetitions, got " + std::to_string(reps.size())};
  return reps;
}

// The involuntary switches above which a sample counts as disturbed. A kernel that keeps to itself has
// none in a typical sample (median 0): any one is the host's. A kernel whose own threads or processes
// preempt each other (a wake-up on the same CPU, more workers than CPUs) has a typical count of its own:
// only an excess of more than 3 sigma over it (Poisson) counts, so its own switching is never blamed on
// the host, at the price of seeing only heavy interference there (the agent's launch facts see the rest).
int64_t DisturbedAbove(const std::vector<BodyCall>& calls, size_t first) {
  std::vector<double> counts;
  for (size_t i = first; i < calls.size(); ++i) counts.push_back(static_cast<double>(calls[i].involuntary));
  if (counts.empty()) return 0;
  double typical = Quantile(counts, 0.5);
  return static_cast<int64_t>(std::floor(typical + 3 * std::sqrt(typical)));
}

// The repetitions summed up: a value and an op count per block, counters weighted by iterations.
struct Summary {
  std::vector<double> samples;
  std::vector<int64_t> iterations;
  std::vector<int64_t> disturbed;                                 // per block (short samples only)
  std::map<std::string, std::pair<double, double>> counter_sums;  // name -> (sum value*iters, sum iters)
  std::vector<double> cpu_ns;                                     // cpu_bound kernels: per run
  double cpu_total = 0, wall_total = 0, ops_total = 0;
};

Summary Summarise(const Kernel& kernel, const Params& params, const std::vector<Run>& runs,
                  const std::vector<BodyCall>& calls, int per_block, double ops) {
  const bool mb_per_s = kernel.spec.unit == "MB/s";
  const double bytes_per_op = mb_per_s && kernel.bytes_per_op ? kernel.bytes_per_op(params) : 0.0;
  if (mb_per_s && !(bytes_per_op > 0)) throw MeasureError{false, kernel.spec.id + ": unit MB/s without bytes per op"};
  // The body calls of the timed runs are the last ones (short samples have no calibration or warm-up calls).
  const size_t first_call = calls.size() >= runs.size() ? calls.size() - runs.size() : 0;
  const int64_t switch_limit = DisturbedAbove(calls, first_call);
  Summary s;
  std::vector<double> block;
  double block_iters = 0;
  int64_t block_disturbed = 0;
  for (size_t i = 0; i < runs.size(); ++i) {
    const Run& run = runs[i];
    double iters = static_cast<double>(run.iterations);
    double ns_per_op = run.real_accumulated_time * 1e9 / iters / ops;
    if (!std::isfinite(ns_per_op) || ns_per_op <= 0)
      throw MeasureError{false, kernel.spec.id + ": a repetition measured no time (" + FormatDouble(ns_per_op) + ")"};
    block.push_back(ns_per_op);
    block_iters += iters;
    for (const auto& [name, counter] : run.counters) {
      s.counter_sums[name].first += counter.value * iters;
      s.counter_sums[name].second += iters;
    }
    if (mb_per_s) {
      s.counter_sums["ns_per_op"].first += ns_per_op * iters;
      s.counter_sums["ns_per_op"].second += iters;
    }
    bool short_of_cpu = false;
    if (kernel.cpu_bound) {
      // Google Benchmark's cpu time is the measuring thread's (CLOCK_THREAD_CPUTIME_ID) over the same
      // timed iterations as the wall time.
      s.cpu_ns.push_back(run.cpu_accumulated_time * 1e9 / iters / ops);
      s.cpu_total += run.cpu_accumulated_time;
      s.wall_total += run.real_accumulated_time;
      short_of_cpu = run.cpu_accumulated_time < kMinCpuShare * run.real_accumulated_time;
    } else if (kernel.never_blocks) {
      auto share = run.counters.find("cpu_share");
      short_of_cpu = share != run.counters.end() && share->second.value < kMinCpuShare;
    }
    s.ops_total += iters * ops;
    if (first_call + i < calls.size() && (calls[first_call + i].involuntary > switch_limit || short_of_cpu))
      ++block_disturbed;
    if (static_cast<int>(block.size()) == per_block) {
      // Samples in unit: MB/s kernels give 10^6 bytes per second, with ns/op kept as a counter.
      double ns = Quantile(block, kEstimatorQuantile);
      s.samples.push_back(mb_per_s ? bytes_per_op / ns * 1e3 : ns);
      s.iterations.push_back(static_cast<int64_t>(std::llround(block_iters * ops)));
      s.disturbed.push_back(block_disturbed);
      block.clear();
      block_iters = 0;
      block_disturbed = 0;
    }
  }
  return s;
}

// The result JSON ($defs/run) of a summary.
std::string ResultJson(const Kernel& kernel, const Params& params, const MeasureArgs& args, const SamplePlan& plan,
                       double ops, const std::vector<Run>& runs, Summary& s, const char* harness_version) {
  const bool sampled = args.sample_time > 0;
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
  if (sampled) {
    // All timed wall time over all ops: what a long loop achieves here, the host's load included.
    double wall = 0;
    for (const Run& run : runs) wall += run.real_accumulated_time;
    s.counter_sums["sustained_ns_per_op"] = {wall * 1e9 / s.ops_total, 1.0};
  }
  // Counters: mean over repetitions, weighted by each repetition's iterations.
  w.Key("counters").BeginObject();
  for (const auto& [name, sums] : s.counter_sums) {
    double v = sums.second > 0 ? sums.first / sums.second : 0.0;
    if (!std::isfinite(v)) throw MeasureError{false, kernel.spec.id + ": counter " + name + " is not finite"};
    w.Key(name).Double(v);
  }
  if (kernel.cpu_bound && !s.cpu_ns.empty() && s.wall_total > 0) {
    w.Key("cpu_ns_per_op").Double(Quantile(s.cpu_ns, 0.5));
    w.Key("cpu_wall_ratio").Double(s.cpu_total / s.wall_total);
  }
  w.EndObject();
  if (sampled) {
    w.Key("sampling").BeginObject();
    w.Key("estimator").String("p5");
    w.Key("sample_time_s").Double(args.sample_time);
    w.Key("sample_ops").Int(static_cast<int64_t>(std::llround(static_cast<double>(plan.iterations) * ops)));
    w.Key("samples_per_repetition").Int(plan.per_block);
    w.Key("disturbed").BeginArray();
    for (int64_t d : s.disturbed) w.Int(d);
    w.EndArray();
    w.EndObject();
  }
  w.Key("harness").BeginObject();
  w.Key("name").String("google-benchmark");
  w.Key("version").String(harness_version);
  w.Key("min_time_s").Double(args.min_time);
  w.EndObject();
  w.EndObject();
  return w.str() + "\n";
}

}  // namespace

double Quantile(std::vector<double> values, double p) {
  std::sort(values.begin(), values.end());
  double pos = p * static_cast<double>(values.size() - 1);
  size_t lo = static_cast<size_t>(std::floor(pos));
  size_t hi = std::min(lo + 1, values.size() - 1);
  return values[lo] + (values[hi] - values[lo]) * (pos - static_cast<double>(lo));
}

SamplePlan PlanShortSamples(const MeasureArgs& args, double per_iteration, double setup_s, int64_t fixed_iterations) {
  SamplePlan plan;
  if (!(per_iteration > 0)) per_iteration = 1e-9;
  // At least --sample-time of timed work, and at least the set-up one call costs outside its timed part,
  // so set-up is at most half the wall time spent.
  double want = std::max(args.sample_time, std::max(0.0, setup_s));
  plan.iterations = fixed_iterations > 0 ? fixed_iterations
                                         : static_cast<int64_t>(std::min(kMaxIterations, std::max(1.0, std::ceil(want / per_iteration))));
  double sample_s = static_cast<double>(plan.iterations) * per_iteration;
  int cap = std::min(kMaxPerBlock, std::max(1, kMaxShortSamples / std::max(args.repetitions, 1)));
  double fit = std::floor(args.min_time / sample_s);
  plan.per_block = static_cast<int>(std::clamp(fit, 1.0, static_cast<double>(cap)));
  return plan;
}

std::string MeasureKernel(const Kernel& kernel, const Params& params, const MeasureArgs& args,
                          const char* harness_version) {
  const double ops = kernel.ops_per_iteration ? kernel.ops_per_iteration(params) : 1.0;
  // Google Benchmark's own warm-up: untimed runs before the first timed one.
  const double warm_up = std::min(0.5 * args.min_time, 0.1);
  std::vector<BodyCall> calls;
  SamplePlan plan;
  std::vector<Run> runs;
  if (args.sample_time > 0) {
    // Calibrated probes (after the warm-up) size every short sample: the least disturbed of a few gives
    // the time per iteration and the set-up per call, so one stall on a busy host does not shrink
    // samples to one op or stretch them to cover it. Then each repetition is a block.
    const double probe_time = std::min(args.min_time, std::max(args.sample_time, kProbeTime));
    double per_iteration = 0, setup = 0;
    int probed = 0;
    auto probe = [&](int n, double warm) {
      std::vector<Run> runs = RunBench(kernel, params, {n, probe_time, 0, warm}, &calls);
      for (int i = 0; i < n; ++i, ++probed) {
        const Run& run = runs[static_cast<size_t>(i)];
        double timed = run.real_accumulated_time, iters = static_cast<double>(std::max<int64_t>(run.iterations, 1));
        double call_setup = calls[calls.size() - n + static_cast<size_t>(i)].wall_s - timed;
        per_iteration = probed == 0 ? timed / iters : std::min(per_iteration, timed / iters);
        setup = probed == 0 ? call_setup : std::min(setup, call_setup);
      }
      return runs;
    };
    std::vector<Run> first = probe(1, warm_up);
    // One iteration far longer than a short sample (a gang of a thousand threads): every sample is that
    // one iteration whatever the other probes say, so they and the batch check would only cost time.
    const bool one_iteration = first[0].iterations == 1 &&
                               per_iteration >= kLongIterationSamples * std::max(args.sample_time, setup);
    if (!one_iteration) probe(kProbes - 1, 0);
    plan = PlanShortSamples(args, per_iteration, setup);
    // A kernel that runs its loop in batches (KeepRunningBatch) times whole batches: one check run shows
    // the iterations a short sample really gets, and the blocks are sized from those.
    if (!one_iteration) {
      std::vector<Run> check = RunBench(kernel, params, {1, 0, plan.iterations, 0}, &calls);
      if (check[0].iterations > plan.iterations)
        plan = PlanShortSamples(args, per_iteration, 0, check[0].iterations);
    }
    calls.clear();
    runs = RunBench(kernel, params, {args.repetitions * plan.per_block, 0, plan.iterations, 0}, &calls);
  } else {
    runs = RunBench(kernel, params, {args.repetitions, args.min_time, 0, warm_up}, &calls);
  }
  benchmark::Shutdown();
  Summary s = Summarise(kernel, params, runs, calls, plan.per_block, ops);
  return ResultJson(kernel, params, args, plan, ops, runs, s, harness_version);
}

}  // namespace ctxbench
