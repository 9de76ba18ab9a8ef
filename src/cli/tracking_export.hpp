#pragma once
// Sending a run directory to an experiment tracker: `trainrt results RUN_DIR --export ...` and
// [tracking]'s export when a job step ends (registered as the runtime's run-end hook by main).
// tracking_plan.hpp decides what is sent; trainrt._tracking (Python, through the Python component)
// speaks to MLflow's and TensorBoard's libraries.
#include <cstddef>
#include <string>
#include <vector>

#include "cli/tracking_plan.hpp"
#include "config/settings.hpp"

namespace trainrt::cli {

struct ExportOutcome {
    std::string run_id;  // MLflow's run id, or the TensorBoard directory written
    std::size_t points = 0;
    std::int64_t last_iteration = 0;
};

// Sends the rows `target` does not have yet and records them in the run's kTrackingState file.
// ConfigError when the tracker's library is missing, WorkloadError with its text when it fails.
ExportOutcome export_run(const std::string& run_dir, const TrackingTarget& target);

// [tracking]'s destinations (none when both are empty); tensorboard_dir gets run.name appended.
std::vector<TrackingTarget> configured_targets(const Settings& settings);

// The run-end hook: each configured destination in turn, a failure a warning naming the retry.
void export_at_run_end(const Settings& settings, const std::string& run_dir);

}  // namespace trainrt::cli
