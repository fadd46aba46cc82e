// A Google Benchmark reporter that prints nothing: it keeps each repetition's raw run (aggregates
// such as mean/median/stddev are dropped) so the CLI can print the kernel JSON itself.
#pragma once

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

namespace ctxbench {

class CollectingReporter : public benchmark::BenchmarkReporter {
 public:
  bool ReportContext(const Context&) override { return true; }
  void ReportRuns(const std::vector<Run>& runs) override;

  const std::vector<Run>& repetitions() const { return repetitions_; }
  // First error a run reported (state.SkipWithError), empty if none.
  const std::string& error() const { return error_; }

 private:
  std::vector<Run> repetitions_;
  std::string error_;
};

}  // namespace ctxbench
