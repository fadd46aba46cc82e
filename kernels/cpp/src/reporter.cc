#include "reporter.h"

namespace ctxbench {

void CollectingReporter::ReportRuns(const std::vector<Run>& runs) {
  for (const Run& run : runs) {
    if (run.error_occurred) {
      if (error_.empty()) error_ = run.error_message.empty() ? "kernel reported an error" : run.error_message;
      continue;
    }
    if (run.run_type == Run::RT_Iteration) repetitions_.push_back(run);
  }
}

}  // namespace ctxbench
