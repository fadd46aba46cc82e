// How one `--run` measures: Google Benchmark repetitions, long (one sample each) or short (blocks of
// samples shorter than a scheduler slice, kernels/contract/README.md "Short samples"), summed up into the
// kernel JSON of DESIGN 3.1.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "registry.h"

namespace ctxbench {

struct MeasureArgs {
  int repetitions = 5;
  double min_time = 0.2;
  double sample_time = 0;  // 0: one long sample per repetition (no --sample-time)
};

// Thrown for a kernel error; `unsupported` says the host cannot run it (exit 3), else it failed (exit 1).
struct MeasureError {
  bool unsupported;
  std::string message;
};

// The short-sample plan: every short sample times `iterations` benchmark iterations, and a repetition is
// a block of `per_block` of them.
struct SamplePlan {
  int64_t iterations = 0;
  int per_block = 1;
};

// The plan from calibration: seconds of timed work per benchmark iteration, and seconds of set-up one
// call of the body costs outside its timed part. `fixed_iterations` > 0 takes that many iterations per
// sample instead of sizing them (a batching kernel's real count).
SamplePlan PlanShortSamples(const MeasureArgs& args, double per_iteration_s, double setup_s,
                            int64_t fixed_iterations = 0);

// The p-th quantile (0..1) of `values`, linear between order statistics (numpy's default); values non-empty.
double Quantile(std::vector<double> values, double p);

// Runs the kernel and returns its result JSON (one line, newline-terminated). Throws MeasureError.
std::string MeasureKernel(const Kernel& kernel, const Params& params, const MeasureArgs& args,
                          const char* harness_version);

}  // namespace ctxbench
