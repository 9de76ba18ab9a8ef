#pragma once
// [stop] criteria, Ray's RunConfig(stop={"metric": value, ...}): a run ends as finished at the
// first report where any reported value reaches its threshold (result[metric] >= value, as Ray's
// dict stopper). training_iteration and time_total_s are the report count and the run's training
// seconds, as in Ray's results.
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "config/settings.hpp"
#include "trainrt/metrics.hpp"

namespace trainrt::runtime {

struct StopCriterion {
    std::string metric;
    double threshold = 0;
};

// ConfigError naming the key for an item that is not METRIC>=NUMBER.
std::vector<StopCriterion> stop_criteria(const StopSettings& settings);

// "accuracy = 0.91 >= 0.9" for the first criterion the report meets; nullopt when none.
std::optional<std::string> criterion_met(const std::vector<StopCriterion>& criteria, const Metrics& row,
                                         std::int64_t training_iteration, double time_total_s);

}  // namespace trainrt::runtime
