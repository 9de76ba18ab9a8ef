#pragma once
// Schedulers whose trial steps end at a target (PBT's boundaries, HyperBand's milestones): what a
// step runs to, where it met its target, and whether the trial's own [stop] criteria ended it.
// By epoch a step trains to train.epochs = target and ends there (a finished run with its
// checkpoint committed); by training_iteration it ends at a pause point ([stop] pause_by,
// pause_at; runtime/scheduler_pause.hpp) whose verdict, stop, is written before the step starts,
// so the step ends at its first report of the metric there, as a Ray trial stops in its report().
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metric_series.hpp"
#include "runtime/stop_criteria.hpp"

namespace trainrt::tune {

// The arguments of a step to `target` (> 0), trials compared by `metric`.
std::vector<std::string> step_to_target_args(bool by_iteration, std::int64_t target, const std::string& metric);

// By training_iteration: the verdict at `target` in `run_dir` says stop (written once: a verdict
// there is never anything else).
void stop_at_target(const std::string& run_dir, std::int64_t target);

// Where a trial's step that ended done met its `target`, from its rows of the metric: by epoch,
// the last row of epoch `target` (the step trained to train.epochs = target); by iteration, the
// first row whose training_iteration reached `target` (the step paused there, at its first report
// of the metric). nullopt when no row did: the step ended before its target.
struct StepPoint {
    std::int64_t time = 0;  // the row's epoch or training_iteration
    double value = 0;       // its metric
};
std::optional<StepPoint> step_point(const std::vector<metrics::MetricPoint>& series, std::int64_t target,
                                    bool by_iteration);

// Whether the last row of `run_dir`'s results meets `criteria` (the base job's own [stop]
// criteria: the run ended there as finished, whatever the scheduler's targets).
bool met_own_criteria(const std::vector<runtime::StopCriterion>& criteria, const std::string& run_dir);

}  // namespace trainrt::tune
