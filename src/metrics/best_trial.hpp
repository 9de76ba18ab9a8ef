#pragma once
// The one rule for a sweep's best trial, used by `trainrt results` and `trainrt plot` of a sweep
// and by the Python ResultGrid.get_best_result: each trial scored from the numbers its rows
// reported for the metric (result.jsonl), the best score wins, the first trial on a tie.
#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "metrics/metric_series.hpp"
#include "runlog/sweep_record.hpp"

namespace trainrt::metrics {

// Which of a trial's values scores it (Ray's get_best_result scopes): the last; the mean of all,
// of the last 5 or of the last 10; or the best of all ("all").
enum class Scope { last, avg, last_5_avg, last_10_avg, all };

// The scope Ray names `name` ("last", "avg", "last-5-avg", "last-10-avg", "all"); ConfigError
// naming the accepted ones otherwise.
Scope scope_named(const std::string& name);

// A trial's score under `scope`; none when it reported no value.
std::optional<double> trial_score(const std::vector<MetricPoint>& series, bool maximize, Scope scope);

struct BestTrial {
    std::size_t index = 0;  // into the record's trials
    double score = 0;
};

// The trial of `state` (whose runs are SWEEP_DIR/<name>) with the best score for `metric`; none
// when no trial reported it. `mode`: "max" or "min" (ConfigError otherwise).
std::optional<BestTrial> best_trial(const std::string& sweep_dir, const runlog::SweepState& state,
                                    const std::string& metric, const std::string& mode, Scope scope);

}  // namespace trainrt::metrics
