#pragma once
// One reported metric of a run, row by row (result.jsonl): what a sweep reads of each trial, its
// scheduler (the value at an epoch, the last one), `trainrt results` of a sweep (the best one)
// and `trainrt plot` of a sweep (the curve).
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace trainrt::metrics {

struct MetricPoint {
    std::optional<double> epoch;      // the row's epoch, when it reported one
    std::optional<double> iteration;  // its _training_iteration
    double value = 0;
};

// The rows of run_dir's result.jsonl that reported `metric` as a number, in file order; empty
// when the file is absent. StorageError when it exists but cannot be read.
std::vector<MetricPoint> metric_series(const std::string& run_dir, const std::string& metric);

std::optional<double> last_value(const std::vector<MetricPoint>& series);
// The last value reported at `epoch`.
std::optional<double> value_at_epoch(const std::vector<MetricPoint>& series, std::int64_t epoch);
std::optional<double> best_value(const std::vector<MetricPoint>& series, bool maximize);

}  // namespace trainrt::metrics
