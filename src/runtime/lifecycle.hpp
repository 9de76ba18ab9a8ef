#pragma once
// The run's life as rank 0 sees it: the failure budget checked at every start, the stop record
// and self-requeue after a stop. Rank 0 only: it writes events.jsonl. What happens between steps
// (relaunch, exclusions, requeue after a crash) is the supervisor's (src/supervise/).
#include <cstdint>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "runlog/history.hpp"
#include "runtime/stop_coordinator.hpp"
#include "trainrt/context.hpp"

namespace trainrt::runtime {

// Before the start event: records an attempt that ended without a record as a failure, then
// throws FailureLimitError (after a final record) when the failures exceed max_failures.
runlog::History begin_attempt(const std::string& run_dir, const Context& context,
                             const Settings& settings);

struct StopSummary {
    StopRequest request;
    std::int64_t iteration = 0;          // _training_iteration of the last report
    std::string checkpoint;              // the checkpoint committed after the request ("" if none)
    std::vector<std::int64_t> boundaries_by_rank;
};

// After the stop checkpoint committed: the stop event, then the requeue (when the reason calls
// for one and [failure] requeue = auto). Returns the exit code for every rank.
int end_stopped(const Context& context, const Settings& settings,
                const StopSummary& stop);

}  // namespace trainrt::runtime
